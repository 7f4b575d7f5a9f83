package sync

import (
	"context"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/internal/workspace"
)

// TestReviewUnreadableCheckpoints: a commit adding files under
// checkpoints/ that do not parse, or parse without a 64-hex hash, lists
// each as an unreadable checkpoint without a hash (nothing to look up or
// print a hash prefix of), and the review does not fail.
func TestReviewUnreadableCheckpoints(t *testing.T) {
	w := newPkgWorld(t)
	t.Setenv("GIT_CTX_HOME", t.TempDir())
	dir := "repos/" + testRepoID + "/checkpoints/aa/"
	files := map[string][]byte{
		dir + "garbage.json": []byte("\x00\xffnot json"),
		dir + "empty.json":   {},
		dir + "nohash.json":  []byte("{}"),
		dir + "short.json":   []byte(`{"hash":"ab"}`),
	}
	root := w.commit(nil, map[string][]byte{"LAYOUT": []byte("ctx-v1\n")})
	w.setBranch(root)
	tip := w.commit([]plumbing.Hash{root}, files)
	w.setBranch(tip)
	m, err := workspace.Open(context.Background(), w.dir)
	if err != nil {
		t.Fatal(err)
	}
	commits, err := Review(context.Background(), m, tip.String())
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	if len(commits) != 1 || len(commits[0].Records) != len(files) {
		t.Fatalf("review: %+v", commits)
	}
	for _, r := range commits[0].Records {
		if _, ok := files[r.Path]; !ok || r.Kind != "checkpoint" || r.Status != "unreadable" || r.Hash != "" {
			t.Errorf("record %+v: want an unreadable checkpoint without a hash", r)
		}
	}
}
