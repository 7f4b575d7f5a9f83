package output

import (
	"encoding/json"
	"fmt"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// Status is `status --json`.
type Status struct {
	Initialized       bool   `json:"initialized"`
	Branch            string `json:"branch"`
	Tip               string `json:"tip,omitempty"`
	Layout            string `json:"layout,omitempty"`
	Device            string `json:"device"`
	Fingerprint       string `json:"fingerprint"`
	KeyPublished      bool   `json:"key_published"`
	RepoID            string `json:"repo_id"`
	Remote            string `json:"remote"`
	Checkpoints       int    `json:"checkpoints"`
	DeviceCheckpoints int    `json:"device_checkpoints"`
	Devices           int    `json:"devices"`
	Quarantined       int    `json:"quarantined"`
	// Adopted and OtherRepos: see docs/JSON.md (repository ids).
	Adopted        []string    `json:"adopted_repos"`
	OtherRepos     []RepoCount `json:"other_repos"`
	RepoIDOverride string      `json:"repo_id_override,omitempty"`
	// PendingHookEntries: commits and agent turns the hooks spooled that are
	// not recorded yet; SpoolError is the last drain's error.
	PendingHookEntries int    `json:"pending_hook_entries"`
	SpoolError         string `json:"spool_error,omitempty"`
}

// RepoCount is an `other_repos` element of Status.
type RepoCount struct {
	ID          string `json:"id"`
	Checkpoints int    `json:"checkpoints"`
}

// NewStatus builds Status from the memory's status, this device's id and
// key fingerprint, and the memory remote ("" when none).
func NewStatus(st *checkpoints.Status, device, fingerprint, remote string) Status {
	out := Status{
		Initialized: st.Initialized, Branch: "ghyll/memory", Device: device,
		Fingerprint: fingerprint, KeyPublished: st.KeyPublished,
		RepoID: st.RepoID, Remote: remote, Checkpoints: st.Checkpoints,
		DeviceCheckpoints: st.DeviceCheckpoints, Devices: st.Devices, Quarantined: st.Quarantined,
		Adopted:        append([]string{}, st.Adopted...),
		OtherRepos:     mapSlice(st.OtherRepos, func(r workspace.RepoCount) RepoCount { return RepoCount{r.ID, r.Checkpoints} }),
		RepoIDOverride: st.RepoIDOverride,
	}
	if st.Initialized {
		out.Tip, out.Layout = st.Tip, string(st.Layout)
	}
	return out
}

// Entry is a checkpoint entry of `log`, `search` and `similar`: the
// record's own members (as rebuilt from the cache) followed by "verified",
// "unauthenticated" when the hash does not cover every member, and extra
// (e.g. "rank" and "snippet", or "score").
func Entry(e *cache.Entry, extra map[string]any) (json.RawMessage, error) {
	tail := map[string]any{"verified": e.Verified}
	for k, v := range extra {
		tail[k] = v
	}
	if u := e.Unauthenticated(); u != nil {
		tail["unauthenticated"] = u
	}
	// A record's own unknown member must not collide with what is added
	// here: a forged "verified" would otherwise appear twice.
	cp := *e.Checkpoint
	cp.Extra = nil
	for _, m := range e.Extra {
		if _, clash := tail[m.Key]; !clash && m.Key != "unauthenticated" {
			cp.Extra = append(cp.Extra, m)
		}
	}
	b, err := cp.MarshalCompact()
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint %s: %w", e.Hash, err)
	}
	t, err := json.Marshal(tail)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint %s: %w", e.Hash, err)
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	return append(out, t[1:]...), nil
}

// Entries is the array of `log --json` (never null).
func Entries(entries []*cache.Entry) ([]json.RawMessage, error) {
	return entryArray(entries, func(e *cache.Entry) (*cache.Entry, map[string]any) { return e, nil })
}

// SearchHits is the array of `search --json`.
func SearchHits(hits []cache.Hit) ([]json.RawMessage, error) {
	return entryArray(hits, func(h cache.Hit) (*cache.Entry, map[string]any) {
		extra := map[string]any{"snippet": h.Snippet, "rank": h.Rank}
		if h.Window > 0 {
			extra["window"] = h.Window
		}
		return h.Entry, extra
	})
}

// SimilarMatches is the array of `similar --json`.
func SimilarMatches(matches []cache.Match) ([]json.RawMessage, error) {
	return entryArray(matches, func(mt cache.Match) (*cache.Entry, map[string]any) {
		return mt.Entry, map[string]any{"score": mt.Score}
	})
}

// entryArray encodes every element of in as an Entry with the extra members
// of returns (never nil).
func entryArray[T any](in []T, of func(T) (*cache.Entry, map[string]any)) ([]json.RawMessage, error) {
	list := make([]json.RawMessage, 0, len(in))
	for _, v := range in {
		b, err := Entry(of(v))
		if err != nil {
			return nil, err
		}
		list = append(list, b)
	}
	return list, nil
}

// LogUnverified is `log --unverified --json`.
type LogUnverified struct {
	Checkpoints []json.RawMessage `json:"checkpoints"`
	Quarantine  []Quarantined     `json:"quarantine"`
}

// Quarantined is a `quarantine` element of LogUnverified.
type Quarantined struct {
	Ref    string `json:"ref"`
	RepoID string `json:"repo_id"`
	Device string `json:"device"`
	Record string `json:"record"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	Seen   int64  `json:"seen"`
}

// NewLogUnverified builds LogUnverified from the unverified entries and
// the quarantine.
func NewLogUnverified(entries []*cache.Entry, quarantine []cache.Quarantined) (LogUnverified, error) {
	list, err := Entries(entries)
	if err != nil {
		return LogUnverified{}, err
	}
	return LogUnverified{Checkpoints: list, Quarantine: mapSlice(quarantine, func(q cache.Quarantined) Quarantined {
		return Quarantined{q.Ref, q.RepoID, q.Device, q.Record, q.Reason, q.Detail, q.Seen}
	})}, nil
}

// Import is `import --json`.
type Import struct {
	Imported []ImportedRecord `json:"imported"`
	Skipped  []SkippedRecord  `json:"skipped"`
	Already  int              `json:"already_imported"`
}

// ImportedRecord is an `imported` element of Import.
type ImportedRecord struct {
	From string `json:"from"`
	Hash string `json:"hash"`
	Rule string `json:"rule"`
}

// SkippedRecord is a `skipped` element of Import.
type SkippedRecord struct {
	Hash   string `json:"hash"`
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// NewImport builds Import from an import's result.
func NewImport(r *checkpoints.ImportResult) Import {
	return Import{
		Imported: mapSlice(r.Imported, func(i checkpoints.ImportedRecord) ImportedRecord {
			return ImportedRecord{i.From, i.Hash, string(i.Rule)}
		}),
		Skipped: mapSlice(r.Skipped, func(s checkpoints.SkippedRecord) SkippedRecord {
			return SkippedRecord{s.Hash, s.Device, s.Reason}
		}),
		Already: r.Already,
	}
}

// Init is `init --json`.
type Init struct {
	Device          string `json:"device"`
	Fingerprint     string `json:"fingerprint"`
	IdentityCreated bool   `json:"identity_created"`
	Created         bool   `json:"created"`
	Layout          string `json:"layout"`
	Tip             string `json:"tip"`
	Published       bool   `json:"published"`
	Remote          string `json:"remote,omitempty"`
	// RepoID is the repository id this run fixed in the new branch's
	// REPO file.
	RepoID string `json:"repo_id,omitempty"`
	// Notes say what a ghyll-v1 branch means (emb outside the hash,
	// where the records go).
	Notes []string `json:"notes,omitempty"`
	// FromRemote is the verified merge that started a new branch from the
	// memory remote's fetched branch (pull's shape).
	FromRemote *Pull `json:"from_remote,omitempty"`
}

// Reindex is `reindex --json`.
type Reindex struct {
	Checkpoints int     `json:"checkpoints"`
	Devices     int     `json:"devices"`
	Seconds     float64 `json:"seconds"`
}

// Adopt is `adopt --json`.
type Adopt struct {
	Adopted string `json:"adopted"`
	RepoID  string `json:"repo_id"`
}

// Version is `version --json`.
type Version struct {
	Go      string `json:"go"`
	Version string `json:"version"`
}

// Export is `export --json`.
type Export struct {
	Path       string `json:"path"`
	Exported   int    `json:"exported"`
	Verifiable int    `json:"ghyll_verifiable"`
	Mismatch   int    `json:"ghyll_hash_mismatch"`
	LeftOut    int    `json:"left_out"`
	EmbLeftOut int    `json:"emb_left_out"`
	Note       string `json:"note"`
}

// NewExport builds Export from an export's result; Note explains
// ghyll_hash_mismatch, and is "" when that is 0.
func NewExport(r *checkpoints.ExportResult) Export {
	e := Export{Path: r.Path, Exported: r.Exported, Verifiable: r.Verifiable, Mismatch: r.Mismatch,
		LeftOut: r.LeftOut, EmbLeftOut: r.EmbLeftOut}
	if r.Mismatch > 0 {
		e.Note = checkpoints.GhyllMismatchNote
	}
	return e
}
