package sync

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

const testRepoID = "2222222222222222222222222222222222222222222222222222222222222222"

// pkgWorld is a real repository holding a memory branch, with helpers to
// make commits on it and to point the tracking ref of "origin" anywhere.
type pkgWorld struct {
	t   *testing.T
	dir string
	st  *gitstore.Store
}

func newPkgWorld(t *testing.T) *pkgWorld {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	w := &pkgWorld{t: t, dir: t.TempDir()}
	w.git("init", "-q", "-b", "main")
	w.git("commit", "-q", "--allow-empty", "-m", "root")
	r, err := gitrepo.Open(context.Background(), w.dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.st, err = gitstore.Open(r); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *pkgWorld) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// pkg returns a sealed, unsigned package file.
func (w *pkgWorld) pkg(name, version, task string) []byte {
	w.t.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &ctxpkg.Package{
		Manifest: ctxpkg.Manifest{SchemaVersion: 1, Name: name, Version: version, Description: "d", CreatedAt: t0,
			Layers: []ctxpkg.Layer{ctxpkg.LayerSession}, Provenance: ctxpkg.Provenance{Tool: "test", ToolVersion: "1"}},
		Content: ctxpkg.Content{Session: &ctxpkg.SessionLayer{TaskDescription: &task, ExportedAt: t0}},
	}
	if err := p.Seal(); err != nil {
		w.t.Fatal(err)
	}
	data, err := p.MarshalFile()
	if err != nil {
		w.t.Fatal(err)
	}
	return data
}

// commit writes files (path → content) on top of parents[0]'s tree as a
// commit with parents and moves the branch to it.
func (w *pkgWorld) commit(parents []plumbing.Hash, files map[string][]byte) plumbing.Hash {
	w.t.Helper()
	edits := map[string]plumbing.Hash{}
	for p, data := range files {
		h, err := w.st.WriteBlob(data)
		if err != nil {
			w.t.Fatal(err)
		}
		edits[p] = h
	}
	var base plumbing.Hash
	if len(parents) > 0 {
		var err error
		if base, err = w.st.TreeOf(parents[0]); err != nil {
			w.t.Fatal(err)
		}
	}
	tip, err := w.st.Tip()
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := w.st.Commit(context.Background(), gitstore.CommitRequest{Base: base, Edits: edits, Parents: parents,
		Message: "test", Author: gitstore.Author{Name: "T", Email: "t@example.org"}, Expect: tip})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func (w *pkgWorld) setBranch(c plumbing.Hash) { w.git("update-ref", gitstore.BranchRef, c.String()) }
func (w *pkgWorld) setTracking(c plumbing.Hash) {
	w.git("update-ref", TrackingRef("origin"), c.String())
}

// TestPushKeepsPackages: the push check refuses a fast-forward that would
// replace a package the tracked remote publishes, and lets through what
// keeps them, what the remote would refuse anyway, and the removal of a file
// there that does not verify.
func TestPushKeepsPackages(t *testing.T) {
	w := newPkgWorld(t)
	ctx := context.Background()
	path := gitstore.PackagePath(testRepoID, "@team/x", "1.0.0")
	orig := w.pkg("@team/x", "1.0.0", "original")
	t0 := w.commit(nil, map[string][]byte{path: orig})
	w.setTracking(t0)
	check := func(what string, tip plumbing.Hash, wantRefused bool) {
		t.Helper()
		err := checkPushKeepsPackages(ctx, w.st, "origin", tip)
		switch {
		case wantRefused && (!errors.Is(err, ErrPackageConflict) || !strings.Contains(err.Error(), "would replace package @team/x@1.0.0")):
			t.Fatalf("%s: want a refusal, got %v", what, err)
		case !wantRefused && err != nil:
			t.Fatalf("%s: %v", what, err)
		}
	}
	check("the tracked tip itself", t0, false)
	l1 := w.commit([]plumbing.Hash{t0}, map[string][]byte{gitstore.PackagePath(testRepoID, "@team/x", "1.1.0"): w.pkg("@team/x", "1.1.0", "next")})
	check("a new version on top", l1, false)
	l2 := w.commit([]plumbing.Hash{l1}, map[string][]byte{path: w.pkg("@team/x", "1.0.0", "replaced")})
	check("a replaced package", l2, true)

	// The tracked remote holds another file there that does not verify: a
	// push that keeps the original drops it.
	w.setBranch(t0)
	junk := w.commit([]plumbing.Hash{t0}, map[string][]byte{path: []byte("not a package")})
	w.setTracking(junk)
	healed := w.commit([]plumbing.Hash{junk}, map[string][]byte{path: orig})
	check("dropping a file that does not verify", healed, false)

	// Not a fast-forward over the tracked tip: the remote refuses the push.
	w.setBranch(t0)
	other := w.commit([]plumbing.Hash{t0}, map[string][]byte{path: w.pkg("@team/x", "1.0.0", "theirs")})
	w.setTracking(other)
	check("a push the remote would refuse", l1, false)
	w.setBranch(other)
	mine := w.commit([]plumbing.Hash{other}, map[string][]byte{path: orig})
	check("a fast-forward putting the original back over a valid rewrite", mine, true)
}

// TestRemoteHistoryBlobs: every blob a path ever held in the remote's
// history counts, through merges and through the tracking ref's reflog
// (old values included) after the remote rewrote its history.
func TestRemoteHistoryBlobs(t *testing.T) {
	w := newPkgWorld(t)
	ctx := context.Background()
	path := gitstore.PackagePath(testRepoID, "x", "1")
	a, b, c := []byte("a"), []byte("b"), []byte("c")
	pa := w.commit(nil, map[string][]byte{path: a})
	pb := w.commit([]plumbing.Hash{pa}, map[string][]byte{path: b})
	w.setBranch(pa)
	side := w.commit([]plumbing.Hash{pa}, map[string][]byte{"other": []byte("o")})
	merge := w.commit([]plumbing.Hash{side, pb}, map[string][]byte{path: a}) // keeps a, b only on the second parent
	root := w.commit(nil, map[string][]byte{path: c})                        // a rewritten history
	blob := func(data []byte) plumbing.Hash { h, _ := w.st.WriteBlob(data); return h }

	got, err := remoteHistoryBlobs(ctx, w.st.Repo, []plumbing.Hash{merge}, []string{path})
	if err != nil || !got[path][blob(a)] || !got[path][blob(b)] || got[path][blob(c)] {
		t.Fatalf("history of the merge: %v %v", got, err)
	}
	w.setTracking(merge)
	w.setTracking(root)
	tips := trackingHistory(w.st.Repo, "origin", root)
	if got, err = remoteHistoryBlobs(ctx, w.st.Repo, tips, []string{path}); err != nil || !got[path][blob(a)] || !got[path][blob(c)] {
		t.Fatalf("history with the reflog (tips %v): %v %v", tips, got, err)
	}
	// A reflog value whose commit is gone is skipped.
	if got, err = remoteHistoryBlobs(ctx, w.st.Repo, []plumbing.Hash{plumbing.NewHash(strings.Repeat("1", 40)), root}, []string{path}); err != nil || !got[path][blob(c)] {
		t.Fatalf("a missing tip: %v %v", got, err)
	}
}
