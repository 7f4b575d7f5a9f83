package cache_test

import (
	"context"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/snapshots"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// Snapshots are indexed in the cache: listed from it, newest first, and a
// snapshot file edited in place on the branch makes its entry unverified
// and quarantined after the rebuild that edit triggers.
func TestSnapshotsIndexedInCache(t *testing.T) {
	_, dir, d := initDev(t, "")
	ctx := context.Background()
	d.Record(t, checkpoints.RecordInput{Summary: "first decision", Files: []string{"a.go"}})
	var ids []string
	for i := 0; i < 3; i++ {
		res, err := snapshots.Create(ctx, d.Workspace, snapshots.CreateOptions{Sign: true, From: nil})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Snapshot.SnapshotID)
	}
	list, err := snapshots.List(ctx, d.Workspace, false)
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %d %v", len(list), err)
	}
	for _, e := range list {
		if !e.Verified || e.Device != d.MustDeviceID(t) {
			t.Fatalf("entry %+v", e)
		}
	}
	mine, err := snapshots.List(ctx, d.Workspace, true)
	if err != nil || len(mine) != 3 {
		t.Fatalf("--mine: %d %v", len(mine), err)
	}
	// Edit the middle snapshot's file in place with plumbing.
	repoID, _ := d.RepoID(ctx)
	path := gitstore.SnapshotPath(repoID, ids[1])
	raw := workspacetest.Git(t, dir, "show", gitstore.BranchRef+":"+path)
	edited := strings.Replace(raw, `"created_at": "`, `"created_at": "1`, 1)
	if edited == raw {
		t.Fatal("could not edit the snapshot file")
	}
	workspacetest.EditBranch(t, dir, "tamper", map[string]string{path: edited})
	list, err = snapshots.List(ctx, d.Workspace, false)
	if err != nil || len(list) != 3 {
		t.Fatalf("list after tampering: %d %v", len(list), err)
	}
	unverified := 0
	for _, e := range list {
		if !e.Verified {
			unverified++
		}
	}
	if unverified != 2 { // the edited entry and the one after it
		t.Fatalf("%d unverified entries, want 2: %+v", unverified, list)
	}
	q, err := checkpoints.Quarantine(ctx, d.Workspace)
	if err != nil || len(q) == 0 || q[0].Record != ids[1] {
		t.Fatalf("quarantine: %+v %v", q, err)
	}
}
