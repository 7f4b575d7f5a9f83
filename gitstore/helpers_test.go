package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/go-git/go-git/v5/plumbing"
)

// initStore is the usual start of a test: an isolated git configuration, a
// fresh repository, and its memory branch created by device id (seed 1)
// with opts (opts.Device is set here).
func initStore(t *testing.T, id string, opts InitOptions) (*Store, string, Device) {
	t.Helper()
	isolate(t)
	s, dir := newStore(t)
	opts.Device = device(t, id, 1)
	if _, err := s.Init(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	return s, dir, opts.Device
}

// commitView writes a commit of tree on parents (the ref does not move)
// and returns the branch as of it.
func commitView(t *testing.T, s *Store, tree plumbing.Hash, msg string, parents ...plumbing.Hash) *View {
	t.Helper()
	c, err := s.writeCommit(tree, parents, Author{}.signature(time.Now()), msg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.ViewAt(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// editView is base with files put into its tree, committed on base (the ref
// does not move): how the tests tamper with a branch.
func editView(t *testing.T, s *Store, base *View, files map[string][]byte, msg string) *View {
	t.Helper()
	tree, err := s.treeWith(base.Root, files)
	if err != nil {
		t.Fatal(err)
	}
	return commitView(t, s, tree, msg, base.Commit)
}

// mustVerify verifies v; an error (not a failed check) ends the test.
func mustVerify(t *testing.T, v *View) *Report {
	t.Helper()
	rep, err := v.Verify()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// isolate points git at an empty global config so the user's never leaks in.
func isolate(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.org\n"), 0o644)
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newStore(t testing.TB) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "root")
	return reopen(t, dir), dir
}

func device(t testing.TB, id string, seed byte) Device {
	t.Helper()
	return Device{ID: id, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))}
}

const repoID = "1111111111111111111111111111111111111111111111111111111111111111"

func drafts(n int, prefix string) []Draft {
	out := make([]Draft, n)
	for i := range out {
		out[i] = Draft{Summary: fmt.Sprintf("%s %d", prefix, i), SessionID: "s", Turn: i + 1}
	}
	return out
}

// reopen opens the store of dir afresh (configuration read again).
func reopen(t testing.TB, dir string) *Store {
	t.Helper()
	r, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
