package output

import (
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/internal/snapshots"
)

// Snapshot is a `snapshot list --json` element and `snapshot create
// --json`: the reference's TimelineEntry keys plus the device whose
// timeline holds it and whether that device vouches for the entry with a
// timeline line signature.
type Snapshot struct {
	SnapshotID  string  `json:"snapshot_id"`
	ParentID    *string `json:"parent_id"`
	CreatedAt   string  `json:"created_at"`
	GitCommit   *string `json:"git_commit"`
	GitBranch   *string `json:"git_branch"`
	TokensSaved uint64  `json:"tokens_saved"`
	Signed      bool    `json:"signed"`
	Device      string  `json:"device"`
	LineSigned  bool    `json:"line_signed"`
}

// NewSnapshot builds Snapshot from a timeline entry.
func NewSnapshot(device string, e snapshot.TimelineEntry, lineSigned bool) Snapshot {
	return Snapshot{e.SnapshotID, e.ParentID, e.CreatedAt, e.GitCommit, e.GitBranch, e.TokensSaved, e.Signed, device, lineSigned}
}

// NewSnapshotList builds the `snapshot list --json` array.
func NewSnapshotList(list []snapshots.ListEntry) []Snapshot {
	return mapSlice(list, func(e snapshots.ListEntry) Snapshot {
		return NewSnapshot(e.Device, e.TimelineEntry, e.LineSigned)
	})
}

// SnapshotVerify is `snapshot verify --json`.
type SnapshotVerify struct {
	SnapshotID string `json:"snapshot_id"`
	OK         bool   `json:"ok"`
	Outcome    string `json:"outcome"`
}

// SnapshotRestore is `snapshot restore --json`.
type SnapshotRestore struct {
	SnapshotID string `json:"snapshot_id"`
	// Session is the session slice, as --out writes it.
	Session *snapshots.RestoredSession `json:"session"`
	Out     string                     `json:"out,omitempty"`
	Git     string                     `json:"git"`
	Commit  string                     `json:"commit"`
	Detail  string                     `json:"detail,omitempty"`
}

// NewSnapshotRestore builds SnapshotRestore; out is the --out file ("" when
// none).
func NewSnapshotRestore(r *snapshots.RestoreResult, out string) SnapshotRestore {
	return SnapshotRestore{SnapshotID: r.Session.SnapshotID, Session: r.Session, Out: out, Git: r.Git, Commit: r.Commit, Detail: r.Detail}
}

// SnapshotPublish is `snapshot publish --json`.
type SnapshotPublish struct {
	SnapshotID string `json:"snapshot_id"`
	Path       string `json:"path"`
	PublicKey  string `json:"public_key"`
}

// SnapshotImport is `snapshot import --json`.
type SnapshotImport struct {
	SnapshotID string `json:"snapshot_id"`
	Path       string `json:"path"`
	Existed    bool   `json:"existed"`
	// Unsigned: the file had no signature; the branch copy is signed with
	// this device's key.
	Unsigned  bool   `json:"unsigned"`
	PublicKey string `json:"public_key"`
}

// NewSnapshotImport builds SnapshotImport.
func NewSnapshotImport(r *snapshots.Imported) SnapshotImport {
	out := SnapshotImport{SnapshotID: r.Snapshot.SnapshotID, Path: r.Path, Existed: r.Existed, Unsigned: r.Unsigned}
	if r.Snapshot.Signature != nil {
		out.PublicKey = r.Snapshot.Signature.PublicKey
	}
	return out
}
