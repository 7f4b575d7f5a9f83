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

	"github.com/git-ctx/git-ctx/formats/checkpoint"
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
	es, err := v.List(TimelineDir(repoID))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if e.Mode == filemode.Dir {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// timelineSegments returns the blob ids of device's timeline segments, in
// order; they must be exactly 00000000.jsonl … N.jsonl, regular files.
func (v *View) timelineSegments(repoID, device string) ([]plumbing.Hash, error) {
	dir := path.Join(TimelineDir(repoID), device)
	es, err := v.List(dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	out := make([]plumbing.Hash, 0, len(es))
	for i, e := range es {
		if e.Name != SegmentName(i) || e.Mode != filemode.Regular {
			return nil, fmt.Errorf("%w: unexpected entry %s/%s in a timeline", ErrCorrupt, dir, e.Name)
		}
		out = append(out, e.Hash)
	}
	return out, nil
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

// Reasons of CheckTimelineLines (docs/FORMAT.md §2.3).
const (
	// ReasonUnsignedLine: a timeline line without the owner's line
	// signature where one is required.
	ReasonUnsignedLine = "unsigned_timeline_entry"
	// ReasonBadLineSig: a line signature that does not verify under the
	// timeline owner's key for this repository, device and position.
	ReasonBadLineSig = "bad_timeline_signature"
	// ReasonMisplacedLine: a validly signed line at another position than
	// the one it was signed for (seq or prev differ): moved or replayed.
	ReasonMisplacedLine = "misplaced_timeline_entry"
)

// LineAuth is the verdict of CheckTimelineLines on one timeline.
type LineAuth struct {
	// Attested: lines [0, Attested) are vouched for by the owner: each is
	// signed, or lies before a signed line, whose prev chains over it.
	Attested int
	// Good: lines [0, Good) pass the line checks; [Attested, Good) are
	// legacy lines no signed line covers (only when the timeline holds no
	// signed line at all). Line Good, when Good < len(lines), fails with
	// Reason and Detail.
	Good           int
	Reason, Detail string
}

// CheckTimelineLines checks the line signatures of device's timeline in
// repoID under the device's published key (nil when it has none): every
// signed line verifies, its seq is its 0-based position and its prev is the
// chained hash of the lines before it (snapshot.NextPrev from GenesisPrev).
// Unsigned (legacy) lines are accepted only before a signed line, which then
// covers them, or in a timeline with no signed line at all; an unsigned line
// after the last signed one is ReasonUnsignedLine. It does not look at the
// snapshot files (CheckTimelineEntry does).
func CheckTimelineLines(repoID, device string, lines []snapshot.TimelineLine, key ed25519.PublicKey) LineAuth {
	a := LineAuth{Good: len(lines)}
	prev := snapshot.GenesisPrev
	for i, l := range lines {
		if l.LineSigned() {
			fail := func(reason, format string, args ...any) LineAuth {
				a.Good, a.Reason, a.Detail = i, reason, fmt.Sprintf(format, args...)
				return a
			}
			if key == nil {
				return fail("unknown_key", "no public key for %s on the branch to check its timeline lines", device)
			}
			if !l.VerifyLine(key, repoID, device) {
				return fail(ReasonBadLineSig, "the line is not signed by %s's key for this position of its timeline", device)
			}
			if l.Seq != uint64(i) || l.Prev != prev {
				return fail(ReasonMisplacedLine, "%s signed this line for position %d after other lines; here it is line %d", device, l.Seq+1, i+1)
			}
			a.Attested = i + 1
		}
		prev = snapshot.NextPrev(prev, l.Bytes())
	}
	if a.Attested > 0 && a.Attested < len(lines) {
		a.Good, a.Reason = a.Attested, ReasonUnsignedLine
		a.Detail = fmt.Sprintf("an unsigned line after %s's signed lines (no signed line of %s vouches for it)", device, device)
	}
	return a
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
	dir := SnapshotDir(repoID)
	top, err := v.List(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range top {
		p := path.Join(dir, d.Name)
		if d.Mode != filemode.Dir || len(d.Name) != 2 || !isHex(d.Name) {
			bad = append(bad, p)
			continue
		}
		es, err := v.List(p)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			full := path.Join(p, e.Name)
			id, ok := strings.CutSuffix(e.Name, ".json")
			if !ok || e.Mode != filemode.Regular || !validStoredID(id) || SnapshotPath(repoID, id) != full {
				bad = append(bad, full)
				continue
			}
			good = append(good, SnapshotEntry{Path: full, ID: id, Blob: e.Hash})
		}
	}
	return good, bad, nil
}

// SignerDevice finds the device whose published key is pub ("" if none).
type SignerDevice func(pub ed25519.PublicKey) string

// CheckTimelineEntry verifies one timeline entry of device against the
// snapshot file it names (raw; nil when missing): the file parses, its id
// is the entry's and verifies (integrity), it is signed by a key published
// on the branch — device's own, or (an imported snapshot) another device's —
// and every field of the entry matches the snapshot. It returns a short
// reason and a detail, or "" when the entry verifies.
func CheckTimelineEntry(e snapshot.TimelineEntry, raw []byte, device string, deviceKey ed25519.PublicKey, signer SignerDevice) (reason, detail string) {
	if raw == nil {
		return "missing_snapshot", "the timeline names a snapshot file that does not exist"
	}
	s, err := snapshot.ParseFile(raw)
	if err != nil {
		return "malformed_snapshot", err.Error()
	}
	if s.SnapshotID != e.SnapshotID {
		return "id_mismatch", fmt.Sprintf("the file holds snapshot %s", snapshot.ShortID(s.SnapshotID))
	}
	if err := s.VerifyIntegrity(); err != nil {
		return "bad_id", err.Error()
	}
	if s.Signature == nil {
		return "unsigned", "the snapshot carries no signature"
	}
	ok, err := s.Verify(nil)
	if err != nil {
		return "bad_signature", err.Error()
	}
	if !ok {
		return "bad_signature", "signature verification failed"
	}
	key, _ := s.SignerKey()
	if deviceKey == nil || !ed25519.PublicKey(key).Equal(deviceKey) {
		if signer == nil || signer(key) == "" {
			return "unknown_signer", fmt.Sprintf("signed by %s, not by %s's key nor any device key on the branch", checkpoint.Fingerprint(key), device)
		}
	}
	if got := s.TimelineEntry(); !entryEqual(got, e) {
		return "entry_mismatch", "the timeline entry's fields do not match the snapshot"
	}
	return "", ""
}

func entryEqual(a, b snapshot.TimelineEntry) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.SnapshotID == b.SnapshotID && eq(a.ParentID, b.ParentID) && a.CreatedAt == b.CreatedAt &&
		eq(a.GitCommit, b.GitCommit) && eq(a.GitBranch, b.GitBranch) && a.TokensSaved == b.TokensSaved && a.Signed == b.Signed
}

// EntryEqual reports whether two timeline entries are identical.
func EntryEqual(a, b snapshot.TimelineEntry) bool { return entryEqual(a, b) }

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
	return lockedRetry(ctx, s, func() (*SnapshotResult, error) { return s.appendSnapshotOnce(ctx, req) })
}

func (s *Store) appendSnapshotOnce(ctx context.Context, req SnapshotRequest) (*SnapshotResult, error) {
	tip, err := s.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, ErrNotInitialized
	}
	v, err := s.ViewAt(tip)
	if err != nil {
		return nil, err
	}
	if v.Layout != LayoutCtxV1 {
		return nil, ErrSnapshotLayout
	}
	dev := req.Device
	files := map[string][]byte{}
	publish, err := needsKey(v, dev)
	if err != nil {
		return nil, err
	}
	if publish {
		files[DeviceKeyPath(dev.ID)] = checkpoint.EncodePublicKey(dev.public())
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
	res := &SnapshotResult{Snapshot: snap, Path: SnapshotPath(req.RepoID, snap.SnapshotID)}
	for _, e := range entries {
		if e.SnapshotID == snap.SnapshotID {
			res.Existed = true
			return res, nil
		}
	}
	body, err := snap.MarshalFile()
	if err != nil {
		return nil, err
	}
	if len(body) > snapshot.MaxFileSize {
		return nil, fmt.Errorf("%w: snapshot is %d bytes (limit %d)", snapshot.ErrTooLarge, len(body), snapshot.MaxFileSize)
	}
	// The file is content-addressed by id; an existing file with this id
	// (another device's, or an earlier import) is kept as it is, and the
	// entry describes that file.
	if _, err := v.BlobHash(res.Path); errors.Is(err, ErrNotExist) {
		files[res.Path] = body
	} else if err != nil {
		return nil, err
	} else if existing, _, err := v.Snapshot(req.RepoID, snap.SnapshotID); err == nil && existing.VerifyIntegrity() == nil {
		snap, res.Snapshot = existing, existing
	} else {
		return nil, fmt.Errorf("%w: %s holds a damaged snapshot: run 'git ctx verify'", ErrCorrupt, res.Path)
	}
	// The new line, signed by this device for its position: seq is the
	// line's index, prev chains over every line before it.
	prev := snapshot.GenesisPrev
	for _, l := range lines {
		prev = snapshot.NextPrev(prev, l.Bytes())
	}
	line, err := snapshot.SignTimelineLine(dev.Key, req.RepoID, dev.ID, uint64(len(lines)), prev, snap.TimelineEntry())
	if err != nil {
		return nil, err
	}
	// Append the line to the last segment, or start a new one.
	idx, last := 0, []snapshot.TimelineLine(nil)
	if len(segs) > 0 {
		idx = len(segs) - 1
		last = lines[idx*SegmentLines:]
	}
	if len(last) >= SegmentLines {
		idx, last = idx+1, nil
	}
	last = append(append([]snapshot.TimelineLine(nil), last...), line)
	files[TimelineSegmentPath(req.RepoID, dev.ID, idx)] = MarshalTimeline(last)
	tree, err := s.treeWith(v.Root, files)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	msg := fmt.Sprintf("ctx: snapshot %s by %s\n\nSnapshot: %s\n", snapshot.ShortID(snap.SnapshotID), dev.ID, snap.SnapshotID)
	commit, err := s.writeCommit(tree, []plumbing.Hash{tip}, req.Author.signature(now), msg)
	if err != nil {
		return nil, err
	}
	if err := s.casRef(ctx, tip, commit, "ctx: snapshot"); err != nil {
		return nil, err
	}
	res.Commit = commit
	return res, nil
}

// TimelineReport is the verification of one device's snapshot timeline.
type TimelineReport struct {
	Repo     string `json:"repo"`
	Device   string `json:"device"`
	Entries  int    `json:"entries"`
	Verified int    `json:"verified"`
	// Unsigned counts the verified entries on legacy lines that no line
	// signature of the device vouches for (a timeline written before lines
	// were signed); they are not the device's authenticated statement.
	Unsigned int              `json:"unsigned"`
	Failure  *TimelineFailure `json:"failure,omitempty"`
}

// TimelineFailure names the first bad entry of a timeline.
type TimelineFailure struct {
	Index    int    `json:"index"` // 0-based; -1 when the timeline itself is unreadable
	Snapshot string `json:"snapshot,omitempty"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
}

func (f *TimelineFailure) Error() string {
	if f.Index < 0 {
		return fmt.Sprintf("%s: %s", f.Reason, f.Detail)
	}
	return fmt.Sprintf("entry %d (snapshot %s): %s: %s", f.Index+1, snapshot.ShortID(f.Snapshot), f.Reason, f.Detail)
}

// KeySigner returns a SignerDevice over keys (device id → key).
func KeySigner(keys map[string]ed25519.PublicKey) SignerDevice {
	return func(pub ed25519.PublicKey) string {
		ids := make([]string, 0, len(keys))
		for id := range keys {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if keys[id].Equal(pub) {
				return id
			}
		}
		return ""
	}
}

// verifySnapshots checks repoID's timelines and snapshot files: every entry
// verifies (CheckTimelineEntry), every file is named by some timeline, and
// no path lies outside the layout.
func (v *View) verifySnapshots(repoID string, keys map[string]ed25519.PublicKey, rep *Report, problem func(string, string, ...any)) error {
	files, bad, err := v.WalkSnapshots(repoID)
	if err != nil {
		return err
	}
	for _, b := range bad {
		problem(b, "not a snapshot file name of the %s layout", v.Layout)
	}
	blobs := map[string]plumbing.Hash{}
	for _, f := range files {
		blobs[f.ID] = f.Blob
	}
	es, err := v.List(TimelineDir(repoID))
	if err != nil {
		return err
	}
	named := map[string]bool{}
	signer := KeySigner(keys)
	for _, e := range es {
		if e.Mode != filemode.Dir {
			problem(path.Join(TimelineDir(repoID), e.Name), "not a timeline of the %s layout", v.Layout)
			continue
		}
		tr := TimelineReport{Repo: repoID, Device: e.Name}
		lines, err := v.TimelineLines(repoID, e.Name)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
				return err
			}
			tr.Failure = &TimelineFailure{Index: -1, Reason: "malformed_timeline", Detail: err.Error()}
		}
		auth := CheckTimelineLines(repoID, e.Name, lines, keys[e.Name])
		tr.Entries = len(lines)
		for i, l := range lines {
			te := l.Entry
			named[te.SnapshotID] = true
			if tr.Failure != nil {
				continue
			}
			if i == auth.Good {
				tr.Failure = &TimelineFailure{Index: i, Snapshot: te.SnapshotID, Reason: auth.Reason, Detail: auth.Detail}
				continue
			}
			var raw []byte
			if h, ok := blobs[te.SnapshotID]; ok {
				if raw, err = v.s.readBlob(h, snapshot.MaxFileSize); err != nil {
					if !errors.Is(err, ErrTooLarge) {
						return err
					}
					raw = []byte{}
				}
			}
			if reason, detail := CheckTimelineEntry(te, raw, e.Name, keys[e.Name], signer); reason != "" {
				tr.Failure = &TimelineFailure{Index: i, Snapshot: te.SnapshotID, Reason: reason, Detail: detail}
				continue
			}
			tr.Verified++
			if i >= auth.Attested {
				tr.Unsigned++
			}
		}
		rep.Timelines = append(rep.Timelines, tr)
	}
	for _, f := range files {
		if !named[f.ID] {
			problem(f.Path, "snapshot file not named by any timeline")
		}
	}
	return nil
}
