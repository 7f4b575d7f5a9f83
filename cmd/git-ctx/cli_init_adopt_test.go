package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestInitVerifiesFetchedBranch: a new clone whose `git clone` brought the
// team's memory branch (refs/remotes/origin/ghyll/memory) takes it through
// the pull's verification at `git ctx init`, not as it is. Someone with
// push access edited one of A's records with plumbing and pushed with plain
// git: B's init merges what verifies, quarantines the rest (exit 1, as a
// pull that rejects), and B's branch verifies; before, init adopted the
// fetched tip whole and B's own `verify` failed on a record B never chose.
func TestInitVerifiesFetchedBranch(t *testing.T) {
	s, remote, a := newTeam(t)
	first := a.Checkpoint(t, "A's first decision")
	a.Must(t, "push")
	st := inproc.Status(t, a.Dir, a.Env)
	path := testrepo.CtxV1CheckpointPath(st.RepoID, first.Hash)
	stored := testrepo.BranchFile(t, a.Dir, a.Env, path)
	forged := strings.Replace(stored, "A's first decision", "A's forged decision", 1)
	if forged == stored {
		t.Fatalf("setup: summary not in the stored record:\n%s", stored)
	}
	testrepo.RewriteBranch(t, a.Dir, a.Env, "ctx: checkpoint", testrepo.FileEdit{Path: path, Content: forged})
	a.Git(t, "push", "-q", "origin", "ghyll/memory")

	b := inproc.CloneDevice(t, s, "B", remote)
	if got := b.Git(t, "rev-parse", "--verify", "-q", "refs/remotes/origin/ghyll/memory"); strings.TrimSpace(got) == "" {
		t.Fatal("setup: the clone has no fetched memory branch")
	}
	r := b.Ctx(t, "init")
	testrepo.WantCode(t, "init over a tampered fetched branch", r, 1)
	if !strings.Contains(r.Stdout, "Initialised memory branch ghyll/memory from origin") || !strings.Contains(r.Stderr, "rejected and quarantined") {
		t.Fatalf("init's report:\n%s", r)
	}
	for _, p := range testrepo.BranchPaths(t, b.Dir, b.Env) {
		if p == path {
			t.Fatalf("B's branch holds the forged record %s", path)
		}
	}
	b.WantVerifies(t)
	if out := b.Must(t, "log", "--unverified"); !strings.Contains(out, first.Hash[:12]) {
		t.Fatalf("log --unverified does not list the forged record %s:\n%s", first.Hash[:12], out)
	}
	// B's branch descends from the remote's tip: B's next push is a fast-forward.
	b.Checkpoint(t, "B's first decision")
	b.Must(t, "push")
}

// TestInitAdoptsVerifiedFetchedBranch: an honest fetched branch is taken
// whole (the same tip, so nothing to merge later), with init --json saying
// so in from_remote; a second init finds the branch and changes nothing.
func TestInitAdoptsVerifiedFetchedBranch(t *testing.T) {
	s, remote, a := newTeam(t)
	a.Checkpoint(t, "A's first decision")
	a.Checkpoint(t, "A's second decision")
	a.Must(t, "push")
	b := inproc.CloneDevice(t, s, "B", remote)
	var out struct {
		Created    bool `json:"created"`
		Published  bool `json:"published"`
		FromRemote *struct {
			Remote string `json:"remote"`
			Added  int    `json:"added"`
		} `json:"from_remote"`
	}
	r := b.Ctx(t, "init", "--json")
	testrepo.WantCode(t, "init", r, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("init --json: %v\n%s", err, r)
	}
	if !out.Created || !out.Published || out.FromRemote == nil || out.FromRemote.Remote != "origin" || out.FromRemote.Added != 2 {
		t.Fatalf("init --json: %s", r.Stdout)
	}
	tip := b.Tip(t)
	if parent := strings.TrimSpace(b.Git(t, "rev-parse", tip+"^1")); parent == "" {
		t.Fatal("B's tip has no parent")
	}
	b.WantVerifies(t)
	if got := len(inproc.Log(t, b.Dir, b.Env)); got != 2 {
		t.Fatalf("B lists %d checkpoints, want A's 2", got)
	}
	r = b.Ctx(t, "init", "--json")
	testrepo.WantCode(t, "second init", r, 0)
	if strings.Contains(r.Stdout, "from_remote") || b.Tip(t) != tip {
		t.Fatalf("second init changed something: %s", r.Stdout)
	}
}
