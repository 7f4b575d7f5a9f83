package main

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Hostile and careless starts of `git ctx init` in a clone whose `git
// clone` brought refs/remotes/origin/ghyll/memory, which init takes through
// the pull's verified merge (sync.AdoptFetched). In every case: a one-line
// error or a pull's report, a documented exit code, and no local branch
// pointing at a commit that does not verify.

// wantNoUnverifiedBranch fails when the device has a memory branch that
// does not verify.
func wantNoUnverifiedBranch(t *testing.T, d *testrepo.Device) {
	t.Helper()
	if d.Tip(t) == "" {
		return
	}
	d.WantVerifies(t)
}

// wantOneLineError fails unless r failed with code and a single stderr line.
func wantOneLineError(t *testing.T, what string, r testrepo.Result, code int) {
	t.Helper()
	testrepo.WantCode(t, what, r, code)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if l != "git-ctx: building the cache of the memory branch" { // progress
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("%s: want one error line, got:\n%s", what, r)
	}
}

// TestInitHostileFetchedBranch: the fetched branch is changed by someone
// with push access (plain git, no verification) in ways a pull rejects.
func TestInitHostileFetchedBranch(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, a *testrepo.Device, repoID, hash string) []testrepo.FileEdit
		// codes init may exit with
		codes []int
	}{
		{"tampered key file", func(t *testing.T, a *testrepo.Device, repoID, hash string) []testrepo.FileEdit {
			p := "devices/" + a.ID(t) + ".pub"
			pub, err := checkpoint.ParsePublicKey([]byte(testrepo.BranchFile(t, a.Dir, a.Env, p)))
			if err != nil {
				t.Fatalf("setup: %s: %v", p, err)
			}
			// Another well-formed key: one bit of the key changed, encoded
			// as a key file is. (Changing a character of the file's base64
			// could leave the key as it was: a file with no character in the
			// range changed, or one that only sets base64's padding bits.)
			other := append(ed25519.PublicKey(nil), pub...)
			other[0] ^= 1
			return []testrepo.FileEdit{{Path: p, Content: string(checkpoint.EncodePublicKey(other))}}
		}, []int{1, 3}},
		{"LAYOUT from the future", func(t *testing.T, a *testrepo.Device, repoID, hash string) []testrepo.FileEdit {
			return []testrepo.FileEdit{{Path: "LAYOUT", Content: "ctx-v9 fanout=7\n"}}
		}, []int{1, 3}},
		{"forked chain", func(t *testing.T, a *testrepo.Device, repoID, hash string) []testrepo.FileEdit {
			p := "repos/" + repoID + "/chains/" + a.ID(t) + "/00000000.jsonl"
			chain := testrepo.BranchFile(t, a.Dir, a.Env, p)
			lines := strings.SplitAfter(chain, "\n")
			// The chain's second line replaced by a copy of the first: a
			// chain that forks (or fails to link) at its second record.
			if len(lines) < 3 {
				t.Fatalf("setup: chain %q", chain)
			}
			return []testrepo.FileEdit{{Path: p, Content: lines[0] + lines[0]}}
		}, []int{1, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, remote, a := newTeam(t)
			first := a.Checkpoint(t, "A's first decision")
			a.Checkpoint(t, "A's second decision")
			a.Must(t, "push")
			st := inproc.Status(t, a.Dir, a.Env)
			if st.RepoID == "" {
				t.Fatal("setup: no repo id")
			}
			edits := c.edit(t, a, st.RepoID, first.Hash)
			testrepo.RewriteBranch(t, a.Dir, a.Env, "ctx: checkpoint", edits...)
			a.Git(t, "push", "-q", "origin", "ghyll/memory")

			b := inproc.CloneDevice(t, s, "B", remote)
			r := b.Ctx(t, "init")
			t.Logf("init: %s", r)
			ok := false
			for _, code := range c.codes {
				ok = ok || r.Code == code
			}
			if !ok || strings.TrimSpace(r.Stderr) == "" {
				t.Fatalf("init over a hostile fetched branch: want exit in %v with a reason, got %s", c.codes, r)
			}
			if strings.Contains(r.Stderr, "panic") {
				t.Fatalf("init panicked: %s", r)
			}
			wantNoUnverifiedBranch(t, b)
		})
	}
}

// TestInitTrackingRefNotACommit: refs/remotes/origin/ghyll/memory names a
// blob (or a tree): init fails with one line and makes no branch.
func TestInitTrackingRefNotACommit(t *testing.T) {
	s, remote, a := newTeam(t)
	a.Checkpoint(t, "A's first decision")
	a.Must(t, "push")
	b := inproc.CloneDevice(t, s, "B", remote)
	blob := strings.TrimSpace(testrepo.Git(t, b.Dir, b.Env, []byte("not a commit\n"), "hash-object", "-w", "--stdin").Stdout)
	tree := b.Git(t, "rev-parse", "HEAD^{tree}")
	for _, obj := range []string{blob, tree} {
		b.Git(t, "update-ref", "refs/remotes/origin/ghyll/memory", obj)
		r := b.Ctx(t, "init")
		t.Logf("init: %s", r)
		if r.Code == 0 || strings.Contains(r.Stderr, "panic") {
			t.Fatalf("init over a tracking ref naming a non-commit: %s", r)
		}
		wantOneLineError(t, "init over a non-commit tracking ref", r, r.Code)
		if !strings.Contains(r.Stderr, ", not a commit") {
			t.Fatalf("init does not say the tracking ref names no commit: %s", r)
		}
		if tip := b.Tip(t); tip != "" {
			t.Fatalf("init left a branch at %s", tip)
		}
	}
}

// TestInitLayoutOverFetchedBranch: `init --layout ghyll-v1` in a clone whose
// fetched branch is ctx-v1 does not make a second, different branch.
func TestInitLayoutOverFetchedBranch(t *testing.T) {
	s, remote, a := newTeam(t)
	a.Checkpoint(t, "A's first decision")
	a.Must(t, "push")
	b := inproc.CloneDevice(t, s, "B", remote)
	r := b.Ctx(t, "init", "--layout", "ghyll-v1")
	t.Logf("init --layout ghyll-v1: %s", r)
	wantOneLineError(t, "init --layout over another layout", r, 2)
	if !strings.Contains(r.Stderr, "layout mismatch") {
		t.Fatalf("init --layout: %s", r)
	}
	// Refused before anything was made: no branch, and a plain init then
	// takes the remote's.
	if tip := b.Tip(t); tip != "" {
		t.Fatalf("init --layout ghyll-v1 refused but left a branch at %s", tip)
	}
	b.Must(t, "init")
	b.WantVerifies(t)
}

// TestInitHooksInstallHostileClone: `hooks install` initialises too; over
// a tampered fetched branch it leaves nothing unverified on the branch.
func TestInitHooksInstallHostileClone(t *testing.T) {
	s, remote, a := newTeam(t)
	first := a.Checkpoint(t, "A's first decision")
	a.Must(t, "push")
	st := inproc.Status(t, a.Dir, a.Env)
	path := testrepo.CtxV1CheckpointPath(st.RepoID, first.Hash)
	forged := strings.Replace(testrepo.BranchFile(t, a.Dir, a.Env, path), "A's first decision", "A's forged decision", 1)
	testrepo.RewriteBranch(t, a.Dir, a.Env, "ctx: checkpoint", testrepo.FileEdit{Path: path, Content: forged})
	a.Git(t, "push", "-q", "origin", "ghyll/memory")
	b := inproc.CloneDevice(t, s, "B", remote)
	r := b.Ctx(t, "hooks", "install")
	t.Logf("hooks install: %s", r)
	if strings.Contains(r.Stderr, "panic") {
		t.Fatalf("hooks install: %s", r)
	}
	// The hooks are installed (exit 0), but the refused record is said on
	// standard error, --json or not.
	testrepo.WantCode(t, "hooks install over a tampered clone", r, 0)
	if !strings.Contains(r.Stderr, "warning: fetched records failed verification") {
		t.Fatalf("hooks install is silent about the refused record: %s", r)
	}
	wantNoUnverifiedBranch(t, b)
	for _, p := range testrepo.BranchPaths(t, b.Dir, b.Env) {
		if p == path {
			t.Fatalf("hooks install put the forged record %s on B's branch", path)
		}
	}
}

// TestInitRemoteAddedLater: B initialised alone, then adds the team's
// remote and fetches with plain git: init changes nothing; pull merges A's
// verified records.
func TestInitRemoteAddedLater(t *testing.T) {
	s, remote, a := newTeam(t)
	first := a.Checkpoint(t, "A's first decision")
	a.Must(t, "push")
	b := inproc.Device(s, "B", testrepo.NewRepo(t, s, "B"))
	b.Must(t, "init")
	own := b.Checkpoint(t, "B's own decision")
	tip := b.Tip(t)
	b.Git(t, "remote", "add", "origin", remote)
	b.Git(t, "fetch", "-q", "origin")
	r := b.Ctx(t, "init")
	testrepo.WantCode(t, "init with a branch and a new remote", r, 0)
	if b.Tip(t) != tip {
		t.Fatalf("init moved an existing branch: %s", r)
	}
	r = b.Ctx(t, "pull")
	t.Logf("pull: %s", r)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("pull: %s", r)
	}
	b.WantVerifies(t)
	got := b.Hashes(t)
	if !got[own.Hash] {
		t.Fatalf("B lost its own record: %v", got)
	}
	if r.Code == 0 && !got[first.Hash] {
		t.Fatalf("pull succeeded without A's record: %v\n%s", got, r)
	}
}
