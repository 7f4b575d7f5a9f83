package snapshot

import (
	"encoding/hex"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/formats/serdejson"
	"lukechampine.com/blake3"
)

// AppendJSON appends the compact serde_json encoding of s (all fields as
// they are, including snapshot_id and signature) to dst.
func (s *Snapshot) AppendJSON(dst []byte) ([]byte, error) {
	return s.appendJSON(dst, serdejson.Zmij)
}

// appendJSON is AppendJSON with the floats of era.
func (s *Snapshot) appendJSON(dst []byte, era serdejson.Era) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	w := serdejson.NewWriter(dst)
	w.SetEra(era)
	s.write(w)
	return w.Bytes(), nil
}

// MarshalCompact returns the compact encoding of s (serde_json::to_string).
func (s *Snapshot) MarshalCompact() ([]byte, error) {
	return s.AppendJSON(nil)
}

// MarshalFile returns the stored and published file form of s: pretty JSON
// (serde_json::to_string_pretty), no trailing newline.
func (s *Snapshot) MarshalFile() ([]byte, error) {
	b, err := s.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	return serdejson.Pretty(b), nil
}

// CanonicalBody returns the bytes snapshot_id is the hash of: the compact
// encoding with snapshot_id set to "" and signature to null.
func (s *Snapshot) CanonicalBody() ([]byte, error) {
	return s.canonicalBody(serdejson.Zmij)
}

func (s *Snapshot) canonicalBody(era serdejson.Era) ([]byte, error) {
	body := *s
	body.SnapshotID = ""
	body.Signature = nil
	return body.appendJSON(nil, era)
}

// ComputeID returns the snapshot id of s's body: lowercase hex BLAKE3-256 of
// CanonicalBody. The stored SnapshotID and Signature play no part.
func (s *Snapshot) ComputeID() (string, error) {
	return s.computeID(serdejson.Zmij)
}

// computeID is ComputeID with the floats of era.
func (s *Snapshot) computeID(era serdejson.Era) (string, error) {
	body, err := s.canonicalBody(era)
	if err != nil {
		return "", err
	}
	return Blake3Hex(body), nil
}

// eraSensitive reports whether the body holds a float the serde_json float
// eras write differently (serdejson.EraSensitive), the only case in which
// its id differs between the eras.
func (s *Snapshot) eraSensitive() bool {
	if serdejson.EraSensitive(s.ROI.CompressionRate) {
		return true
	}
	for i := range s.Lineage.Items {
		if serdejson.EraSensitive(s.Lineage.Items[i].CompressionRatio) {
			return true
		}
	}
	for i := range s.Ledger.Items {
		if phi := s.Ledger.Items[i].Phi; phi != nil && serdejson.EraSensitive(*phi) {
			return true
		}
	}
	return false
}

// Finalize sets SnapshotID to ComputeID, which is what lean-ctx does to an
// unsigned snapshot before storing it. An existing signature is kept.
func (s *Snapshot) Finalize() error {
	id, err := s.ComputeID()
	if err != nil {
		return err
	}
	s.SnapshotID = id
	return nil
}

// Blake3Hex returns the lowercase hex BLAKE3-256 of data: the hash of
// snapshot_id, identity_hash (of the identity string) and content_hash (of
// the recorded excerpt).
func Blake3Hex(data []byte) string {
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Snapshot) write(w *serdejson.Writer) {
	w.BeginObject()
	w.Uint64Member("schema_version", uint64(s.SchemaVersion))
	w.StringMember("snapshot_id", s.SnapshotID)
	w.OptStringMember("parent_id", s.ParentID)
	w.StringMember("created_at", s.CreatedAt)
	w.StringMember("lean_ctx_version", s.LeanCtxVersion)
	w.ObjectMember("git", func() {
		w.OptStringMember("commit", s.Git.Commit)
		w.OptStringMember("branch", s.Git.Branch)
		w.BoolMember("dirty", s.Git.Dirty)
	})
	w.ObjectMember("project", func() {
		w.OptStringMember("root_hash", s.Project.RootHash)
		w.OptStringMember("identity_hash", s.Project.IdentityHash)
	})
	w.ObjectMember("roi", func() {
		w.Uint64Member("input_tokens", s.ROI.InputTokens)
		w.Uint64Member("output_tokens", s.ROI.OutputTokens)
		w.Uint64Member("tokens_saved", s.ROI.TokensSaved)
		w.Float64Member("compression_rate", s.ROI.CompressionRate)
	})
	w.ObjectMember("lineage", func() {
		w.Uint64Member("items_recorded", s.Lineage.ItemsRecorded)
		serdejson.ObjectsMember(w, "items", s.Lineage.Items, func(it *LineageItem) {
			w.Uint64Member("seq", it.Seq)
			w.StringMember("kind", it.Kind)
			w.StringMember("tool", it.Tool)
			w.OptStringMember("path", it.Path)
			w.Uint64Member("input_tokens", it.InputTokens)
			w.Uint64Member("output_tokens", it.OutputTokens)
			w.Float64Member("compression_ratio", it.CompressionRatio)
			w.OptStringMember("content_hash", it.ContentHash)
		})
	})
	w.ObjectMember("ledger", func() {
		w.Uint64Member("window_size", s.Ledger.WindowSize)
		w.Uint64Member("total_tokens_sent", s.Ledger.TotalTokensSent)
		w.Uint64Member("total_tokens_saved", s.Ledger.TotalTokensSaved)
		serdejson.ObjectsMember(w, "items", s.Ledger.Items, func(it *LedgerItem) {
			w.StringMember("path", it.Path)
			w.StringMember("state", it.State)
			w.OptFloat64Member("phi", it.Phi)
			w.Uint64Member("sent_tokens", it.SentTokens)
			w.Uint64Member("original_tokens", it.OriginalTokens)
		})
	})
	if se := s.Session; se == nil {
		w.Key("session")
		w.Null()
	} else {
		w.ObjectMember("session", func() {
			w.OptStringMember("session_id", se.SessionID)
			w.OptStringMember("task", se.Task)
			w.StringsMember("decisions", se.Decisions)
			w.StringsMember("files_touched", se.FilesTouched)
			w.Key("progress_pct")
			if se.ProgressPct == nil {
				w.Null()
			} else {
				w.Uint64(uint64(*se.ProgressPct))
			}
		})
	}
	if sig := s.Signature; sig == nil {
		w.Key("signature")
		w.Null()
	} else {
		w.ObjectMember("signature", func() {
			w.StringMember("algorithm", sig.Algorithm)
			w.StringMember("public_key", sig.PublicKey)
			w.StringMember("value", sig.Value)
		})
	}
	w.EndObject()
}

// checker records the first value serde_json could not round-trip.
type checker struct{ err error }

func (c *checker) str(field, s string) {
	if c.err == nil && !utf8.ValidString(s) {
		c.err = fmt.Errorf("%w: %s is not valid UTF-8", ErrUnencodable, field)
	}
}

func (c *checker) optStr(field string, s *string) {
	if s != nil {
		c.str(field, *s)
	}
}

func (c *checker) finite(field string, f float64) {
	if c.err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		c.err = fmt.Errorf("%w: %s is %v (serde_json would write null, which does not parse back)", ErrUnencodable, field, f)
	}
}

func (s *Snapshot) check() error {
	var c checker
	c.str("snapshot_id", s.SnapshotID)
	c.optStr("parent_id", s.ParentID)
	c.str("created_at", s.CreatedAt)
	c.str("lean_ctx_version", s.LeanCtxVersion)
	c.optStr("git.commit", s.Git.Commit)
	c.optStr("git.branch", s.Git.Branch)
	c.optStr("project.root_hash", s.Project.RootHash)
	c.optStr("project.identity_hash", s.Project.IdentityHash)
	c.finite("roi.compression_rate", s.ROI.CompressionRate)
	for i := range s.Lineage.Items {
		it := &s.Lineage.Items[i]
		c.str("lineage.items.kind", it.Kind)
		c.str("lineage.items.tool", it.Tool)
		c.optStr("lineage.items.path", it.Path)
		c.finite("lineage.items.compression_ratio", it.CompressionRatio)
		c.optStr("lineage.items.content_hash", it.ContentHash)
	}
	for i := range s.Ledger.Items {
		it := &s.Ledger.Items[i]
		c.str("ledger.items.path", it.Path)
		c.str("ledger.items.state", it.State)
	}
	if se := s.Session; se != nil {
		c.optStr("session.session_id", se.SessionID)
		c.optStr("session.task", se.Task)
		for _, d := range se.Decisions {
			c.str("session.decisions", d)
		}
		for _, f := range se.FilesTouched {
			c.str("session.files_touched", f)
		}
	}
	if sig := s.Signature; sig != nil {
		c.str("signature.algorithm", sig.Algorithm)
		c.str("signature.public_key", sig.PublicKey)
		c.str("signature.value", sig.Value)
	}
	return c.err
}
