package cache_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// pipelineDevices appends, on the branch of a, n records for each of devs
// devices of their own (under the repository id of "pipeline/repository"),
// in one append per device, and returns that id and the device ids.
func pipelineDevices(t *testing.T, a *workspacetest.Dev, devs, n int) (string, []string) {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	const remote = "pipeline/repository"
	repoID := gitrepo.HashID(remote)
	var ids []string
	for d := 0; d < devs; d++ {
		seed := make([]byte, ed25519.SeedSize)
		seed[0], seed[1] = 0x5a, byte(d)
		dev := gitstore.Device{ID: fmt.Sprintf("pipeline-dev-%02d", d), Key: ed25519.NewKeyFromSeed(seed)}
		drafts := make([]gitstore.Draft, n)
		for i := range drafts {
			drafts[i] = gitstore.Draft{Summary: fmt.Sprintf("device %d record %d", d, i), RepoRemote: remote,
				FilesTouched: []string{fmt.Sprintf("f%d.go", i%5)}}
		}
		if _, err := a.Store.Append(ctx, gitstore.AppendRequest{RepoID: repoID, Device: dev, Drafts: drafts}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, dev.ID)
	}
	return repoID, ids
}

// TestRebuildWritesChainsInOrder: chains are verified concurrently, but a
// rebuild writes their rows as a sequential indexing did — chain after
// chain in the order of the branch's chain directory, each in chain order
// — so rowids (FTS5's, ghyll export's tie order) do not depend on which
// verification finished first; and every record is there, verified, once.
func TestRebuildWritesChainsInOrder(t *testing.T) {
	_, _, a := initDev(t, "")
	repoID, devs := pipelineDevices(t, a, 4, 300)
	if err := a.Reindex(workspacetest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	db := workspacetest.OpenRaw(t, a.Workspace)
	defer db.Close()
	rows, err := db.Query(`SELECT r.device, r.seq, c.verified FROM checkpoints c JOIN records r ON r.hash = c.hash
		WHERE r.repo_id = ? ORDER BY c.rowid`, repoID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var dev string
		var seq, verified int
		if err := rows.Scan(&dev, &seq, &verified); err != nil {
			t.Fatal(err)
		}
		if verified != 1 {
			t.Errorf("%s #%d is not verified", dev, seq)
		}
		got = append(got, fmt.Sprintf("%s#%d", dev, seq))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(devs) // the chain directory's order
	var want []string
	for _, d := range devs {
		for i := 0; i < 300; i++ {
			want = append(want, fmt.Sprintf("%s#%d", d, i))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		first := 0
		for first < min(len(got), len(want)) && got[first] == want[first] {
			first++
		}
		t.Fatalf("%d rows in rowid order, want %d; first difference at %d: got %v, want %v", len(got), len(want), first,
			got[first:min(first+3, len(got))], want[first:min(first+3, len(want))])
	}
	// The full-text index has the same rowids.
	var mismatched int
	if err := db.QueryRow(`SELECT count(*) FROM checkpoints c JOIN checkpoints_fts f ON f.rowid = c.rowid
		WHERE f.summary != c.summary`).Scan(&mismatched); err != nil {
		t.Fatal(err)
	}
	if mismatched != 0 {
		t.Errorf("%d full-text rows do not carry their checkpoint's summary", mismatched)
	}
}

// stopAfter is a context whose Err turns context.Canceled after it was
// asked n times (the writer asks before every record): a reindex stopped
// in the middle of its fill, deterministically.
type stopAfter struct {
	context.Context
	left atomic.Int64
}

func (c *stopAfter) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return c.Context.Err()
}

// TestReindexStoppedMidwayKeepsTheCache: a reindex that fails in the middle
// of its fill — while chains longer than the writer's look-ahead are being
// verified, their verifiers blocked on it — returns the error instead of
// hanging, publishes nothing (the cache before it answers as before, no
// half-built file is left beside it), and the next reindex succeeds.
func TestReindexStoppedMidwayKeepsTheCache(t *testing.T) {
	_, _, a := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	a.Record(t, workspacetest.Say("before the pipeline records"))
	db, err := a.Cache(ctx) // the cache as it is before: one record
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	repoID, _ := pipelineDevices(t, a, 2, 1300)

	stop := &stopAfter{Context: ctx}
	stop.left.Store(700)
	err = a.Reindex(stop)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Reindex stopped midway: %v, want context.Canceled", err)
	}
	left, _ := filepath.Glob(filepath.Join(a.CacheDir(), "cache.db.new*"))
	if len(left) != 0 {
		t.Errorf("a stopped rebuild left %v", left)
	}
	// The old file, as it was: it does not know the pipeline records.
	raw := workspacetest.OpenRaw(t, a.Workspace)
	var n, m int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM records WHERE repo_id = ?)`, repoID).Scan(&n, &m); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if n != 1 || m != 0 {
		t.Fatalf("after a stopped reindex the cache holds %d checkpoints, %d of the new chains; want the old 1 and 0", n, m)
	}

	if err := a.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	raw = workspacetest.OpenRaw(t, a.Workspace)
	defer raw.Close()
	if err := raw.QueryRow(`SELECT count(*) FROM records WHERE repo_id = ?`, repoID).Scan(&m); err != nil {
		t.Fatal(err)
	}
	if m != 2600 {
		t.Fatalf("after a reindex the cache holds %d records of the new chains, want 2600", m)
	}
	if _, err := os.Stat(cache.Path(a.CacheDir())); err != nil {
		t.Fatal(err)
	}
}
