package cache_test

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// isolate gives the test its own HOME, GIT_CTX_HOME and git configuration
// (nothing here runs git, but nothing may ever reach the real home either)
// and returns a fresh cache directory.
func isolate(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Cache Test\n\temail = cache@example.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CTX_HOME", filepath.Join(root, "ctxhome"))
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "xdgdata"))
	return filepath.Join(root, "ctx")
}

// isolateMade is isolate with the cache directory made.
func isolateMade(t *testing.T) string {
	t.Helper()
	dir := isolate(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testKey is a fixed ed25519 key (seed 0x01 … 0x20).
func testKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// fakeHash is a 64-hex-character hash made from a short hex prefix.
func fakeHash(prefix string, n int) string {
	s := prefix + fmt.Sprintf("%x", n)
	for len(s) < 64 {
		s += "0"
	}
	return s[:64]
}

// cp makes an unsealed checkpoint with the given hash; tests that do not
// verify use arbitrary hashes.
func cp(hash, device string, ts int64) *checkpoint.Checkpoint {
	return &checkpoint.Checkpoint{
		Version: 1, Hash: hash, ParentHash: checkpoint.ZeroHash, DeviceID: device, AuthorID: device + "@example.org",
		Timestamp: ts, SessionID: "s1", Turn: 1, ActiveModel: "m", Summary: "summary of " + hash[:8],
		Signature: fmt.Sprintf("%0128x", 0),
	}
}

// build replaces the cache in dir with rows and opens it.
func build(t *testing.T, dir string, rows ...cache.Row) *cache.DB {
	t.Helper()
	ctx := testCtx(t)
	err := cache.Rebuild(ctx, dir, func(w *cache.Writer) error {
		for _, r := range rows {
			if err := w.AddCheckpoint(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	db, err := cache.Open(ctx, dir)
	if err != nil {
		t.Fatalf("Open after Rebuild: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// raw opens the cache file with plain database/sql (no cache lock). The
// caller closes it before anything rebuilds.
func raw(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+cache.Path(dir)+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func hashes(es []*cache.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Hash
	}
	return out
}

// initDev is the start of the refresh tests: a world, its repository
// "repo" and device a (home "a") that has created the memory branch in
// layout ("" for the default).
func initDev(t *testing.T, layout gitstore.Layout) (*workspacetest.World, string, *workspacetest.Dev) {
	t.Helper()
	w := workspacetest.NewWorld(t)
	repo := w.NewRepo(t, "repo")
	a := workspacetest.Open(t, repo, w.Home("a"))
	if _, err := a.Init(workspacetest.Ctx(t), layout); err != nil {
		t.Fatal(err)
	}
	return w, repo, a
}
