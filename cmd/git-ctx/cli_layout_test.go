package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestLayoutGhyllV1 round-trips the seed's layout.
func TestLayoutGhyllV1(t *testing.T) {
	s, repo, env := newRepoAs(t, "dev")
	out := inproc.MustCtx(t, repo, env, "init", "--layout", "ghyll-v1")
	if !strings.Contains(out, "(layout ghyll-v1)") {
		t.Fatalf("init: %q", out)
	}
	var cps []testrepo.Record
	for i := 0; i < 5; i++ {
		cps = append(cps, inproc.Checkpoint(t, repo, env, "-m", fmt.Sprintf("ghyll %d", i), "--file", "a.go"))
	}
	st := inproc.Status(t, repo, env)
	if st.Layout != "ghyll-v1" || st.Checkpoints != 5 {
		t.Fatalf("status: %+v", st)
	}
	rid, dev := st.RepoID, st.Device
	// REPO fixes the repository id (FORMAT §3.3); ghyll never reads the
	// branch root, so it carries it along.
	want := []string{"REPO", "devices/" + dev + ".pub", "repos/" + rid + "/chains/" + dev + ".jsonl"}
	for _, cp := range cps {
		want = append(want, testrepo.GhyllV1CheckpointPath(rid, cp.Hash))
	}
	wantPaths(t, testrepo.BranchPaths(t, repo, env), want)
	if got := strings.TrimSpace(testrepo.BranchFile(t, repo, env, "REPO")); got != rid {
		t.Fatalf("REPO holds %q, want the repository id %s", got, rid)
	}

	// The published key is this device's public key file, byte for byte.
	if got, local := testrepo.BranchFile(t, repo, env, "devices/"+dev+".pub"),
		string(testrepo.ReadFile(t, s.CtxHome("dev")+"/keys/"+dev+".pub")); got != local {
		t.Fatalf("published key %q differs from the local .pub %q", got, local)
	}
	chain := testrepo.BranchFile(t, repo, env, "repos/"+rid+"/chains/"+dev+".jsonl")
	wantChain(t, chain, cps)
	for _, cp := range cps {
		file := testrepo.BranchFile(t, repo, env, testrepo.GhyllV1CheckpointPath(rid, cp.Hash))
		// ghyll's rule leaves emb out of the hash: show --json marks it
		// (JSON.md, show), after the record's own members.
		want := strings.TrimSuffix(file, "\n}") + ",\n  \"unauthenticated\": [\n    \"emb\"\n  ]\n}"
		if js := inproc.MustCtx(t, repo, env, "show", "--json", cp.Hash[:12]); js != want+"\n" {
			t.Fatalf("show --json %s differs from the file on the branch:\n%q\n%q", cp.Hash[:12], js, file)
		}
	}
	out = inproc.MustCtx(t, repo, env, "verify")
	if !strings.Contains(out, "verified 5 checkpoints in 1 chains") {
		t.Fatalf("verify: %q", out)
	}
	// init again keeps the layout.
	if out := inproc.MustCtx(t, repo, env, "init"); !strings.Contains(out, "already initialised (layout ghyll-v1)") {
		t.Fatalf("second init: %q", out)
	}
	wantCommitSubjects(t, repo, env, cps, dev)
}

// wantPaths fails unless got (sorted) is exactly want.
func wantPaths(t *testing.T, got, want []string) { t.Helper(); testrepo.WantPaths(t, got, want) }

// wantChain checks the chain text names cps in order, linked from the
// genesis, in the canonical line form.
func wantChain(t *testing.T, chain string, cps []testrepo.Record) {
	t.Helper()
	testrepo.WantChain(t, chain, cps)
}

// wantCommitSubjects checks the newest len(cps) commits of the branch are
// "ctx: checkpoint <hash12> by <device> (turn N): <summary>".
func wantCommitSubjects(t *testing.T, repo string, env []string, cps []testrepo.Record, device string) {
	t.Helper()
	testrepo.WantCommitSubjects(t, repo, env, cps, device)
}
