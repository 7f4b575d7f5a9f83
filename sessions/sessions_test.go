package sessions_test

import (
	"bufio"
	"context"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/sessions"
	"github.com/git-ctx/git-ctx/sessions/agents"
	"github.com/git-ctx/git-ctx/sessions/store"
)

func TestForkIDIsUUIDv5(t *testing.T) {
	id := sessions.ForkID("s", "snap")
	if !sessions.ValidUUID(id) || id[14] != '5' {
		t.Fatalf("fork id %q is not a UUIDv5", id)
	}
	if sessions.ForkID("s", "snap") != id || sessions.ForkID("s", "snap2") == id {
		t.Fatal("fork id not deterministic per (session, snapshot)")
	}
	u, err := sessions.NewUUID()
	if err != nil || !sessions.ValidUUID(u) || u[14] != '4' {
		t.Fatalf("NewUUID %q %v", u, err)
	}
}

// newClient makes a client for a fake work tree with a real directory
// store, Claude's root in CLAUDE_CONFIG_DIR.
func newClient(t testing.TB, dir string) *sessions.Client {
	t.Helper()
	st, err := store.OpenDir(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(dir, "work", "tree")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	prof, _ := sessions.NewUUID()
	return &sessions.Client{
		Store: st, Profile: prof, Passphrase: []byte("pass"), WorkFactor: 10, AllowWeak: true,
		ProjectID: "proj", WorkTree: wt, Home: filepath.Join(dir, "home"), StateDir: filepath.Join(dir, "state"),
	}
}

func TestResolveProfile(t *testing.T) {
	dir := t.TempDir()
	c := newClient(t, dir)
	ctx := context.Background()
	if _, _, err := sessions.ResolveProfile(ctx, c.Store, "", "", false); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("empty store without create: %v", err)
	}
	p, created, err := sessions.ResolveProfile(ctx, c.Store, "", "", true)
	if err != nil || !created || !sessions.ValidUUID(p) {
		t.Fatalf("create: %q %v %v", p, created, err)
	}
	if _, _, err := sessions.ResolveProfile(ctx, c.Store, "NOT-A-UUID", "", false); !errors.Is(err, sessions.ErrConfig) {
		t.Fatalf("bad --profile: %v", err)
	}
	// With one profile in the store it is found; with two, a choice is needed.
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	writeClaude(t, c, "s1", "{}\n")
	if _, err := c.Push(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	if got, _, err := sessions.ResolveProfile(ctx, c.Store, "", "", false); err != nil || got != c.Profile {
		t.Fatalf("single profile: %q %v", got, err)
	}
	c.Profile, _ = sessions.NewUUID()
	if _, err := c.Push(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessions.ResolveProfile(ctx, c.Store, "", "", false); !errors.Is(err, sessions.ErrConfig) {
		t.Fatalf("two profiles: %v", err)
	}
}

func writeClaude(t testing.TB, c *sessions.Client, id, content string) string {
	t.Helper()
	root, err := agents.Claude{}.Root()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "projects", agents.EncodeProjectKey(c.WorkTree), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchmarkPushPull measures push and restore throughput of one 64 MiB
// Claude session through the directory store, with scrypt at work factor 10
// (about a millisecond), so the figure excludes the key derivation.
func BenchmarkPushPull(b *testing.B) {
	const size = 64 << 20
	dir := b.TempDir()
	b.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	c := newClient(b, dir)
	p := writeClaude(b, c, "bench", "")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	line := fmt.Sprintf(`{"type":"user","cwd":%q,"file_path":%q,"text":"%s"}`+"\n", c.WorkTree, c.WorkTree+"/a.go", strings.Repeat("x", 900))
	for n := 0; n < size; n += len(line) {
		bw.WriteString(line)
	}
	bw.Flush()
	f.Close()
	ctx := context.Background()
	b.Run("push", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			c.Profile, _ = sessions.NewUUID()
			if _, err := c.Push(ctx, "claude", "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pull", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(filepath.Join(c.StateDir, "state"))
			os.Remove(p)
			b.StartTimer()
			res, err := c.Pull(ctx, sessions.PullOptions{SessionID: "bench"})
			if err != nil || len(res) != 1 || res[0].UpToDate {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})

}
