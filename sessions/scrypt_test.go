package sessions_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/sessions"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// scryptDelta runs f and returns how many scrypt derivations it ran.
func scryptDelta(t *testing.T, f func() error) int64 {
	t.Helper()
	before := session.ScryptOps()
	if err := f(); err != nil {
		t.Fatal(err)
	}
	return session.ScryptOps() - before
}

// TestScryptOpsPerCommand asserts the exact number of scrypt derivations
// of each verb, which is the floor the format allows: every age file has
// its own file key wrapped under its own salt, so each file written costs
// one derivation and each file opened costs one.
//   - push, first: wrap the snapshot, wrap the new manifest (2);
//   - push: open the manifest, wrap the snapshot, wrap the manifest (3);
//   - push, up to date: open the manifest (1);
//   - pull: open the manifest, open each snapshot restored (1+k);
//   - pull, already synced: open the manifest (1);
//   - list: open the manifest (1), none without a profile;
//   - status: none.
func TestScryptOpsPerCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	ctx := context.Background()
	tpl := newClient(t, dir)
	// Each verb runs on a fresh client, as each command does.
	c := &sessions.Client{}
	fresh := func() {
		*c = *tpl
	}
	writeClaude(t, tpl, "s1", `{"type":"user","text":"`+strings.Repeat("x", 1000)+`"}`+"\n")
	check := func(what string, want int64, f func() error) {
		fresh()
		t.Helper()
		if got := scryptDelta(t, f); got != want {
			t.Errorf("%s: %d scrypt derivations, want %d", what, got, want)
		}
	}
	push := func() error { _, err := c.Push(ctx, "claude", "s1"); return err }
	check("first push", 2, push)
	check("push, up to date", 1, push)
	writeClaude(t, c, "s1", `{"type":"user","text":"more"}`+"\n")
	check("push of a change", 3, push)
	writeClaude(t, c, "s2", "{}\n")
	check("push of a second session", 3, func() error { _, err := c.Push(ctx, "claude", "s2"); return err })
	check("list", 1, func() error { _, err := c.List(ctx); return err })
	check("status", 0, func() error { _, err := c.Status(ctx); return err })

	// A second machine: same store and profile, its own state.
	tpl.StateDir = filepath.Join(dir, "state2")
	check("pull of two sessions", 3, func() error {
		res, err := c.Pull(ctx, sessions.PullOptions{})
		if err == nil && len(res) != 2 {
			t.Errorf("pulled %d sessions, want 2", len(res))
		}
		return err
	})
	check("pull, already synced", 1, func() error { _, err := c.Pull(ctx, sessions.PullOptions{}); return err })

	tpl.Profile = ""
	check("list without a profile", 0, func() error { _, err := c.List(ctx); return err })
}

// casStore makes the first manifest Update fail with ErrVersionMismatch
// after running before (nil: nothing changes, as when a synced folder
// rewrites the file with the same bytes).
type casStore struct {
	store.Store
	before func()
	failed bool
}

func (s *casStore) Update(ctx context.Context, key string, body io.Reader, v store.Version) (store.Version, error) {
	if !s.failed && strings.HasSuffix(key, "/manifest.age") {
		s.failed = true
		if s.before != nil {
			s.before()
		}
		return "", store.ErrVersionMismatch
	}
	return s.Store.Update(ctx, key, body, v)
}

// TestScryptOpsCASRetry: a compare-and-swap retry that finds the manifest's
// bytes unchanged costs no derivation (it writes the body it already
// encrypted); one that finds another machine's update costs two (open the
// new manifest, wrap the merged one). It also checks that both sessions
// end up in the manifest.
func TestScryptOpsCASRetry(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	ctx := context.Background()
	c := newClient(t, dir)
	writeClaude(t, c, "s1", "{}\n")
	if _, err := c.Push(ctx, "claude", "s1"); err != nil {
		t.Fatal(err)
	}
	writeClaude(t, c, "s1", `{"a":1}`+"\n")
	cs := &casStore{Store: c.Store}
	c.Store = cs
	if got := scryptDelta(t, func() error { _, err := c.Push(ctx, "claude", "s1"); return err }); got != 3 || !cs.failed {
		t.Errorf("push with an unchanged-manifest retry: %d derivations (retry happened: %v), want 3", got, cs.failed)
	}

	// Another machine pushes session s2 while this one pushes s1.
	other := *c
	other.Store = cs.Store
	other.StateDir = filepath.Join(dir, "state-other")
	writeClaude(t, c, "s2", "{}\n")
	writeClaude(t, c, "s1", `{"a":2}`+"\n")
	var otherOps int64
	cs2 := &casStore{Store: cs.Store, before: func() {
		otherOps = scryptDelta(t, func() error { _, err := other.Push(ctx, "claude", "s2"); return err })
	}}
	c.Store = cs2
	got := scryptDelta(t, func() error { _, err := c.Push(ctx, "claude", "s1"); return err })
	if otherOps != 2+1 || got-otherOps != 3+2 {
		t.Errorf("push with a changed-manifest retry: %d derivations of its own (other push %d), want 5 (other 3)", got-otherOps, otherOps)
	}
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heads := 0
	for _, e := range list {
		if e.Head != "" {
			heads++
		}
	}
	if heads != 2 {
		t.Fatalf("manifest holds %d heads after the retried push, want 2: %+v", heads, list)
	}
}
