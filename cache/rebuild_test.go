package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
)

// TestRebuildWaitsForReaders: an open DB holds the cache lock shared, so a
// Rebuild cannot start filling (let alone swap files) until it is closed.
func TestRebuildWaitsForReaders(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	old := cp(fakeHash("0d", 1), "dev", 1)
	db := build(t, dir, cache.Row{CP: old, RepoID: "repo1", Verified: true})

	var mu sync.Mutex
	var events []string
	event := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
	entered := make(chan struct{})
	done := make(chan error, 1)
	newer := cp(fakeHash("0e", 2), "dev", 2)
	go func() {
		done <- cache.Rebuild(ctx, dir, func(w *cache.Writer) error {
			event("fill")
			close(entered)
			return w.AddCheckpoint(cache.Row{CP: newer, RepoID: "repo1", Verified: true})
		})
	}()
	select {
	case <-entered:
		t.Fatalf("Rebuild started while a reader had the cache open")
	case <-time.After(500 * time.Millisecond):
	}
	// The reader still sees the old file, whole.
	if e, err := db.Get(ctx, old.Hash); err != nil || e == nil {
		t.Fatalf("reader during a pending rebuild: %v %v", e, err)
	}
	event("close")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Rebuild: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Rebuild did not finish after the reader closed")
	}
	mu.Lock()
	if !slices.Equal(events, []string{"close", "fill"}) {
		t.Fatalf("events %v, want [close fill]", events)
	}
	mu.Unlock()
	db2, err := cache.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if e, _ := db2.Get(ctx, old.Hash); e != nil {
		t.Errorf("the old record survived the rebuild")
	}
	if e, _ := db2.Get(ctx, newer.Hash); e == nil {
		t.Errorf("the new record is missing after the rebuild")
	}
}

// TestOpenWaitsForRebuild: while a rebuild holds the lock, Open waits (and
// gives up when its context ends); afterwards it opens the new file.
func TestOpenWaitsForRebuild(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	build(t, dir).Close()
	release := make(chan struct{})
	inFill := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- cache.Rebuild(ctx, dir, func(w *cache.Writer) error {
			close(inFill)
			<-release
			return nil
		})
	}()
	<-inFill
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := cache.Open(short, dir)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open during a rebuild: %v, want a context deadline error", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	db, err := cache.Open(ctx, dir)
	if err != nil {
		t.Fatalf("Open after the rebuild: %v", err)
	}
	db.Close()
}

// TestRebuildDropsStaleWAL: WAL and shared-memory files left by a reader of
// the old file (e.g. one killed with kill -9) must not be applied to the new
// file.
func TestRebuildDropsStaleWAL(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	db := build(t, dir)
	// Commit enough pages that the WAL holds real frames.
	err := db.Update(ctx, func(w *cache.Writer) error {
		for i := 0; i < 300; i++ {
			c := cp(fakeHash("aa", i), "dev", int64(i+1))
			c.Summary = string(make([]byte, 2000)) + "old"
			if err := w.AddCheckpoint(cache.Row{CP: c, RepoID: "repo1", Seq: i, Verified: true}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := cache.Path(dir)
	wal, err := os.ReadFile(p + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("setup: no WAL (%d bytes, %v)", len(wal), err)
	}
	shm, err := os.ReadFile(p + "-shm")
	if err != nil {
		t.Fatalf("setup: no shm: %v", err)
	}
	db.Close() // checkpoints and removes the WAL
	// Put the stale files back, as a crashed reader would have left them.
	if err := os.WriteFile(p+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+"-shm", shm, 0o644); err != nil {
		t.Fatal(err)
	}

	newer := cp(fakeHash("bb", 0), "dev", 1)
	db2 := build(t, dir, cache.Row{CP: newer, RepoID: "repo1", Verified: true})
	got, err := db2.Log(ctx, cache.Query{RepoID: "repo1"})
	if err != nil {
		t.Fatalf("Log on the rebuilt cache: %v", err)
	}
	if len(got) != 1 || got[0].Hash != newer.Hash {
		t.Fatalf("rebuilt cache holds %d records %v, want only the new one", len(got), short(hashes(got)))
	}
	db2.Close()
	r := raw(t, dir)
	defer r.Close()
	var res string
	if err := r.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
	var n int
	if err := r.QueryRow(`SELECT count(*) FROM checkpoints`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("checkpoints rows: %d %v", n, err)
	}
}

func TestOpenReportsDamage(t *testing.T) {
	ctx := testCtx(t)
	t.Run("missing", func(t *testing.T) {
		dir := isolate(t)
		_, err := cache.Open(ctx, dir)
		if !errors.Is(err, cache.ErrMissing) || !errors.Is(err, cache.ErrNeedRebuild) {
			t.Fatalf("Open of a missing cache: %v", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		dir := isolateMade(t)
		junk := make([]byte, 8192)
		for i := range junk {
			junk[i] = byte(i*7 + 3)
		}
		if err := os.WriteFile(cache.Path(dir), junk, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := cache.Open(ctx, dir)
		if err == nil || !(errors.Is(err, cache.ErrNeedRebuild) || cache.IsCorrupt(err)) {
			t.Fatalf("Open of garbage: %v", err)
		}
		if errors.Is(err, cache.ErrMissing) {
			t.Fatalf("garbage reported as missing: %v", err)
		}
		// The failed Open released its lock: a rebuild goes through at once.
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := cache.Rebuild(short, dir, func(*cache.Writer) error { return nil }); err != nil {
			t.Fatalf("Rebuild after a failed Open: %v", err)
		}
		db, err := cache.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
	for _, tc := range []struct{ name, stmt string }{
		{"other schema version", `UPDATE meta SET value = '999' WHERE key = 'schema'`},
		{"sqlite file without the schema", `DROP TABLE meta`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			build(t, dir).Close()
			r := raw(t, dir)
			if _, err := r.Exec(tc.stmt); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if _, err := cache.Open(ctx, dir); !errors.Is(err, cache.ErrNeedRebuild) {
				t.Fatalf("Open after %s: %v", tc.stmt, err)
			}
		})
	}
	t.Run("failed fill keeps the old file", func(t *testing.T) {
		dir := isolate(t)
		keep := cp(fakeHash("cc", 0), "dev", 1)
		build(t, dir, cache.Row{CP: keep, RepoID: "repo1", Verified: true}).Close()
		boom := errors.New("boom")
		if err := cache.Rebuild(ctx, dir, func(*cache.Writer) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Rebuild with a failing fill: %v", err)
		}
		db, err := cache.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if e, err := db.Get(ctx, keep.Hash); err != nil || e == nil {
			t.Fatalf("the old cache is gone after a failed rebuild: %v %v", e, err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if len(e.Name()) > len("cache.db.new") && e.Name()[:len("cache.db.new")] == "cache.db.new" {
				t.Errorf("temporary file %s left behind", e.Name())
			}
		}
	})
}

// TestRebuildRemovesKilledRebuildsFiles: a rebuild killed before it
// published leaves its half-built file (named by its process id) beside the
// cache; the cache stays the old one, and the next rebuild, holding the
// lock, removes every such file.
func TestRebuildRemovesKilledRebuildsFiles(t *testing.T) {
	dir := isolateMade(t)
	db := build(t, dir, cache.Row{CP: cp(fakeHash("aa", 1), "dev-a", 1), RepoID: "r", Verified: true})
	db.Close()
	var killed []string
	for _, suffix := range []string{"", "-wal", "-journal"} {
		p := filepath.Join(dir, "cache.db.new-999999999"+suffix)
		if err := os.WriteFile(p, []byte("half-built"), 0o644); err != nil {
			t.Fatal(err)
		}
		killed = append(killed, p)
	}
	db, err := cache.Open(testCtx(t), dir) // the old cache still opens
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	build(t, dir, cache.Row{CP: cp(fakeHash("bb", 1), "dev-b", 2), RepoID: "r", Verified: true})
	for _, p := range killed {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after a rebuild (%v)", filepath.Base(p), err)
		}
	}
}

// TestRebuildPageSize: a rebuilt file has the rebuild's page size (8 KiB,
// not SQLite's default 4), the first build and a later one alike.
func TestRebuildPageSize(t *testing.T) {
	dir := isolateMade(t)
	for i := 0; i < 2; i++ {
		db := build(t, dir, cache.Row{CP: cp(fakeHash("ab", i), "dev", int64(i)), RepoID: "r", Seq: 0, Verified: true})
		db.Close()
		r := raw(t, dir)
		var ps int
		if err := r.QueryRow(`PRAGMA page_size`).Scan(&ps); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if ps != 8192 {
			t.Errorf("rebuild %d: page size %d, want 8192", i, ps)
		}
	}
}
