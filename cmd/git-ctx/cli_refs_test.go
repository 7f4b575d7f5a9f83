package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAfterGC: `git gc` packs the memory branch's objects and its ref;
// git-ctx keeps reading and appending.
func TestAfterGC(t *testing.T) {
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	mustCtx(t, repo, env, "init")
	var cps []record
	for i := 0; i < 3; i++ {
		cps = append(cps, cliCheckpoint(t, repo, env, "-m", "before gc"))
	}
	mustRun(t, repo, env, "git", "gc", "--quiet", "--prune=now")
	loose := filepath.Join(repo, ".git", "refs", "heads", "ghyll", "memory")
	if _, err := os.Stat(loose); err == nil {
		t.Fatal("setup: git gc left the memory ref loose")
	}
	if st := cliStatus(t, repo, env); st.Tip != gitOut(t, repo, env, "rev-parse", memRef) || st.Checkpoints != 3 {
		t.Fatalf("status after gc: %+v", st)
	}
	if js := mustCtx(t, repo, env, "show", "--json", cps[1].Hash); decodeRecord(t, []byte(js)).Hash != cps[1].Hash {
		t.Fatal("show after gc returned another record")
	}
	cp := cliCheckpoint(t, repo, env, "-m", "after gc")
	if cp.Parent != cps[2].Hash {
		t.Fatalf("checkpoint after gc has parent %s, want %s", cp.Parent, cps[2].Hash)
	}
	if got := gitOut(t, repo, env, "rev-parse", memRef); !strings.Contains(gitOut(t, repo, env, "log", "-1", "--format=%s", got), cp.Hash[:12]) {
		t.Fatal("git does not see the checkpoint commit at the branch tip")
	}
	if got := logJSON(t, repo, env); len(got) != 4 || got[0].Hash != cp.Hash {
		t.Fatalf("log after gc: %d entries", len(got))
	}
	// The branch's reflog records git-ctx's updates.
	if n := strings.Count(gitOut(t, repo, env, "reflog", "show", "--format=%H", memRef), "\n") + 1; n < 2 {
		t.Fatalf("reflog of the memory branch has %d entries", n)
	}
	mustCtx(t, repo, env, "verify")
	wantFsckClean(t, repo, env)
}

// TestWaitsForGitRefLock: a ref lock held by another git process makes
// git-ctx wait, not fail and not overwrite, and it goes ahead once the lock
// is gone.
func TestWaitsForGitRefLock(t *testing.T) {
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	mustCtx(t, repo, env, "init")
	first := cliCheckpoint(t, repo, env, "-m", "first")
	lock := filepath.Join(repo, ".git", "refs", "heads", "ghyll", "memory.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Plain git refuses while the lock is there.
	if _, _, code := runArgv(t, repo, env, "git", "update-ref", memRef, gitOut(t, repo, env, "rev-parse", memRef+"~1")); code == 0 {
		t.Fatal("setup: git update-ref ignored the lock")
	}
	done := make(chan result, 1)
	go func() {
		done <- execute(t, repo, env, nil, "git-ctx", "checkpoint", "--json", "-m", "second")
	}()
	select {
	case r := <-done:
		t.Fatalf("checkpoint finished while the ref was locked: %s", r)
	case <-time.After(400 * time.Millisecond):
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	r := <-done
	wantCode(t, "checkpoint after the lock went away", r, 0)
	second := decodeRecord(t, []byte(r.stdout))
	if second.Parent != first.Hash {
		t.Fatalf("second checkpoint's parent %s, want %s", second.Parent, first.Hash)
	}
	mustCtx(t, repo, env, "verify")
}
