package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chainLineRE is the canonical form of a chain line.
var chainLineRE = regexp.MustCompile(`^\{"hash":"[0-9a-f]{64}","parent":"[0-9a-f]{64}","ts":[0-9]+\}$`)

// TestLayoutGhyllV1 round-trips the seed's layout.
func TestLayoutGhyllV1(t *testing.T) {
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	out := mustCtx(t, repo, env, "init", "--layout", "ghyll-v1")
	if !strings.Contains(out, "(layout ghyll-v1)") {
		t.Fatalf("init: %q", out)
	}
	var cps []record
	for i := 0; i < 5; i++ {
		cps = append(cps, cliCheckpoint(t, repo, env, "-m", fmt.Sprintf("ghyll %d", i), "--file", "a.go"))
	}
	st := cliStatus(t, repo, env)
	if st.Layout != "ghyll-v1" || st.Checkpoints != 5 {
		t.Fatalf("status: %+v", st)
	}
	rid, dev := st.RepoID, st.Device
	// REPO fixes the repository id (FORMAT §3.3); ghyll never reads the
	// branch root, so it carries it along.
	want := []string{"REPO", "devices/" + dev + ".pub", "repos/" + rid + "/chains/" + dev + ".jsonl"}
	for _, cp := range cps {
		want = append(want, ghyllV1CheckpointPath(rid, cp.Hash))
	}
	wantPaths(t, branchPaths(t, repo, env), want)
	if got := strings.TrimSpace(branchFile(t, repo, env, "REPO")); got != rid {
		t.Fatalf("REPO holds %q, want the repository id %s", got, rid)
	}

	// The published key is this device's public key file, byte for byte.
	if got, local := branchFile(t, repo, env, "devices/"+dev+".pub"),
		string(readFile(t, s.ctxHome("dev")+"/keys/"+dev+".pub")); got != local {
		t.Fatalf("published key %q differs from the local .pub %q", got, local)
	}
	chain := branchFile(t, repo, env, "repos/"+rid+"/chains/"+dev+".jsonl")
	wantChain(t, chain, cps)
	for _, cp := range cps {
		file := branchFile(t, repo, env, ghyllV1CheckpointPath(rid, cp.Hash))
		if js := mustCtx(t, repo, env, "show", "--json", cp.Hash[:12]); js != file+"\n" {
			t.Fatalf("show --json %s differs from the file on the branch:\n%q\n%q", cp.Hash[:12], js, file)
		}
	}
	out = mustCtx(t, repo, env, "verify")
	if !strings.Contains(out, "verified 5 checkpoints in 1 chains") {
		t.Fatalf("verify: %q", out)
	}
	// init again keeps the layout.
	if out := mustCtx(t, repo, env, "init"); !strings.Contains(out, "already initialised (layout ghyll-v1)") {
		t.Fatalf("second init: %q", out)
	}
	wantCommitSubjects(t, repo, env, cps, dev)
}

// wantPaths fails unless got (sorted) is exactly want.
func wantPaths(t *testing.T, got, want []string) {
	t.Helper()
	w := map[string]bool{}
	for _, p := range want {
		w[p] = true
	}
	g := map[string]bool{}
	for _, p := range got {
		g[p] = true
		if !w[p] {
			t.Errorf("unexpected path on the branch: %s", p)
		}
	}
	for _, p := range want {
		if !g[p] {
			t.Errorf("missing path on the branch: %s", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("branch has %d paths, want %d", len(got), len(want))
	}
	if t.Failed() {
		t.FailNow()
	}
}

// wantChain checks the chain text names cps in order, linked from the
// genesis, in the canonical line form.
func wantChain(t *testing.T, chain string, cps []record) {
	t.Helper()
	lines := parseChain(t, chain)
	if len(lines) != len(cps) {
		t.Fatalf("chain has %d lines, want %d", len(lines), len(cps))
	}
	for i, l := range strings.Split(strings.TrimSuffix(chain, "\n"), "\n") {
		if !chainLineRE.MatchString(l) {
			t.Fatalf("chain line %d not canonical: %q", i+1, l)
		}
	}
	prev := zeroHash
	for i, e := range lines {
		if e.Hash != cps[i].Hash || e.Parent != prev || e.Parent != cps[i].Parent || e.TS != cps[i].TS {
			t.Fatalf("chain line %d: %+v, checkpoint %s parent %s ts %d", i+1, e, cps[i].Hash, cps[i].Parent, cps[i].TS)
		}
		prev = e.Hash
	}
}

// wantCommitSubjects checks the newest len(cps) commits of the branch are
// "ctx: checkpoint <hash12> by <device> (turn N): <summary>".
func wantCommitSubjects(t *testing.T, repo string, env []string, cps []record, device string) {
	t.Helper()
	subjects := strings.Split(gitOut(t, repo, env, "log", "--format=%s", "-n", strconv.Itoa(len(cps)), memRef), "\n")
	for i, s := range subjects {
		cp := cps[len(cps)-1-i]
		want := fmt.Sprintf("ctx: checkpoint %s by %s (turn %d): %s", cp.Hash[:12], device, cp.Turn, cp.Summary)
		if s != want {
			t.Fatalf("commit subject %q, want %q", s, want)
		}
	}
}
