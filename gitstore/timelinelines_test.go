package gitstore

import (
	"context"
	"testing"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/snapshot"
)

// TestVerifyTimelineLineSignatures: every timeline line git-ctx writes is
// signed by the timeline's owner for its position; verify refuses lines
// forged from other devices' snapshots, lines moved or replayed, and
// unsigned lines after signed ones, and accepts (labelled) a legacy
// unsigned timeline and a legacy prefix a later signed line vouches for.
func TestVerifyTimelineLineSignatures(t *testing.T) {
	s, _, a := initStore(t, "dev-a", InitOptions{Layout: LayoutCtxV1})
	b := device(t, "dev-b", 2)
	add := func(d Device, n int) *snapshot.Snapshot {
		res, err := s.AppendSnapshot(context.Background(), signedSnapshotRequest(t, d, n))
		if err != nil {
			t.Fatal(err)
		}
		return res.Snapshot
	}
	a1, b1, a2 := add(a, 1), add(b, 2), add(a, 3)
	v, _ := s.View()
	la, err := v.TimelineLines(repoID, a.ID)
	if err != nil || len(la) != 2 || !la[0].LineSigned() || !la[1].LineSigned() || la[0].Seq != 0 || la[1].Seq != 1 {
		t.Fatalf("a's timeline: %+v %v", la, err)
	}
	lb, _ := v.TimelineLines(repoID, b.ID)
	if rep, err := v.Verify(); err != nil || !rep.OK {
		t.Fatalf("honest branch: %+v %v", rep, err)
	}
	legacy := func(sn *snapshot.Snapshot) snapshot.TimelineLine {
		l, err := snapshot.LegacyTimelineLine(sn.TimelineEntry())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	signAt := func(d Device, dev string, prefix []snapshot.TimelineLine, sn *snapshot.Snapshot) snapshot.TimelineLine {
		prev := snapshot.GenesisPrev
		for _, l := range prefix {
			prev = snapshot.NextPrev(prev, l.Bytes())
		}
		l, err := snapshot.SignTimelineLine(d.Key, repoID, dev, uint64(len(prefix)), prev, sn.TimelineEntry())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// verifyWith replaces device dev's timeline by lines and verifies.
	verifyWith := func(dev string, lines ...snapshot.TimelineLine) TimelineReport {
		t.Helper()
		rep := mustVerify(t, editView(t, s, v, map[string][]byte{TimelineSegmentPath(repoID, dev, 0): MarshalTimeline(lines)}, "tampered\n"))
		for _, tr := range rep.Timelines {
			if tr.Device == dev {
				if (tr.Failure == nil) != rep.OK {
					t.Fatalf("report OK=%v with timeline failure %+v", rep.OK, tr.Failure)
				}
				return tr
			}
		}
		t.Fatalf("no report for %s", dev)
		return TimelineReport{}
	}
	for _, c := range []struct {
		name   string
		dev    string
		lines  []snapshot.TimelineLine
		reason chain.Reason
		index  int
		unsig  int
	}{
		{"b's signed line appended to a's timeline", a.ID, []snapshot.TimelineLine{la[0], la[1], lb[0]}, chain.BadTimelineSignature, 2, 0},
		{"b's snapshot on a line re-signed by b for a's timeline", a.ID, []snapshot.TimelineLine{la[0], la[1], signAt(b, a.ID, la, b1)}, chain.BadTimelineSignature, 2, 0},
		{"a timeline for a built from b's lines", a.ID, []snapshot.TimelineLine{lb[0]}, chain.BadTimelineSignature, 0, 0},
		{"unsigned line naming b's snapshot after a's signed lines", a.ID, []snapshot.TimelineLine{la[0], la[1], legacy(b1)}, chain.UnsignedTimelineEntry, 2, 0},
		{"a's lines swapped", a.ID, []snapshot.TimelineLine{la[1], la[0]}, chain.MisplacedTimelineEntry, 0, 0},
		{"a's second line without its first", a.ID, []snapshot.TimelineLine{la[1]}, chain.MisplacedTimelineEntry, 0, 0},
		{"a's first line replayed after a legacy line", a.ID, []snapshot.TimelineLine{legacy(b1), la[0]}, chain.MisplacedTimelineEntry, 1, 0},
		{"a's line replayed in b's timeline", b.ID, []snapshot.TimelineLine{lb[0], la[1]}, chain.BadTimelineSignature, 1, 0},
		{"a's first line as b's whole timeline", b.ID, []snapshot.TimelineLine{la[0]}, chain.BadTimelineSignature, 0, 0},
		{"legacy timeline (no signed line)", a.ID, []snapshot.TimelineLine{legacy(a1), legacy(a2)}, "", 0, 2},
		{"legacy prefix a later signed line vouches for", a.ID, []snapshot.TimelineLine{legacy(a1), signAt(a, a.ID, []snapshot.TimelineLine{legacy(a1)}, a2)}, "", 0, 0},
	} {
		checkTimelineReport(t, c.name, verifyWith(c.dev, c.lines...), c.reason, c.index, c.unsig, len(c.lines))
	}
}

// checkTimelineReport: with no reason, tr is OK with unsig unsigned lines
// of n verified; else it fails for reason at entry index.
func checkTimelineReport(t *testing.T, name string, tr TimelineReport, reason chain.Reason, index, unsig, n int) {
	t.Helper()
	if reason == "" {
		if tr.Failure != nil || tr.Unsigned != unsig || tr.Verified != n {
			t.Errorf("%s: %+v (failure %+v), want OK with %d unsigned", name, tr, tr.Failure, unsig)
		}
		return
	}
	if tr.Failure == nil || tr.Failure.Reason != reason || tr.Failure.Index != index {
		t.Errorf("%s: failure %+v, want %s at entry %d", name, tr.Failure, reason, index)
	}
}

// TestAppendSnapshotVouchesForLegacyLines: a device whose timeline was
// written before lines were signed appends a signed line whose prev chains
// over the legacy lines: the whole timeline is then vouched for.
func TestAppendSnapshotVouchesForLegacyLines(t *testing.T) {
	s, _, a := initStore(t, "dev-a", InitOptions{Layout: LayoutCtxV1})
	ctx := context.Background()
	var legacy []snapshot.TimelineLine
	var head *snapshot.TimelineEntry
	files := map[string][]byte{}
	for i := 0; i < 2; i++ {
		sn := testSnapshot(t, i, head, a, true)
		body, err := sn.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		files[SnapshotPath(repoID, sn.SnapshotID)] = body
		l, err := snapshot.LegacyTimelineLine(sn.TimelineEntry())
		if err != nil {
			t.Fatal(err)
		}
		legacy = append(legacy, l)
		e := sn.TimelineEntry()
		head = &e
	}
	files[TimelineSegmentPath(repoID, a.ID, 0)] = MarshalTimeline(legacy)
	base, _ := s.View()
	v := editView(t, s, base, files, "legacy timeline\n")
	if err := s.casRef(ctx, base.Commit, v.Commit, "legacy"); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, v); !rep.OK || len(rep.Timelines) != 1 || rep.Timelines[0].Unsigned != 2 {
		t.Fatalf("legacy timeline: %+v", rep.Timelines)
	}
	if _, err := s.AppendSnapshot(ctx, signedSnapshotRequest(t, a, 5)); err != nil {
		t.Fatal(err)
	}
	v, _ = s.View()
	lines, err := v.TimelineLines(repoID, a.ID)
	if err != nil || len(lines) != 3 || lines[0].LineSigned() || !lines[2].LineSigned() || lines[2].Seq != 2 {
		t.Fatalf("timeline after the append: %+v %v", lines, err)
	}
	if rep := mustVerify(t, v); !rep.OK || rep.Timelines[0].Unsigned != 0 || rep.Timelines[0].Verified != 3 {
		t.Fatalf("after a signed append: %+v", rep.Timelines)
	}
	if auth := chain.CheckTimelineLines(repoID, a.ID, lines, a.public()); auth.Attested != 3 || auth.Good != 3 {
		t.Fatalf("line auth: %+v", auth)
	}
}
