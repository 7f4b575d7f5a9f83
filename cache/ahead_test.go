package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestBuildAhead: a cache built ahead of the branch (as a first pull builds
// it while it verifies) replaces nothing until Finish says the branch is at
// its tip, then is the branch's mirror; told otherwise, or when a chain is
// never settled, or when a settle waits past Finish, it leaves neither a
// cache nor a half-built file; and it is not started over an existing
// cache file (whose quarantine a rebuild would drop).
func TestBuildAhead(t *testing.T) {
	_, _, a := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	for i := 0; i < 8; i++ {
		a.Record(t, workspacetest.Say("record built ahead %d", i))
	}
	tip, err := a.Store.Tip()
	if err != nil {
		t.Fatal(err)
	}
	dbPath := cache.Path(a.CacheDir())
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	noFiles := func(what string) {
		t.Helper()
		left, _ := filepath.Glob(filepath.Join(a.CacheDir(), "cache.db*"))
		if len(left) != 0 {
			t.Errorf("%s: files left: %v", what, left)
		}
	}
	fresh := func() {
		t.Helper()
		if err := os.RemoveAll(a.CacheDir()); err != nil {
			t.Fatal(err)
		}
	}
	// The records are verified by the build itself: nothing preverified.
	none := func(context.Context, string, string) (map[string]cache.Preverified, error) { return nil, nil }

	fresh()
	ahead := a.CacheAhead(ctx, tip, none)
	if ahead == nil {
		t.Fatal("no build ahead without a cache")
	}
	time.Sleep(50 * time.Millisecond)
	if exists(dbPath) {
		t.Error("the cache built ahead replaced the cache before Finish")
	}
	if !ahead.Finish(true) || !ahead.Finish(false) {
		t.Fatal("a build ahead told the branch is at its tip is not in place")
	}
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if a.CacheAhead(ctx, tip, none) != nil {
		t.Error("a build ahead started over an existing cache file")
	}
	var nilAhead *cache.Ahead
	if nilAhead.Finish(true) {
		t.Error("a nil build ahead is in place")
	}

	fresh()
	if a.CacheAhead(ctx, tip, none).Finish(false) {
		t.Error("a build ahead told the branch is elsewhere is in place")
	}
	noFiles("told the branch is elsewhere")

	fresh()
	refused := func(context.Context, string, string) (map[string]cache.Preverified, error) {
		return nil, errors.New("not taken")
	}
	if a.CacheAhead(ctx, tip, refused).Finish(true) {
		t.Error("a build ahead whose chain was not settled is in place")
	}
	noFiles("a chain not settled")

	fresh()
	blocked := func(ctx context.Context, _, _ string) (map[string]cache.Preverified, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	done := make(chan bool, 1)
	go func() { done <- a.CacheAhead(ctx, tip, blocked).Finish(false) }()
	select {
	case in := <-done:
		if in {
			t.Error("a stopped build ahead is in place")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Finish(false) did not stop a build waiting for its chains")
	}
	noFiles("stopped while waiting")
	db, err := a.Cache(ctx) // the next open builds the cache as usual
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
}
