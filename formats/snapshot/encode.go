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
	if err := s.check(); err != nil {
		return nil, err
	}
	w := serdejson.NewWriter(dst)
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
	body := *s
	body.SnapshotID = ""
	body.Signature = nil
	return body.AppendJSON(nil)
}

// ComputeID returns the snapshot id of s's body: lowercase hex BLAKE3-256 of
// CanonicalBody. The stored SnapshotID and Signature play no part.
func (s *Snapshot) ComputeID() (string, error) {
	body, err := s.CanonicalBody()
	if err != nil {
		return "", err
	}
	return Blake3Hex(body), nil
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
	w.Key("schema_version")
	w.Uint64(uint64(s.SchemaVersion))
	w.Key("snapshot_id")
	w.String(s.SnapshotID)
	w.Key("parent_id")
	w.OptString(s.ParentID)
	w.Key("created_at")
	w.String(s.CreatedAt)
	w.Key("lean_ctx_version")
	w.String(s.LeanCtxVersion)

	w.Key("git")
	w.BeginObject()
	w.Key("commit")
	w.OptString(s.Git.Commit)
	w.Key("branch")
	w.OptString(s.Git.Branch)
	w.Key("dirty")
	w.Bool(s.Git.Dirty)
	w.EndObject()

	w.Key("project")
	w.BeginObject()
	w.Key("root_hash")
	w.OptString(s.Project.RootHash)
	w.Key("identity_hash")
	w.OptString(s.Project.IdentityHash)
	w.EndObject()

	w.Key("roi")
	w.BeginObject()
	w.Key("input_tokens")
	w.Uint64(s.ROI.InputTokens)
	w.Key("output_tokens")
	w.Uint64(s.ROI.OutputTokens)
	w.Key("tokens_saved")
	w.Uint64(s.ROI.TokensSaved)
	w.Key("compression_rate")
	w.Float64(s.ROI.CompressionRate)
	w.EndObject()

	w.Key("lineage")
	w.BeginObject()
	w.Key("items_recorded")
	w.Uint64(s.Lineage.ItemsRecorded)
	w.Key("items")
	w.BeginArray()
	for i := range s.Lineage.Items {
		it := &s.Lineage.Items[i]
		w.BeginObject()
		w.Key("seq")
		w.Uint64(it.Seq)
		w.Key("kind")
		w.String(it.Kind)
		w.Key("tool")
		w.String(it.Tool)
		w.Key("path")
		w.OptString(it.Path)
		w.Key("input_tokens")
		w.Uint64(it.InputTokens)
		w.Key("output_tokens")
		w.Uint64(it.OutputTokens)
		w.Key("compression_ratio")
		w.Float64(it.CompressionRatio)
		w.Key("content_hash")
		w.OptString(it.ContentHash)
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()

	w.Key("ledger")
	w.BeginObject()
	w.Key("window_size")
	w.Uint64(s.Ledger.WindowSize)
	w.Key("total_tokens_sent")
	w.Uint64(s.Ledger.TotalTokensSent)
	w.Key("total_tokens_saved")
	w.Uint64(s.Ledger.TotalTokensSaved)
	w.Key("items")
	w.BeginArray()
	for i := range s.Ledger.Items {
		it := &s.Ledger.Items[i]
		w.BeginObject()
		w.Key("path")
		w.String(it.Path)
		w.Key("state")
		w.String(it.State)
		w.Key("phi")
		w.OptFloat64(it.Phi)
		w.Key("sent_tokens")
		w.Uint64(it.SentTokens)
		w.Key("original_tokens")
		w.Uint64(it.OriginalTokens)
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()

	w.Key("session")
	if se := s.Session; se == nil {
		w.Null()
	} else {
		w.BeginObject()
		w.Key("session_id")
		w.OptString(se.SessionID)
		w.Key("task")
		w.OptString(se.Task)
		w.Key("decisions")
		w.Strings(se.Decisions)
		w.Key("files_touched")
		w.Strings(se.FilesTouched)
		w.Key("progress_pct")
		if se.ProgressPct == nil {
			w.Null()
		} else {
			w.Uint64(uint64(*se.ProgressPct))
		}
		w.EndObject()
	}

	w.Key("signature")
	if sig := s.Signature; sig == nil {
		w.Null()
	} else {
		w.BeginObject()
		w.Key("algorithm")
		w.String(sig.Algorithm)
		w.Key("public_key")
		w.String(sig.PublicKey)
		w.Key("value")
		w.String(sig.Value)
		w.EndObject()
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
