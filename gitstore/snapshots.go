package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Context snapshots (ctx-v1 only; see docs/FORMAT.md §2.3):
//
//	repos/<repo-id>/snapshots/<id[0:2]>/<snapshot_id>.json   pretty file (snapshot.MarshalFile)
//	repos/<repo-id>/timelines/<device>/<NNNNNNNN>.jsonl      timeline lines (snapshot.TimelineLine:
//	                                                          the compact TimelineEntry signed by the
//	                                                          device), SegmentLines per segment
const (
	SnapshotsDirName = "snapshots"
	TimelinesDirName = "timelines"
)

// ErrSnapshotLayout: snapshots are stored only on ctx-v1 branches.
var ErrSnapshotLayout = fault.Sentinel(fault.Config, "context snapshots need a memory branch with the ctx-v1 layout; this branch uses ghyll-v1 (create a ctx-v1 branch with 'git ctx init --layout ctx-v1' in a new repository)")

// SnapshotDir is the directory of repoID's snapshot files.
func SnapshotDir(repoID string) string { return path.Join(RepoDir(repoID), SnapshotsDirName) }

// SnapshotPath is where the snapshot with id lives (id must pass snapshot.CheckID).
func SnapshotPath(repoID, id string) string {
	return path.Join(SnapshotDir(repoID), id[0:2], snapshot.StoredFileName(id))
}

// TimelineDir is the directory holding one directory of segments per device.
func TimelineDir(repoID string) string { return path.Join(RepoDir(repoID), TimelinesDirName) }

// TimelineSegmentPath is segment n of device's timeline in repoID.
func TimelineSegmentPath(repoID, device string, n int) string {
	return path.Join(TimelineDir(repoID), device, SegmentName(n))
}

// validStoredID: the ids stored on the branch are 64 lowercase hex
// characters (BLAKE3 output; CheckID alone would allow uppercase or short ids).
func validStoredID(id string) bool { return len(id) == 64 && isHex(id) }

// TimelineDevices lists the devices with a timeline in repoID.
func (v *View) TimelineDevices(repoID string) ([]string, error) {
	out, err := v.listNames(TimelineDir(repoID), dirName)
	sort.Strings(out)
	return out, err
}

// timelineSegments returns the blob ids of device's timeline segments, in
// order; they must be exactly 00000000.jsonl … N.jsonl, regular files.
func (v *View) timelineSegments(repoID, device string) ([]plumbing.Hash, error) {
	return v.segmentFiles(path.Join(TimelineDir(repoID), device), "timeline")
}

// TimelineLines parses device's timeline in repoID (nil when it has none).
// Unlike lean-ctx's reader, a malformed line or segment is an error
// (ErrCorrupt): the branch is written only by git-ctx. Lines must be in one
// of the exact forms of snapshot.ParseTimelineLine (legacy or signed); line
// signatures and positions are checked by CheckTimelineLines, not here.
func (v *View) TimelineLines(repoID, device string) ([]snapshot.TimelineLine, error) {
	if v.Layout != LayoutCtxV1 {
		return nil, nil
	}
	segs, err := v.timelineSegments(repoID, device)
	if err != nil {
		return nil, err
	}
	var out []snapshot.TimelineLine
	seen := map[string]bool{}
	for i, h := range segs {
		b, err := v.readPath(TimelineSegmentPath(repoID, device, i), h, MaxBlob)
		if err != nil {
			return nil, err
		}
		n := bytes.Count(b, []byte{'\n'})
		if n > SegmentLines || i < len(segs)-1 && n != SegmentLines || n == 0 || b[len(b)-1] != '\n' {
			return nil, fmt.Errorf("%w: timeline of %s: segment %s holds %d lines (full segments hold %d)", ErrCorrupt, device, SegmentName(i), n, SegmentLines)
		}
		for j, line := range bytes.SplitAfter(b[:len(b)-1], []byte{'\n'}) {
			l, err := snapshot.ParseTimelineLine(bytes.TrimSuffix(line, []byte{'\n'}))
			if err == nil && !validStoredID(l.Entry.SnapshotID) {
				err = fmt.Errorf("invalid snapshot id %q", l.Entry.SnapshotID)
			}
			if err == nil && seen[l.Entry.SnapshotID] {
				// Writers never append an id twice (imports are idempotent),
				// so a repeated entry can only be a replayed line.
				err = fmt.Errorf("snapshot %s is named twice", l.Entry.SnapshotID)
			}
			if err != nil {
				return out, fmt.Errorf("%w: timeline of %s: entry %d: %v", ErrCorrupt, device, i*SegmentLines+j+1, err)
			}
			seen[l.Entry.SnapshotID] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// Timeline returns the entries of device's timeline in repoID (see
// TimelineLines).
func (v *View) Timeline(repoID, device string) ([]snapshot.TimelineEntry, error) {
	lines, err := v.TimelineLines(repoID, device)
	return TimelineEntries(lines), err
}

// TimelineEntries returns the entries of lines, in order.
func TimelineEntries(lines []snapshot.TimelineLine) []snapshot.TimelineEntry {
	if lines == nil {
		return nil
	}
	out := make([]snapshot.TimelineEntry, len(lines))
	for i, l := range lines {
		out[i] = l.Entry
	}
	return out
}

// SnapshotFile reads the raw snapshot file with id in repoID.
func (v *View) SnapshotFile(repoID, id string) ([]byte, error) {
	if !validStoredID(id) {
		return nil, fmt.Errorf("%w: %s", snapshot.ErrInvalidID, id)
	}
	return v.ReadFile(SnapshotPath(repoID, id), snapshot.MaxFileSize)
}

// Snapshot reads and parses the snapshot id in repoID (no integrity check).
func (v *View) Snapshot(repoID, id string) (*snapshot.Snapshot, []byte, error) {
	raw, err := v.SnapshotFile(repoID, id)
	if err != nil {
		return nil, nil, err
	}
	s, err := snapshot.ParseFile(raw)
	return s, raw, err
}

// SnapshotEntry is one snapshot file found by WalkSnapshots.
type SnapshotEntry struct {
	Path string
	ID   string
	Blob plumbing.Hash
}

// WalkSnapshots lists repoID's snapshot files; paths the layout does not
// prescribe go to bad.
func (v *View) WalkSnapshots(repoID string) (good []SnapshotEntry, bad []string, err error) {
	err = v.walk(SnapshotDir(repoID), 0, func(_ string, e object.TreeEntry, full string, depth int) bool {
		if depth == 0 { // the <id[0:2]> directories
			if e.Mode != filemode.Dir || len(e.Name) != 2 || !isHex(e.Name) {
				bad = append(bad, full)
				return false
			}
			return true
		}
		id, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || e.Mode != filemode.Regular || !validStoredID(id) || SnapshotPath(repoID, id) != full {
			bad = append(bad, full)
			return false
		}
		good = append(good, SnapshotEntry{Path: full, ID: id, Blob: e.Hash})
		return false
	})
	if err != nil {
		return nil, nil, err
	}
	return good, bad, nil
}

// MarshalTimeline encodes timeline lines, each followed by "\n".
func MarshalTimeline(lines []snapshot.TimelineLine) []byte {
	var buf []byte
	for _, l := range lines {
		buf = append(append(buf, l.Bytes()...), '\n')
	}
	return buf
}

// SnapshotRequest asks for one snapshot on this device's timeline.
type SnapshotRequest struct {
	RepoID string
	Device Device
	Author Author
	// Build runs under the lock with this device's timeline head (nil when
	// the timeline is empty) and returns the finished snapshot (id set,
	// signed or not) to store. It may run more than once (CAS retries).
	Build func(head *snapshot.TimelineEntry) (*snapshot.Snapshot, error)
}

// SnapshotResult says what AppendSnapshot did.
type SnapshotResult struct {
	Snapshot *snapshot.Snapshot
	Path     string
	Existed  bool // the id was already on this device's timeline: nothing written
	Commit   plumbing.Hash
}

// AppendSnapshot stores a snapshot file and appends its entry to this
// device's timeline as a line signed by the device for its position
// (snapshot.SignTimelineLine), in one commit "ctx: snapshot <id12> by
// <device>". Like
// Append it holds the lock, re-reads the tip and retries on a concurrent
// move. A snapshot whose id is already on the device's timeline is a no-op.
func (s *Store) AppendSnapshot(ctx context.Context, req SnapshotRequest) (*SnapshotResult, error) {
	return lockedEdit(ctx, s, func(e *branchEdit) (*SnapshotResult, error) { return e.appendSnapshot(ctx, req) })
}

// appendSnapshot builds the snapshot on this device's timeline head, stores
// its file (unless the same id is there already) and commits it with the
// timeline's new signed line.
func (e *branchEdit) appendSnapshot(ctx context.Context, req SnapshotRequest) (*SnapshotResult, error) {
	v, dev := e.v, req.Device
	if v.Layout != LayoutCtxV1 {
		return nil, ErrSnapshotLayout
	}
	if _, err := e.publishKey(dev); err != nil {
		return nil, err
	}
	segs, err := v.timelineSegments(req.RepoID, dev.ID)
	if err != nil {
		return nil, err
	}
	lines, err := v.TimelineLines(req.RepoID, dev.ID)
	if err != nil {
		return nil, err
	}
	entries := TimelineEntries(lines)
	snap, err := buildSnapshot(req, entries)
	if err != nil {
		return nil, err
	}
	res := &SnapshotResult{Snapshot: snap, Path: SnapshotPath(req.RepoID, snap.SnapshotID)}
	for _, te := range entries {
		if te.SnapshotID == snap.SnapshotID {
			res.Existed = true
			return res, nil
		}
	}
	if err := e.addSnapshotFile(req.RepoID, res); err != nil {
		return nil, err
	}
	if err := e.addTimelineLine(req, len(segs), lines, res.Snapshot); err != nil {
		return nil, err
	}
	snap = res.Snapshot
	msg := fmt.Sprintf("ctx: snapshot %s by %s\n\nSnapshot: %s\n", snapshot.ShortID(snap.SnapshotID), dev.ID, snap.SnapshotID)
	res.Commit, err = e.commit(ctx, req.Author, time.Now(), msg, "ctx: snapshot")
	if err != nil {
		return nil, err
	}
	return res, nil
}

// buildSnapshot runs req.Build on the timeline's head and checks that the
// result can be stored.
func buildSnapshot(req SnapshotRequest, entries []snapshot.TimelineEntry) (*snapshot.Snapshot, error) {
	var head *snapshot.TimelineEntry
	if len(entries) > 0 {
		head = &entries[len(entries)-1]
	}
	snap, err := req.Build(head)
	if err != nil {
		return nil, err
	}
	if err := snap.CheckStorable(); err != nil {
		return nil, err
	}
	if !validStoredID(snap.SnapshotID) {
		return nil, fmt.Errorf("%w: %s", snapshot.ErrInvalidID, snap.SnapshotID)
	}
	return snap, nil
}

// addSnapshotFile adds the snapshot's file at res.Path. The file is
// content-addressed by id; an existing file with this id (another device's,
// or an earlier import) is kept as it is, and res.Snapshot becomes that
// file's snapshot, which the timeline entry then describes.
func (e *branchEdit) addSnapshotFile(repoID string, res *SnapshotResult) error {
	snap := res.Snapshot
	body, err := snap.MarshalFile()
	if err != nil {
		return err
	}
	if len(body) > snapshot.MaxFileSize {
		return fmt.Errorf("%w: snapshot is %d bytes (limit %d)", snapshot.ErrTooLarge, len(body), snapshot.MaxFileSize)
	}
	if _, err := e.v.BlobHash(res.Path); errors.Is(err, ErrNotExist) {
		e.files[res.Path] = body
		return nil
	} else if err != nil {
		return err
	}
	existing, _, err := e.v.Snapshot(repoID, snap.SnapshotID)
	if err != nil || existing.VerifyIntegrity() != nil {
		return fmt.Errorf("%w: %s holds a damaged snapshot: run 'git ctx verify'", ErrCorrupt, res.Path)
	}
	res.Snapshot = existing
	return nil
}

// addTimelineLine appends snap's entry to the device's timeline (nsegs
// segments holding lines) as a line signed by the device for its position
// (seq is the line's index, prev chains over every line before it), in the
// last segment or a new one.
func (e *branchEdit) addTimelineLine(req SnapshotRequest, nsegs int, lines []snapshot.TimelineLine, snap *snapshot.Snapshot) error {
	dev := req.Device
	prev := snapshot.GenesisPrev
	for _, l := range lines {
		prev = snapshot.NextPrev(prev, l.Bytes())
	}
	line, err := snapshot.SignTimelineLine(dev.Key, req.RepoID, dev.ID, uint64(len(lines)), prev, snap.TimelineEntry())
	if err != nil {
		return err
	}
	idx, last := 0, []snapshot.TimelineLine(nil)
	if nsegs > 0 {
		idx = nsegs - 1
		last = lines[idx*SegmentLines:]
	}
	if len(last) >= SegmentLines {
		idx, last = idx+1, nil
	}
	last = append(append([]snapshot.TimelineLine(nil), last...), line)
	e.files[TimelineSegmentPath(req.RepoID, dev.ID, idx)] = MarshalTimeline(last)
	return nil
}

// TimelineReport is the verification of one device's snapshot timeline.
type TimelineReport struct {
	Repo     string
	Device   string
	Entries  int
	Verified int
	// Unsigned counts the verified entries on legacy lines that no line
	// signature of the device vouches for (a timeline written before lines
	// were signed); they are not the device's authenticated statement.
	Unsigned int
	Failure  *chain.TimelineFailure
}

// verifySnapshots checks t's repository's timelines (chain.VerifyTimeline)
// and snapshot files: every file is named by some timeline, and no path lies
// outside the layout.
func (v *View) verifySnapshots(t *verifyTree, keys map[string]ed25519.PublicKey, rep *Report, problem func(string, string, ...any)) error {
	repoID := t.repo
	files, bad, err := v.WalkSnapshots(repoID)
	if err != nil {
		return err
	}
	for _, b := range bad {
		problem(b, "not a snapshot file name of the %s layout", v.Layout)
	}
	t.snapshots = map[string]plumbing.Hash{}
	for _, f := range files {
		t.snapshots[f.ID] = f.Blob
	}
	es, err := v.List(TimelineDir(repoID))
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, e := range es {
		if e.Mode != filemode.Dir {
			problem(path.Join(TimelineDir(repoID), e.Name), "not a timeline of the %s layout", v.Layout)
			continue
		}
		tv, err := chain.VerifyTimeline(t, repoID, e.Name, keys)
		if err != nil {
			return err
		}
		for _, id := range tv.Named {
			named[id] = true
		}
		rep.Timelines = append(rep.Timelines, TimelineReport{Repo: repoID, Device: e.Name, Entries: tv.Entries,
			Verified: tv.Verified, Unsigned: tv.Unsigned, Failure: tv.Failure})
	}
	for _, f := range files {
		if !named[f.ID] {
			problem(f.Path, "snapshot file not named by any timeline")
		}
	}
	return nil
}
