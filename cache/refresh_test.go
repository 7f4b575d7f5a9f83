package cache_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

func TestCacheEqualsBranch(t *testing.T) {
	for _, layout := range []gitstore.Layout{gitstore.LayoutCtxV1, gitstore.LayoutGhyllV1} {
		t.Run(string(layout), func(t *testing.T) { testCacheEqualsBranch(t, layout) })
	}
}

func testCacheEqualsBranch(t *testing.T, layout gitstore.Layout) {
	w, repo, a := initDev(t, layout)
	ctx := workspacetest.Ctx(t)
	// Before any checkpoint: an empty cache equals an empty branch.
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)

	// Appends through checkpoints.Record: nil and empty lists, escapes,
	// embeddings, sessions.
	a.Record(t, workspacetest.Say("first <b>bold</b> & \"quoted\" \u2028 → done"))
	a.Record(t, checkpoints.RecordInput{Summary: "empty lists", Files: []string{}, Tools: []string{}, Embedding: []float32{}})
	a.Record(t, checkpoints.RecordInput{Summary: "full", Session: "s1", Model: "m25", Files: []string{"auth.go", "x/y.go"},
		Tools: []string{"edit"}, Injections: []string{"instruction_override"}, Embedding: []float32{0.1, -2.5, 1e-7}})
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	a.Record(t, workspacetest.Say("after a refresh"))
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)

	// A second clone and device moves the branch; the first repository
	// takes it with plain git.
	other := filepath.Join(w.Root, "other")
	workspacetest.Git(t, w.Root, "clone", "-q", repo, other)
	workspacetest.Git(t, other, "fetch", "-q", "origin", "+"+gitstore.BranchRef+":"+gitstore.BranchRef)
	// First under another repository id (as an older git-ctx deriving the
	// id from the clone's origin URL wrote): the branch then holds two
	// repositories.
	b0 := workspacetest.Open(t, other, w.Home("b"))
	id0, err := b0.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b0.Store.Append(ctx, gitstore.AppendRequest{RepoID: gitrepo.HashID("another/repository"),
		Device: gitstore.Device{ID: id0.DeviceID, Key: id0.Private},
		Drafts: []gitstore.Draft{{Summary: "from the clone, its own repository", RepoRemote: "another/repository"}}}); err != nil {
		t.Fatal(err)
	}
	workspacetest.Git(t, other, "config", "ctx.repoId", a.MustRepoID(t))
	b := workspacetest.Open(t, other, w.Home("b"))
	if b.MustDeviceID(t) == a.MustDeviceID(t) || b.MustRepoID(t) != a.MustRepoID(t) {
		t.Fatalf("setup: devices %s %s, repos %s %s", a.MustDeviceID(t), b.MustDeviceID(t), a.MustRepoID(t), b.MustRepoID(t))
	}
	b.Record(t, workspacetest.Say("from the clone 1"))
	b.Record(t, checkpoints.RecordInput{Summary: "from the clone 2", Files: []string{"b.go"}})
	workspacetest.Git(t, repo, "fetch", "-q", other, "+"+gitstore.BranchRef+":"+gitstore.BranchRef)
	got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if len(got) != 7 {
		t.Fatalf("cache holds %d checkpoints, want 7", len(got))
	}
	if n := a.Notes.Take(); workspacetest.ContainsAny(n, "rebuilding") {
		t.Errorf("a fast-forward of the branch rebuilt the cache: %q", n)
	}

	// Both sides append, then the first moves its ref with update-ref.
	a.Record(t, workspacetest.Say("a again"))
	workspacetest.Git(t, other, "fetch", "-q", "origin", "+"+gitstore.BranchRef+":"+gitstore.BranchRef)
	b.Record(t, workspacetest.Say("b again"))
	workspacetest.Git(t, repo, "fetch", "-q", other, gitstore.BranchRef)
	workspacetest.Git(t, repo, "update-ref", gitstore.BranchRef, "FETCH_HEAD")
	got = workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if len(got) != 9 {
		t.Fatalf("cache holds %d checkpoints, want 9", len(got))
	}
	workspacetest.CacheEqualsBranch(t, b.Workspace, nil)
	if n := a.Notes.Take(); workspacetest.ContainsAny(n, "rebuilding") {
		t.Errorf("a fast-forward of the branch rebuilt the cache: %q", n)
	}

	// Reindex.
	if err := a.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)

	// cache.db deleted.
	p := cache.Path(a.CacheDir())
	for _, f := range []string{p, p + "-wal", p + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	a.Notes.Take()
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if n := a.Notes.Take(); !workspacetest.ContainsAny(n, "building the cache") {
		t.Errorf("no notice when building a missing cache: %q", n)
	}

	// Garbage in cache.db: rebuilt, with a notice.
	if err := os.WriteFile(p, []byte(strings.Repeat("garbage, not SQLite\n", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if n := a.Notes.Take(); !workspacetest.ContainsAny(n, "rebuilding the cache") {
		t.Errorf("no rebuild notice for a damaged cache: %q", n)
	}

	// A cache of another schema version: rebuilt too.
	db, err := a.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	execCache(t, a.Workspace, `UPDATE meta SET value = '0' WHERE key = 'schema'`)
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if n := a.Notes.Take(); !workspacetest.ContainsAny(n, "rebuilding the cache") {
		t.Errorf("no rebuild notice for another schema: %q", n)
	}

	// Every query goes through the refresh: Log sees a new append at once.
	h := a.Record(t, workspacetest.Say("seen by log"))
	es, err := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{Limit: 1})
	if err != nil || len(es) != 1 || es[0].Hash != h {
		t.Fatalf("Log after an append: %v %v", es, err)
	}
}

func TestCacheRewrittenHistory(t *testing.T) {
	t.Run("reset then different appends", func(t *testing.T) {
		_, _, a := initDev(t, "")
		a.Record(t, workspacetest.Say("one"))
		afterOne := a.MustTip(t)
		a.Record(t, workspacetest.Say("two"))
		a.Record(t, workspacetest.Say("three"))
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		workspacetest.Git(t, a.Dir, "update-ref", gitstore.BranchRef, afterOne)
		a.Record(t, workspacetest.Say("two, rewritten"))
		a.Record(t, workspacetest.Say("three, rewritten"))
		got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		if len(got) != 3 {
			t.Fatalf("cache holds %d checkpoints, want 3", len(got))
		}
		if n := a.Notes.Take(); !workspacetest.ContainsAny(n, "rewritten") {
			t.Errorf("no notice about the rewritten history: %q", n)
		}
	})
	t.Run("reset without appends", func(t *testing.T) {
		_, _, a := initDev(t, "")
		a.Record(t, workspacetest.Say("one"))
		afterOne := a.MustTip(t)
		a.Record(t, workspacetest.Say("two"))
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		workspacetest.Git(t, a.Dir, "update-ref", gitstore.BranchRef, afterOne)
		if got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil); len(got) != 1 {
			t.Fatalf("cache holds %d checkpoints, want 1", len(got))
		}
	})
	// aThenB: device a records "a one", then a second device b on the same
	// repository "b one"; returns the repository, a and the tip between.
	aThenB := func(t *testing.T) (string, *workspacetest.Dev, string) {
		w, repo, a := initDev(t, "")
		a.Record(t, workspacetest.Say("a one"))
		tip := a.MustTip(t)
		workspacetest.Open(t, repo, w.Home("b")).Record(t, workspacetest.Say("b one"))
		return repo, a, tip
	}
	t.Run("another device's chain disappears", func(t *testing.T) {
		repo, a, beforeB := aThenB(t)
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		// The branch goes back to before b's first checkpoint: b's chain
		// and key are gone, a's chain is unchanged.
		workspacetest.Git(t, repo, "update-ref", gitstore.BranchRef, beforeB)
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		a.Record(t, workspacetest.Say("a two"))
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	})
	t.Run("reset to another history with the same chain prefix", func(t *testing.T) {
		repo, a, base := aThenB(t)
		a.Record(t, workspacetest.Say("a two"))
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		// Another history from base: only a appends; b's record is gone.
		workspacetest.Git(t, repo, "update-ref", gitstore.BranchRef, base)
		a.Record(t, workspacetest.Say("a two, elsewhere"))
		a.Record(t, workspacetest.Say("a three"))
		workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	})
}

func TestCacheTamperedRecord(t *testing.T) {
	for _, when := range []string{"not yet cached", "already cached"} {
		t.Run(when, func(t *testing.T) {
			_, _, a := initDev(t, "")
			ctx := workspacetest.Ctx(t)
			c1 := a.Record(t, workspacetest.Say("cp 1"))
			workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
			c2 := a.Record(t, workspacetest.Say("cp 2"))
			c3 := a.Record(t, workspacetest.Say("cp 3"))
			c4 := a.Record(t, workspacetest.Say("cp 4"))
			if when == "already cached" {
				workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
			}
			repoID := a.MustRepoID(t)
			tamperSummary(t, a, repoID, c2, "cp 2", "cp 2, but better")
			a.Notes.Take()

			bad := map[string]bool{c2: true, c3: true, c4: true}
			got := workspacetest.CacheEqualsBranch(t, a.Workspace, bad)
			if got[c1] == nil || !got[c1].Verified {
				t.Errorf("the record before the tampered one lost its trust")
			}
			if got[c2] != nil && got[c2].Summary != "cp 2, but better" {
				t.Errorf("cache shows summary %q for the tampered record", got[c2].Summary)
			}
			if n := a.Notes.Take(); !workspacetest.ContainsAny(n, "failed verification") {
				t.Errorf("no notice about the failed record: %q", n)
			}
			wantQuarantinedOnce(t, a, repoID, c2, "hash_mismatch")
			un, err := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{Unverified: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(un) != 3 || un[0].Hash != c4 || un[1].Hash != c3 || un[2].Hash != c2 {
				t.Errorf("Log --unverified: %v", entryHashes(un))
			}
			// A later append by the device is not trusted either, and the
			// failure is quarantined once.
			c5 := a.Record(t, workspacetest.Say("cp 5"))
			bad[c5] = true
			workspacetest.CacheEqualsBranch(t, a.Workspace, bad)
			if q, _ := checkpoints.Quarantine(ctx, a.Workspace); len(q) != 1 {
				t.Errorf("quarantine after more refreshes: %+v", q)
			}
			st, err := checkpoints.ReadStatus(ctx, a.Workspace)
			if err != nil {
				t.Fatal(err)
			}
			if st.Quarantined != 1 || st.Checkpoints != 5 {
				t.Errorf("status: quarantined %d checkpoints %d", st.Quarantined, st.Checkpoints)
			}
			// A rebuild comes to the same result.
			if err := a.Reindex(ctx); err != nil {
				t.Fatal(err)
			}
			workspacetest.CacheEqualsBranch(t, a.Workspace, bad)
		})
	}
}

// tamperSummary edits the summary of checkpoint hash of repoID on the
// branch of a from was to now, in place (a plumbing commit).
func tamperSummary(t *testing.T, a *workspacetest.Dev, repoID, hash, was, now string) {
	t.Helper()
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	p := v.CheckpointPath(repoID, hash)
	raw, err := v.CheckpointFile(repoID, hash)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"summary": "`+was+`"`, `"summary": "`+now+`"`, 1)
	if edited == string(raw) {
		t.Fatalf("setup: summary not found in %s", raw)
	}
	workspacetest.EditBranch(t, a.Dir, "edit a summary", map[string]string{p: edited})
}

// wantQuarantinedOnce checks that the quarantine lists record of a's
// device in repoID exactly once, for reason.
func wantQuarantinedOnce(t *testing.T, a *workspacetest.Dev, repoID, record, reason string) {
	t.Helper()
	q, err := checkpoints.Quarantine(workspacetest.Ctx(t), a.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, x := range q {
		if x.Record == record && x.Reason == reason && x.Device == a.MustDeviceID(t) && x.RepoID == repoID {
			found++
		}
	}
	if found != 1 {
		t.Errorf("quarantine rows for %s with %s: %d, want 1 (all: %+v)", record[:12], reason, found, q)
	}
}

func entryHashes(es []*cache.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Hash[:12]
	}
	return out
}

// execCache runs one statement on cache.db directly.
func execCache(t *testing.T, m *workspace.Workspace, q string) {
	t.Helper()
	db := workspacetest.OpenRaw(t, m)
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestCacheAcrossSegments: incremental refreshes that start inside one
// ctx-v1 chain segment and end in the next.
func TestCacheAcrossSegments(t *testing.T) {
	_, _, a := initDev(t, gitstore.LayoutCtxV1)
	n := 0
	for ; n < gitstore.SegmentLines-1; n++ {
		a.Record(t, workspacetest.Say("cp %d", n))
		if n == 0 || n == gitstore.SegmentLines/2 {
			workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
		}
	}
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil) // the head is the last line of segment 0
	for ; n < gitstore.SegmentLines+2; n++ {
		a.Record(t, workspacetest.Say("cp %d", n))
	}
	if got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil); len(got) != n {
		t.Fatalf("cache holds %d, want %d", len(got), n)
	}
	a.Record(t, workspacetest.Say("cp %d", n))
	n++
	if got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil); len(got) != n {
		t.Fatalf("cache holds %d, want %d", len(got), n)
	}
	if notes := a.Notes.Take(); workspacetest.ContainsAny(notes, "rebuilding") {
		t.Errorf("appends across a segment boundary rebuilt the cache: %q", notes)
	}
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	if id, err := v.ChainID(a.MustRepoID(t), a.MustDeviceID(t)); err != nil || id.IsZero() {
		t.Fatalf("chain: %v", err)
	}
	segs, err := v.List(gitstore.ChainDir(a.MustRepoID(t)) + "/" + a.MustDeviceID(t))
	if err != nil || len(segs) != 2 {
		t.Fatalf("setup: %d segments, want 2 (%v)", len(segs), err)
	}
}
