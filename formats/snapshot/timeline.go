package snapshot

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/git-ctx/git-ctx/formats/serdejson"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// TimelineEntry is one line of a project's append-only index.jsonl (Rust
// TimelineEntry; field order is the key order).
type TimelineEntry struct {
	SnapshotID  string  // snapshot_id
	ParentID    *string // parent_id
	CreatedAt   string  // created_at
	GitCommit   *string // git_commit: git.commit
	GitBranch   *string // git_branch: git.branch
	TokensSaved uint64  // tokens_saved: roi.tokens_saved
	Signed      bool    // signed: signature is not null
}

// Published and stored file names.
const (
	// PublishedSuffix ends the default name of a published snapshot.
	PublishedSuffix = ".ctxsnapshot.json"
	// IndexFileName is the timeline index in a project's snapshot directory.
	IndexFileName = "index.jsonl"
	// ShortIDLength is how many characters of an id lean-ctx displays and
	// uses in the default published file name.
	ShortIDLength = 12
)

// ShortID returns the first ShortIDLength bytes of id (all of a shorter id).
func ShortID(id string) string {
	if len(id) > ShortIDLength {
		return id[:ShortIDLength]
	}
	return id
}

// PublishedFileName is the default name "snapshot publish" writes in the
// current directory: ShortID(id) + ".ctxsnapshot.json".
func PublishedFileName(id string) string { return ShortID(id) + PublishedSuffix }

// StoredFileName is the payload file of a stored snapshot: id + ".json".
func StoredFileName(id string) string { return id + ".json" }

// TimelineEntry returns the index entry lean-ctx appends for s.
func (s *Snapshot) TimelineEntry() TimelineEntry {
	return TimelineEntry{
		SnapshotID:  s.SnapshotID,
		ParentID:    s.ParentID,
		CreatedAt:   s.CreatedAt,
		GitCommit:   s.Git.Commit,
		GitBranch:   s.Git.Branch,
		TokensSaved: s.ROI.TokensSaved,
		Signed:      s.Signature != nil,
	}
}

// AppendJSON appends the compact encoding of e to dst. It fails only on
// strings that are not valid UTF-8 (ErrUnencodable).
func (e TimelineEntry) AppendJSON(dst []byte) ([]byte, error) {
	var c checker
	c.str("snapshot_id", e.SnapshotID)
	c.optStr("parent_id", e.ParentID)
	c.str("created_at", e.CreatedAt)
	c.optStr("git_commit", e.GitCommit)
	c.optStr("git_branch", e.GitBranch)
	if c.err != nil {
		return nil, c.err
	}
	w := serdejson.NewWriter(dst)
	e.write(w)
	return w.Bytes(), nil
}

func (e TimelineEntry) write(w *serdejson.Writer) {
	w.BeginObject()
	w.StringMember("snapshot_id", e.SnapshotID)
	w.OptStringMember("parent_id", e.ParentID)
	w.StringMember("created_at", e.CreatedAt)
	w.OptStringMember("git_commit", e.GitCommit)
	w.OptStringMember("git_branch", e.GitBranch)
	w.Uint64Member("tokens_saved", e.TokensSaved)
	w.BoolMember("signed", e.Signed)
	w.EndObject()
}

// MarshalLine returns the index line for e: the compact encoding followed by
// "\n", to be written in a single write call.
func (e TimelineEntry) MarshalLine() ([]byte, error) {
	b, err := e.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// TimelineJSON returns what "snapshot list --json" prints: the entries as a
// pretty JSON array ("[]" when there are none).
func TimelineJSON(entries []TimelineEntry) ([]byte, error) {
	w := serdejson.NewWriter(nil)
	w.BeginArray()
	for _, e := range entries {
		b, err := e.AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		w.Raw(b)
	}
	w.EndArray()
	return serdejson.Pretty(w.Bytes()), nil
}

// ParseTimelineEntry decodes one index line (serde rules, as ParseFile).
func ParseTimelineEntry(line []byte) (TimelineEntry, error) {
	var e TimelineEntry
	v, err := serdejson.Parse(line)
	if err != nil {
		return TimelineEntry{}, err
	}
	err = serdejson.DecodeStruct(v, "TimelineEntry", []field{
		req("snapshot_id", str(&e.SnapshotID)),
		opt("parent_id", optStr(&e.ParentID)),
		req("created_at", str(&e.CreatedAt)),
		opt("git_commit", optStr(&e.GitCommit)),
		opt("git_branch", optStr(&e.GitBranch)),
		req("tokens_saved", u64(&e.TokensSaved)),
		req("signed", boolean(&e.Signed)),
	})
	if err != nil {
		return TimelineEntry{}, err
	}
	return e, nil
}

// ParseTimeline reads a whole index.jsonl as lean-ctx does: lines are split
// on "\n" (a trailing "\r" is dropped), lines that are blank after trimming
// are skipped, and lines that do not parse are skipped silently. The result
// is in file order (chronological); the head is the last entry.
func ParseTimeline(data []byte) []TimelineEntry {
	var out []TimelineEntry
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if e, err := ParseTimelineEntry(line); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// EntryIDs returns the snapshot ids of entries, in order (for ResolveID).
func EntryIDs(entries []TimelineEntry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.SnapshotID
	}
	return ids
}

// ResolveID resolves a git-style id prefix against the ids of the index
// entries (case-sensitive prefix match). Errors, as lean-ctx words them:
// "empty snapshot id", "no snapshot matches id '{p}'", "ambiguous snapshot
// id '{p}' — use more characters". An id listed twice is ambiguous even when
// given in full.
func ResolveID(prefix string, ids []string) (string, error) {
	if prefix == "" {
		return "", ErrEmptyPrefix
	}
	var found string
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			found = id
			n++
		}
	}
	switch n {
	case 0:
		return "", fmt.Errorf("%w '%s'", ErrNoMatch, prefix)
	case 1:
		return found, nil
	default:
		return "", fmt.Errorf("%w '%s' — use more characters", ErrAmbiguous, prefix)
	}
}

// CheckID is lean-ctx's safe-id check, applied before an id becomes a file
// name: non-empty, at most 64 characters, all ASCII hex digits (either
// case). Otherwise the error is "invalid snapshot id: {id}".
func CheckID(id string) error {
	ok := id != "" && len(id) <= 64
	for i := 0; ok && i < len(id); i++ {
		_, ok = dalek.HexVal(id[i])
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrInvalidID, id)
	}
	return nil
}

// CheckStorable reports whether s may be stored: an empty id is
// ErrNotFinalized, then CheckID applies.
func (s *Snapshot) CheckStorable() error {
	if s.SnapshotID == "" {
		return ErrNotFinalized
	}
	return CheckID(s.SnapshotID)
}
