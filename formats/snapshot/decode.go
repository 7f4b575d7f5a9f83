package snapshot

import (
	"fmt"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// Field decoders shared with other serde formats (formats/serdejson).
var (
	str     = serdejson.StringField
	optStr  = serdejson.OptStringField
	u64     = serdejson.Uint64Field
	f64     = serdejson.Float64Field
	boolean = serdejson.BoolField
	strList = serdejson.StringsField
)

// ParseFile decodes a snapshot file (pretty or compact; any JSON layout) the
// way lean-ctx's serde_json::from_str does (see the package doc), after
// refusing input over MaxFileSize. It does not check the id or signature:
// see Verify, VerifyIntegrity and CheckImport. Errors wrap ErrTooLarge or
// ErrParse; the text of a parse error is "parse snapshot: {reason}".
func ParseFile(data []byte) (*Snapshot, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(data), MaxFileSize)
	}
	v, err := serdejson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	s := new(Snapshot)
	if err := s.decode(v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	return s, nil
}

type field = serdejson.Field

// Field kinds (formats/serdejson): req must be present, opt is an
// Option<T> (missing or null leaves None).
var (
	req = serdejson.Required
	opt = serdejson.Option
)

func (s *Snapshot) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "ContextSnapshotV1", []field{
		req("schema_version", serdejson.Uint32Field(&s.SchemaVersion)),
		req("snapshot_id", str(&s.SnapshotID)),
		opt("parent_id", optStr(&s.ParentID)),
		req("created_at", str(&s.CreatedAt)),
		req("lean_ctx_version", str(&s.LeanCtxVersion)),
		req("git", s.Git.decode),
		req("project", s.Project.decode),
		req("roi", s.ROI.decode),
		req("lineage", s.Lineage.decode),
		req("ledger", s.Ledger.decode),
		opt("session", func(v serdejson.Value) error {
			s.Session = new(Session)
			return s.Session.decode(v)
		}),
		opt("signature", func(v serdejson.Value) error {
			s.Signature = new(Signature)
			return s.Signature.decode(v)
		}),
	})
}

func (g *GitAnchor) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "GitAnchorV1", []field{
		opt("commit", optStr(&g.Commit)),
		opt("branch", optStr(&g.Branch)),
		req("dirty", boolean(&g.Dirty)),
	})
}

func (p *Project) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotProjectV1", []field{
		opt("root_hash", optStr(&p.RootHash)),
		opt("identity_hash", optStr(&p.IdentityHash)),
	})
}

func (r *ROI) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotRoiV1", []field{
		req("input_tokens", u64(&r.InputTokens)),
		req("output_tokens", u64(&r.OutputTokens)),
		req("tokens_saved", u64(&r.TokensSaved)),
		req("compression_rate", f64(&r.CompressionRate)),
	})
}

func (l *Lineage) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotLineageV1", []field{
		req("items_recorded", u64(&l.ItemsRecorded)),
		req("items", serdejson.ListField(&l.Items, (*LineageItem).decode)),
	})
}

func (it *LineageItem) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotLineageItemV1", []field{
		req("seq", u64(&it.Seq)),
		req("kind", str(&it.Kind)),
		req("tool", str(&it.Tool)),
		opt("path", optStr(&it.Path)),
		req("input_tokens", u64(&it.InputTokens)),
		req("output_tokens", u64(&it.OutputTokens)),
		req("compression_ratio", f64(&it.CompressionRatio)),
		opt("content_hash", optStr(&it.ContentHash)),
	})
}

func (l *Ledger) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotLedgerV1", []field{
		req("window_size", u64(&l.WindowSize)),
		req("total_tokens_sent", u64(&l.TotalTokensSent)),
		req("total_tokens_saved", u64(&l.TotalTokensSaved)),
		req("items", serdejson.ListField(&l.Items, (*LedgerItem).decode)),
	})
}

func (it *LedgerItem) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotLedgerItemV1", []field{
		req("path", str(&it.Path)),
		req("state", str(&it.State)),
		opt("phi", serdejson.OptFloat64Field(&it.Phi)),
		req("sent_tokens", u64(&it.SentTokens)),
		req("original_tokens", u64(&it.OriginalTokens)),
	})
}

func (se *Session) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotSessionV1", []field{
		opt("session_id", optStr(&se.SessionID)),
		opt("task", optStr(&se.Task)),
		req("decisions", strList(&se.Decisions)),
		req("files_touched", strList(&se.FilesTouched)),
		opt("progress_pct", func(v serdejson.Value) error {
			u, err := v.Uint(8)
			if err == nil {
				p := uint8(u)
				se.ProgressPct = &p
			}
			return err
		}),
	})
}

func (sig *Signature) decode(v serdejson.Value) error {
	return serdejson.DecodeStruct(v, "SnapshotSignatureV1", []field{
		req("algorithm", str(&sig.Algorithm)),
		req("public_key", str(&sig.PublicKey)),
		req("value", str(&sig.Value)),
	})
}
