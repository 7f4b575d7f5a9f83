package sync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// pfCacheState is what the cache answers about a repository: every entry
// (in Log's order, with its bytes, position and verdict), a full-text
// search, the counts per device and the devices with their keys.
type pfCacheState struct {
	Log     []string
	Search  []string
	Total   int
	Counts  map[string]int
	Devices []string
}

func pfCacheOf(t *testing.T, ctx context.Context, dev *workspacetest.Dev, repoID string) pfCacheState {
	t.Helper()
	db, err := dev.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s pfCacheState
	es, err := db.Log(ctx, cache.Query{RepoID: repoID})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := e.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		s.Log = append(s.Log, fmt.Sprintf("%s %s/%d verified=%v rule=%s %s", e.Hash, e.DeviceID, e.Seq, e.Verified, e.Rule, b))
	}
	hits, err := db.Search(ctx, repoID, "record", 1000, "[", "]")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		s.Search = append(s.Search, fmt.Sprintf("%s %s %g", h.Entry.Hash, h.Snippet, h.Rank))
	}
	if s.Total, s.Counts, err = db.Counts(ctx, repoID); err != nil {
		t.Fatal(err)
	}
	devs, err := db.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		s.Devices = append(s.Devices, d.ID+" "+d.Fingerprint+" "+d.PublicKey)
	}
	sort.Strings(s.Devices)
	return s
}

// pfPullAndCompare pulls origin into c the way Pull does (fetchAndMerge,
// then recordPull), checks that the pull carried every record it merged
// to the cache already parsed (so the cache reads none of them again),
// and that the cache it left answers every query exactly as a cache
// rebuilt from scratch does (Reindex: every record read and verified
// again). It returns the pull's result and the hashes it verified.
func pfPullAndCompare(t *testing.T, c *workspacetest.Dev, repoID string) (*ctxsync.PullResult, map[string]bool) {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	res, err := ctxsync.PfFetchAndMerge(ctx, c.Workspace, "origin", ctxsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	carried, verified := 0, map[string]bool{}
	for h, p := range ctxsync.PfVerified(res) {
		verified[h] = true
		if p.CP == nil || p.CP.Hash != h || p.Key == nil || p.Blob.IsZero() || p.Rule == "" {
			t.Errorf("record %s: the pull did not carry it to the cache: %+v", h[:12], p)
			continue
		}
		carried++
	}
	if carried != res.Added {
		t.Errorf("the pull carried %d parsed records to the cache, merged %d", carried, res.Added)
	}
	if err := ctxsync.PfRecordPull(ctx, c.Workspace, res); err != nil {
		t.Fatal(err)
	}
	fromPull := pfCacheOf(t, ctx, c, repoID)
	if err := c.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	rebuilt := pfCacheOf(t, ctx, c, repoID)
	if !reflect.DeepEqual(fromPull, rebuilt) {
		t.Errorf("the cache the pull filled differs from a rebuilt one:\n pull    %+v\n rebuilt %+v", fromPull, rebuilt)
	}
	workspacetest.CacheEqualsBranch(t, c.Workspace, nil)
	return res, verified
}

// TestPullCacheMatchesRebuild: the cache a pull fills from the records it
// verified (cache.Preverified, not read again) equals a cache rebuilt from
// the branch — on a first pull into a clone without the branch (whose
// cache is built while the pull verifies, cache.Mirror.BuildAhead), on a
// first pull into a clone that has a cache file already (not built ahead:
// that would replace the file), on a pull into a branch the cache already
// mirrors, and on a pull that rejects a rewritten record: that record and
// the ones after it never reach the cache (nor the pull's verified set),
// the ones before it do, as verified; a first pull that rejects it builds
// no cache ahead (its merge is not the fetched tip) and leaves no
// half-built file.
func TestPullCacheMatchesRebuild(t *testing.T) {
	w := workspacetest.NewWorld(t)
	ctx := workspacetest.Ctx(t)
	bare := filepath.Join(w.Root, "remote.git")
	workspacetest.Git(t, w.Root, "init", "-q", "--bare", bare)
	repoA := w.NewRepo(t, "a")
	workspacetest.Git(t, repoA, "remote", "add", "origin", bare)
	workspacetest.Git(t, repoA, "push", "-q", "origin", "main")
	a := workspacetest.Open(t, repoA, w.Home("a"))
	if _, err := a.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		a.Record(t, workspacetest.Say("device a record %d", i))
	}
	push := func(d *workspacetest.Dev) {
		t.Helper()
		if _, err := ctxsync.Push(ctx, d.Workspace, "origin", ctxsync.PushOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	push(a)
	clone := func(name string) *workspacetest.Dev {
		dir := filepath.Join(w.Root, name)
		workspacetest.Git(t, w.Root, "clone", "-q", bare, dir)
		return workspacetest.Open(t, dir, w.Home(name))
	}
	b := clone("b")
	if _, err := b.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		b.Record(t, workspacetest.Say("device b record %d", i))
	}
	push(b)
	repoID := a.MustRepoID(t)

	// A first pull: no branch, no cache.
	c := clone("c")
	if res, _ := pfPullAndCompare(t, c, repoID); res.Added != 70 || len(res.Rejected) != 0 || !ctxsync.PfCacheAhead(res) {
		t.Fatalf("first pull: added %d, rejected %v, cache built ahead %v", res.Added, res.Rejected, ctxsync.PfCacheAhead(res))
	}
	pfFirstPullWithCache(t, clone("e"), repoID)

	// An incremental pull into a mirrored branch.
	for i := 40; i < 55; i++ {
		a.Record(t, workspacetest.Say("device a record %d", i))
	}
	push(a)
	if res, _ := pfPullAndCompare(t, c, repoID); res.Added != 15 || len(res.Rejected) != 0 || ctxsync.PfCacheAhead(res) {
		t.Fatalf("second pull: added %d, rejected %v, cache built ahead %v", res.Added, res.Rejected, ctxsync.PfCacheAhead(res))
	}

	// A remote whose third new record was rewritten after it was signed.
	var fresh []string
	for i := 55; i < 60; i++ {
		fresh = append(fresh, a.Record(t, workspacetest.Say("device a record %d", i)))
	}
	push(a)
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	path := v.CheckpointPath(repoID, fresh[2])
	raw, err := v.ReadFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(raw), "device a record 57", "device a record 57 (rewritten)", 1)
	if tampered == string(raw) {
		t.Fatal("the record does not hold its summary")
	}
	workspacetest.EditBranch(t, repoA, "rewrite a record", map[string]string{path: tampered})
	workspacetest.Git(t, repoA, "push", "-q", "origin", gitstore.BranchRef+":"+gitstore.BranchRef)

	pfCheckRewritten(t, c, repoID, fresh)
	pfFirstPullRejects(t, clone("d"), repoID, fresh[2])
}

// pfFirstPullWithCache: a first pull into a clone whose cache file exists
// (a command ran before) is not built ahead, and its cache is as rebuilt.
func pfFirstPullWithCache(t *testing.T, e *workspacetest.Dev, repoID string) {
	t.Helper()
	db, err := e.Cache(workspacetest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if res, _ := pfPullAndCompare(t, e, repoID); res.Added != 70 || len(res.Rejected) != 0 || ctxsync.PfCacheAhead(res) {
		t.Fatalf("first pull with a cache file: added %d, rejected %v, cache built ahead %v", res.Added, res.Rejected, ctxsync.PfCacheAhead(res))
	}
}

// pfFirstPullRejects: the first pull into d of a remote holding a record
// changed after it was signed (rewritten) rejects it, so its merge is not
// the fetched tip:
// the cache built ahead is not put in place, no half-built file is left,
// and the record never reaches the cache.
func pfFirstPullRejects(t *testing.T, d *workspacetest.Dev, repoID, rewritten string) {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	res, _ := pfPullAndCompare(t, d, repoID)
	if res.Added != 87 || len(res.Rejected) != 1 || res.Rejected[0].Record != rewritten || ctxsync.PfCacheAhead(res) {
		t.Fatalf("first pull of a rewritten record: added %d, rejected %+v, cache built ahead %v", res.Added, res.Rejected, ctxsync.PfCacheAhead(res))
	}
	if left, _ := filepath.Glob(filepath.Join(d.CacheDir(), "cache.db.new-*")); len(left) != 0 {
		t.Errorf("half-built cache files left: %v", left)
	}
	db, err := d.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if e, err := db.Get(ctx, rewritten); err == nil && e != nil {
		t.Errorf("the rewritten record reached the cache of a first pull (verified %v)", e.Verified)
	}
}

// pfCheckRewritten pulls a remote whose third new record (of fresh) was
// rewritten: the two before it are merged and cached as verified, it and
// the ones after it reach neither the pull's verified set nor the cache.
func pfCheckRewritten(t *testing.T, c *workspacetest.Dev, repoID string, fresh []string) {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	res, verified := pfPullAndCompare(t, c, repoID)
	if res.Added != 2 || len(res.Rejected) != 1 || res.Rejected[0].Reason != string(chain.HashMismatch) || res.Rejected[0].Record != fresh[2] {
		t.Fatalf("pull of a rewritten record: added %d, rejected %+v", res.Added, res.Rejected)
	}
	db, err := c.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, h := range fresh {
		e, err := db.Get(ctx, h)
		switch {
		case i < 2 && (err != nil || e == nil || !e.Verified):
			t.Errorf("record %d before the rewritten one: %v, %+v; want it cached as verified", i, err, e)
		case i >= 2 && err == nil && e != nil:
			t.Errorf("record %d (the rewritten one or after it) reached the cache (verified %v)", i, e.Verified)
		}
		if verified[h] != (i < 2) {
			t.Errorf("record %d: in the pull's verified set: %v", i, verified[h])
		}
	}
}
