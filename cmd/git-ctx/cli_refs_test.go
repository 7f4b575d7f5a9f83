package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestAfterGC: `git gc` packs the memory branch's objects and its ref;
// git-ctx keeps reading and appending.
func TestAfterGC(t *testing.T) {
	_, repo, env := newInitRepo(t)
	var cps []testrepo.Record
	for i := 0; i < 3; i++ {
		cps = append(cps, inproc.Checkpoint(t, repo, env, "-m", "before gc"))
	}
	inproc.MustRun(t, repo, env, "git", "gc", "--quiet", "--prune=now")
	loose := filepath.Join(repo, ".git", "refs", "heads", "ghyll", "memory")
	if _, err := os.Stat(loose); err == nil {
		t.Fatal("setup: git gc left the memory ref loose")
	}
	if st := inproc.Status(t, repo, env); st.Tip != inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef) || st.Checkpoints != 3 {
		t.Fatalf("status after gc: %+v", st)
	}
	if js := inproc.MustCtx(t, repo, env, "show", "--json", cps[1].Hash); testrepo.DecodeRecord(t, []byte(js)).Hash != cps[1].Hash {
		t.Fatal("show after gc returned another record")
	}
	cp := inproc.Checkpoint(t, repo, env, "-m", "after gc")
	if cp.Parent != cps[2].Hash {
		t.Fatalf("checkpoint after gc has parent %s, want %s", cp.Parent, cps[2].Hash)
	}
	if got := inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef); !strings.Contains(inproc.GitOut(t, repo, env, "log", "-1", "--format=%s", got), cp.Hash[:12]) {
		t.Fatal("git does not see the checkpoint commit at the branch tip")
	}
	if got := inproc.Log(t, repo, env); len(got) != 4 || got[0].Hash != cp.Hash {
		t.Fatalf("log after gc: %d entries", len(got))
	}
	// The branch's reflog records git-ctx's updates.
	if n := strings.Count(inproc.GitOut(t, repo, env, "reflog", "show", "--format=%H", testrepo.MemRef), "\n") + 1; n < 2 {
		t.Fatalf("reflog of the memory branch has %d entries", n)
	}
	inproc.MustCtx(t, repo, env, "verify")
	testrepo.WantFsckClean(t, repo, env)
}

// TestWaitsForGitRefLock: a ref lock held by another git process makes
// git-ctx wait, not fail and not overwrite, and it goes ahead once the lock
// is gone.
func TestWaitsForGitRefLock(t *testing.T) {
	_, repo, env := newInitRepo(t)
	first := inproc.Checkpoint(t, repo, env, "-m", "first")
	lock := filepath.Join(repo, ".git", "refs", "heads", "ghyll", "memory.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Plain git refuses while the lock is there.
	if r := inproc.Run(t, repo, env, "git", "update-ref", testrepo.MemRef, inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef+"~1")); r.Code == 0 {
		t.Fatal("setup: git update-ref ignored the lock")
	}
	done := make(chan testrepo.Result, 1)
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
	testrepo.WantCode(t, "checkpoint after the lock went away", r, 0)
	second := testrepo.DecodeRecord(t, []byte(r.Stdout))
	if second.Parent != first.Hash {
		t.Fatalf("second checkpoint's parent %s, want %s", second.Parent, first.Hash)
	}
	inproc.MustCtx(t, repo, env, "verify")
}
