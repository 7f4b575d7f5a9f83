package gitstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/snapshot"
)

func testSnapshot(t *testing.T, n int, parent *snapshot.TimelineEntry, key Device, sign bool) *snapshot.Snapshot {
	t.Helper()
	s := snapshot.New(fmt.Sprintf("2026-01-01T00:00:%02d.%06d+00:00", n%60, n), "test")
	commit, branch := strings.Repeat("a", 40), "main"
	s.Git.Commit, s.Git.Branch = &commit, &branch
	s.ROI.TokensSaved = uint64(n)
	if parent != nil {
		id := parent.SnapshotID
		s.ParentID = &id
	}
	var err error
	if sign {
		err = s.Sign(key.Key)
	} else {
		err = s.Finalize()
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedSnapshotRequest appends test snapshot n, signed by d, on d's
// timeline.
func signedSnapshotRequest(t *testing.T, d Device, n int) SnapshotRequest {
	return SnapshotRequest{RepoID: repoID, Device: d,
		Build: func(head *snapshot.TimelineEntry) (*snapshot.Snapshot, error) {
			return testSnapshot(t, n, head, d, true), nil
		}}
}

func TestAppendSnapshot(t *testing.T) {
	s, dir, d := initStore(t, "dev-a", InitOptions{Layout: LayoutCtxV1})
	ctx := context.Background()
	ids := appendSnapshotChain(t, ctx, s, d)
	v := checkSnapshotTimeline(t, s, dir, ids)
	last := checkStoredSnapshot(t, v, dir, ids)
	checkSnapshotReappend(t, ctx, s, d, last)
	checkSnapshotImported(t, ctx, s, last, len(ids))
	git(t, dir, "fsck", "--strict", "--no-progress")
}

// appendSnapshotChain appends SegmentLines+2 signed snapshots on d's
// timeline, each the child of the last; returns their ids in order.
func appendSnapshotChain(t *testing.T, ctx context.Context, s *Store, d Device) []string {
	t.Helper()
	var ids []string
	// 130 snapshots cross a segment boundary.
	for i := 0; i < SegmentLines+2; i++ {
		res, err := s.AppendSnapshot(ctx, SnapshotRequest{RepoID: repoID, Device: d,
			Build: func(head *snapshot.TimelineEntry) (*snapshot.Snapshot, error) {
				if (head == nil) != (i == 0) || head != nil && head.SnapshotID != ids[len(ids)-1] {
					t.Fatalf("snapshot %d: head %+v", i, head)
				}
				return testSnapshot(t, i, head, d, true), nil
			}})
		if err != nil || res.Existed {
			t.Fatalf("append %d: %+v %v", i, res, err)
		}
		id := res.Snapshot.SnapshotID
		if res.Path != "repos/"+repoID+"/snapshots/"+id[:2]+"/"+id+".json" {
			t.Fatalf("path %s", res.Path)
		}
		ids = append(ids, id)
	}
	return ids
}

// checkSnapshotTimeline: the timeline lists ids in order, linked and
// signed, over two segments; returns the view it read.
func checkSnapshotTimeline(t *testing.T, s *Store, dir string, ids []string) *View {
	t.Helper()
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	tl, err := v.Timeline(repoID, "dev-a")
	if err != nil || len(tl) != len(ids) {
		t.Fatalf("timeline: %d %v", len(tl), err)
	}
	for i, e := range tl {
		if e.SnapshotID != ids[i] || i > 0 && (e.ParentID == nil || *e.ParentID != ids[i-1]) || !e.Signed {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	seg0 := git(t, dir, "show", BranchRef+":"+TimelineSegmentPath(repoID, "dev-a", 0))
	if n := strings.Count(seg0, "\n") + 1; n != SegmentLines {
		t.Fatalf("segment 0 has %d lines", n)
	}
	seg1 := git(t, dir, "show", BranchRef+":repos/"+repoID+"/timelines/dev-a/00000001.jsonl")
	if n := strings.Count(seg1, "\n") + 1; n != 2 {
		t.Fatalf("segment 1 has %d lines", n)
	}
	return v
}

// checkStoredSnapshot: the last snapshot's file and commit subject; returns
// the snapshot.
func checkStoredSnapshot(t *testing.T, v *View, dir string, ids []string) *snapshot.Snapshot {
	t.Helper()
	// The stored file is exactly MarshalFile's bytes.
	last, raw, err := v.Snapshot(repoID, ids[len(ids)-1])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := last.MarshalFile()
	if string(raw) != string(want) || !strings.HasPrefix(string(raw), "{\n  \"schema_version\": 1,") {
		t.Fatalf("stored file:\n%s", raw)
	}
	if msg := git(t, dir, "log", "-1", "--format=%s", BranchRef); msg != "ctx: snapshot "+ids[len(ids)-1][:12]+" by dev-a" {
		t.Fatalf("commit subject %q", msg)
	}
	return last
}

// checkSnapshotReappend: the same id again writes nothing.
func checkSnapshotReappend(t *testing.T, ctx context.Context, s *Store, d Device, last *snapshot.Snapshot) {
	t.Helper()
	tip, _ := s.Tip()
	res, err := s.AppendSnapshot(ctx, SnapshotRequest{RepoID: repoID, Device: d,
		Build: func(*snapshot.TimelineEntry) (*snapshot.Snapshot, error) { return last, nil }})
	if err != nil || !res.Existed {
		t.Fatalf("re-append: %+v %v", res, err)
	}
	if tip2, _ := s.Tip(); tip2 != tip {
		t.Fatal("idempotent append moved the branch")
	}
}

// checkSnapshotImported: another device imports dev-a's snapshot: the file
// is shared, the entry goes on dev-b's timeline, and the branch verifies
// (dev-a's timeline with all n entries).
func checkSnapshotImported(t *testing.T, ctx context.Context, s *Store, last *snapshot.Snapshot, n int) {
	t.Helper()
	b := device(t, "dev-b", 2)
	res, err := s.AppendSnapshot(ctx, SnapshotRequest{RepoID: repoID, Device: b,
		Build: func(head *snapshot.TimelineEntry) (*snapshot.Snapshot, error) { return last, nil }})
	if err != nil || res.Existed {
		t.Fatalf("import on dev-b: %+v %v", res, err)
	}
	v, _ := s.View()
	if devs, _ := v.TimelineDevices(repoID); len(devs) != 2 {
		t.Fatalf("timeline devices %v", devs)
	}
	if rep := mustVerify(t, v); !rep.OK || len(rep.Timelines) != 2 || rep.Timelines[0].Verified != n {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestAppendSnapshotGhyllV1(t *testing.T) {
	s, _, d := initStore(t, "dev-a", InitOptions{Layout: LayoutGhyllV1})
	_, err := s.AppendSnapshot(context.Background(), signedSnapshotRequest(t, d, 0))
	if !errors.Is(err, ErrSnapshotLayout) {
		t.Fatalf("ghyll-v1: %v", err)
	}
}

func TestVerifyCatchesSnapshotTampering(t *testing.T) {
	s, dir, d := initStore(t, "dev-a", InitOptions{Layout: LayoutCtxV1})
	res, err := s.AppendSnapshot(context.Background(), signedSnapshotRequest(t, d, 3))
	if err != nil {
		t.Fatal(err)
	}
	raw := git(t, dir, "show", BranchRef+":"+res.Path)
	bad := strings.Replace(raw, `"tokens_saved": 3`, `"tokens_saved": 4`, 1)
	base, _ := s.View()
	v := editView(t, s, base, map[string][]byte{res.Path: []byte(bad)}, "tamper\n")
	if rep := mustVerify(t, v); rep.OK || len(rep.Timelines) != 1 || rep.Timelines[0].Failure == nil || rep.Timelines[0].Failure.Reason != "bad_id" {
		t.Fatalf("verify of a tampered snapshot: %+v", rep.Timelines)
	}
}

// TestVerifyRefusesReplayedTimelineEntry: a timeline line repeated (each
// copy naming the same authentic, signed snapshot) is a malformed
// timeline, not a second import. Found by the tamper corpus
// (integration/tamper_corpus_test.go): pull merged such a timeline.
func TestVerifyRefusesReplayedTimelineEntry(t *testing.T) {
	s, dir, d := initStore(t, "dev-a", InitOptions{Layout: LayoutCtxV1})
	res, err := s.AppendSnapshot(context.Background(), signedSnapshotRequest(t, d, 3))
	if err != nil {
		t.Fatal(err)
	}
	seg := TimelineSegmentPath(repoID, d.ID, 0)
	line := git(t, dir, "show", BranchRef+":"+seg) + "\n" // git() trims the output
	if strings.Count(line, "\n") != 1 {
		t.Fatalf("setup: timeline %q", line)
	}
	base, _ := s.View()
	v := editView(t, s, base, map[string][]byte{seg: []byte(line + line)}, "replay\n")
	if _, err := v.Timeline(repoID, d.ID); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("timeline with a repeated entry: %v, want ErrCorrupt", err)
	}
	if rep := mustVerify(t, v); rep.OK || len(rep.Timelines) != 1 || rep.Timelines[0].Failure == nil ||
		rep.Timelines[0].Failure.Reason != "malformed_timeline" {
		t.Fatalf("verify of a replayed timeline entry (snapshot %s): %+v", res.Path, rep.Timelines)
	}
}
