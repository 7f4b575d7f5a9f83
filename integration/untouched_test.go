package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHeadIndexWorkTreeUntouched: init and checkpoints never change HEAD,
// the index, the status, other refs or the files of the checkout — clean,
// dirty, mid-rebase, from a subdirectory, from a linked worktree and in a
// bare repository.
func TestHeadIndexWorkTreeUntouched(t *testing.T) {
	t.Parallel()
	t.Run("clean", tstUntouchedClean)
	t.Run("dirty", tstUntouchedDirty)
	t.Run("rebase", tstUntouchedRebase)
	t.Run("subdirectory", tstUntouchedSubdirectory)
	t.Run("linked-worktree", tstUntouchedLinkedWorktree)
	t.Run("bare-repoId", tstUntouchedBareRepoID)
	t.Run("bare-remote", tstUntouchedBareRemote)
}

// tstRecordThree runs init (when asked) and three checkpoints in dir.
func tstRecordThree(t *testing.T, dir string, env []string, init bool) []record {
	t.Helper()
	if init {
		mustCtx(t, dir, env, "init")
	}
	return []record{
		checkpoint(t, dir, env, "-m", "one", "--file", "a.go", "--tool", "edit"),
		checkpoint(t, dir, env, "--from-commit", "HEAD"),
		checkpoint(t, dir, env, "-m", "three", "--session", "s1"),
	}
}

// tstUntouchedClean: a clean checkout.
func tstUntouchedClean(t *testing.T) {
	t.Parallel()
	_, repo, env := tstNewRepo(t)
	before := snapshot(t, repo, env, "")
	cps := tstRecordThree(t, repo, env, true)
	wantUnchanged(t, before, snapshot(t, repo, env, ""))
	if cps[0].Branch != "main" {
		t.Fatalf("branch field %q, want main", cps[0].Branch)
	}
	mustCtx(t, repo, env, "verify")
}

// tstUntouchedDirty: modified, staged, untracked and deleted files.
func tstUntouchedDirty(t *testing.T) {
	t.Parallel()
	_, repo, env := tstNewRepo(t)
	commitFiles(t, repo, env, "more files", map[string]string{"b.go": "package b\n", "c.go": "package c\n"})
	// A modified tracked file, a staged change, a staged new file that
	// is modified again, an untracked file and a deletion.
	writeFile(t, filepath.Join(repo, "a.go"), "package a // modified\n")
	writeFile(t, filepath.Join(repo, "b.go"), "package b // staged\n")
	mustRun(t, repo, env, "git", "add", "b.go")
	writeFile(t, filepath.Join(repo, "new.go"), "package n\n")
	mustRun(t, repo, env, "git", "add", "new.go")
	writeFile(t, filepath.Join(repo, "new.go"), "package n // again\n")
	writeFile(t, filepath.Join(repo, "untracked.txt"), "scratch\n")
	if err := os.Remove(filepath.Join(repo, "c.go")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, repo, env, "")
	if !strings.Contains(before.status, "untracked.txt") || !strings.Contains(before.status, "new.go") {
		t.Fatalf("setup: the tree is not dirty:\n%s", before.status)
	}
	tstRecordThree(t, repo, env, true)
	wantUnchanged(t, before, snapshot(t, repo, env, ""))
	mustCtx(t, repo, env, "verify")
}

// tstUntouchedRebase: a rebase stopped on a conflict (which can still be finished).
func tstUntouchedRebase(t *testing.T) {
	t.Parallel()
	_, repo, env := tstNewRepo(t)
	commitFiles(t, repo, env, "base", map[string]string{"c.txt": "base\n"})
	mustRun(t, repo, env, "git", "checkout", "-q", "-b", "feature")
	commitFiles(t, repo, env, "feature side", map[string]string{"c.txt": "feature\n"})
	mustRun(t, repo, env, "git", "checkout", "-q", "main")
	commitFiles(t, repo, env, "main side", map[string]string{"c.txt": "main\n"})
	mustRun(t, repo, env, "git", "checkout", "-q", "feature")
	if _, _, code := run(t, repo, env, "git", "rebase", "main"); code == 0 {
		t.Fatal("setup: the rebase did not stop on a conflict")
	}
	rebaseDir := filepath.Join(repo, ".git", "rebase-merge")
	if _, err := os.Stat(rebaseDir); err != nil {
		t.Fatalf("setup: no rebase in progress: %v", err)
	}
	before := snapshot(t, repo, env, "rebase-merge")
	if !strings.Contains(before.status, "u UU") {
		t.Fatalf("setup: no unmerged path:\n%s", before.status)
	}
	cps := tstRecordThree(t, repo, env, true)
	after := snapshot(t, repo, env, "rebase-merge")
	wantUnchanged(t, before, after)
	if _, err := os.Stat(rebaseDir); err != nil {
		t.Fatalf("the rebase state is gone: %v", err)
	}
	for _, cp := range cps {
		if cp.Branch != "feature" {
			t.Fatalf("checkpoint during a rebase of feature has branch %q", cp.Branch)
		}
	}
	mustCtx(t, repo, env, "verify")
	// The rebase can still be finished normally.
	writeFile(t, filepath.Join(repo, "c.txt"), "resolved\n")
	mustRun(t, repo, env, "git", "add", "c.txt")
	mustRun(t, repo, env, "git", "rebase", "--continue")
	if b := gitOut(t, repo, env, "symbolic-ref", "--short", "HEAD"); b != "feature" {
		t.Fatalf("after the rebase HEAD is %q", b)
	}
}

// tstUntouchedSubdirectory: run from a subdirectory; paths stay repository paths.
func tstUntouchedSubdirectory(t *testing.T) {
	t.Parallel()
	_, repo, env := tstNewRepo(t)
	commitFiles(t, repo, env, "nested", map[string]string{"sub/dir/x.go": "package x\n"})
	sub := filepath.Join(repo, "sub", "dir")
	before := snapshot(t, repo, env, "")
	cps := tstRecordThree(t, sub, env, true)
	wantUnchanged(t, before, snapshot(t, repo, env, ""))
	top, deep := status(t, repo, env), status(t, sub, env)
	if top.RepoID != deep.RepoID || deep.Checkpoints != 3 || top.Checkpoints != 3 {
		t.Fatalf("status from the top %+v and from sub/dir %+v disagree", top, deep)
	}
	if got := logJSON(t, repo, env); len(got) != 3 || got[0].Hash != cps[2].Hash {
		t.Fatalf("log from the top after checkpoints from sub/dir: %d entries", len(got))
	}
	// --from-commit paths are repository paths, not relative to sub/dir.
	if !slices.Equal(cps[1].Files, []string{"sub/dir/x.go"}) {
		t.Fatalf("--from-commit from sub/dir: files %q", cps[1].Files)
	}
	if _, err := os.Stat(filepath.Join(sub, ".git")); err == nil {
		t.Fatal("git-ctx created .git in the subdirectory")
	}
}

// tstUntouchedLinkedWorktree: init and checkpoints from a linked worktree; the branch is shared with the main checkout.
func tstUntouchedLinkedWorktree(t *testing.T) {
	t.Parallel()
	s, repo, env := tstNewRepo(t)
	wt := filepath.Join(s.root, "wt")
	mustRun(t, repo, env, "git", "worktree", "add", "-q", "-b", "wtbranch", wt)
	writeFile(t, filepath.Join(wt, "a.go"), "package a // dirty in the worktree\n")
	beforeMain := snapshot(t, repo, env, "")
	beforeWT := snapshot(t, wt, env, "")
	cps := tstRecordThree(t, wt, env, true) // init from the linked worktree
	wantUnchanged(t, beforeMain, snapshot(t, repo, env, ""))
	wantUnchanged(t, beforeWT, snapshot(t, wt, env, ""))
	if cps[0].Branch != "wtbranch" {
		t.Fatalf("checkpoint from the worktree has branch %q", cps[0].Branch)
	}
	// The branch lives in the common dir: the main checkout sees it.
	tip := gitOut(t, repo, env, "rev-parse", memRef)
	if wtTip := gitOut(t, wt, env, "rev-parse", memRef); wtTip != tip {
		t.Fatalf("main checkout sees %s, worktree %s", tip, wtTip)
	}
	cp := checkpoint(t, repo, env, "-m", "from main")
	if cp.Branch != "main" || cp.Parent != cps[2].Hash {
		t.Fatalf("checkpoint from main after the worktree: %+v", cp)
	}
	if got := logJSON(t, wt, env); len(got) != 4 {
		t.Fatalf("log from the worktree: %d entries, want 4", len(got))
	}
	mustCtx(t, wt, env, "verify")
}

// tstUntouchedBareRepoID: a bare repository named by ctx.repoId (an unsafe one is refused).
func tstUntouchedBareRepoID(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	env := s.env("dev")
	bare := filepath.Join(s.root, "bare.git")
	mustRun(t, s.root, env, "git", "init", "-q", "--bare", bare)
	// No commit, no remote, no ctx.repoId: init works (it needs no
	// repo id), but nothing names the repo for a checkpoint yet.
	mustCtx(t, bare, env, "init")
	r := gitCtx(t, bare, env, "checkpoint", "-m", "too early")
	wantCode(t, "checkpoint in an empty bare repo", r, 3)
	wantOneLine(t, "checkpoint in an empty bare repo", r.stderr)
	mustRun(t, bare, env, "git", "config", "ctx.repoId", "team-repo")
	headBefore := string(readFile(t, filepath.Join(bare, "HEAD")))
	mustCtx(t, bare, env, "init")
	cp := checkpoint(t, bare, env, "-m", "from a bare repo")
	if headBefore != string(readFile(t, filepath.Join(bare, "HEAD"))) {
		t.Fatal("HEAD of the bare repository changed")
	}
	if _, err := os.Stat(filepath.Join(bare, "index")); err == nil {
		t.Fatal("git-ctx created an index in a bare repository")
	}
	want := ctxV1CheckpointPath("team-repo", cp.Hash)
	found := false
	for _, p := range branchPaths(t, bare, env) {
		found = found || p == want
	}
	if !found {
		t.Fatalf("%s not on the branch: %q", want, branchPaths(t, bare, env))
	}
	if st := status(t, bare, env); st.RepoID != "team-repo" || st.Checkpoints != 1 {
		t.Fatalf("status in the bare repo: %+v", st)
	}
	mustCtx(t, bare, env, "verify")
	// An unsafe ctx.repoId is refused.
	mustRun(t, bare, env, "git", "config", "ctx.repoId", "../escape")
	wantCode(t, "ctx.repoId=../escape", gitCtx(t, bare, env, "checkpoint", "-m", "x"), 3)
}

// tstUntouchedBareRemote: a bare repository whose id comes from its remote URL, the same an https clone computes.
func tstUntouchedBareRemote(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	env := s.env("dev")
	repo := newRepo(t, s, "repo")
	bare := filepath.Join(s.root, "server.git")
	mustRun(t, s.root, env, "git", "clone", "-q", "--bare", repo, bare)
	mustRun(t, bare, env, "git", "remote", "remove", "origin")
	mustRun(t, bare, env, "git", "remote", "add", "origin", "git@GitHub.com:Team/Repo.git")
	before := snapshot(t, bare, env, "")
	mustCtx(t, bare, env, "init")
	cp := checkpoint(t, bare, env, "-m", "bare with a remote")
	wantUnchanged(t, before, snapshot(t, bare, env, ""))
	// The repo id is the hash of the normalised remote URL, the same an
	// https clone computes.
	wantID := sha256Hex("github.com/Team/Repo")
	if st := status(t, bare, env); st.RepoID != wantID || st.Remote != "origin" {
		t.Fatalf("status: repo id %s remote %q, want %s origin", st.RepoID, st.Remote, wantID)
	}
	if cp.Repo != "github.com/Team/Repo" {
		t.Fatalf("checkpoint repo field %q", cp.Repo)
	}
	mustRun(t, repo, env, "git", "remote", "add", "origin", "https://user@github.com/Team/Repo")
	if st := status(t, repo, env); st.RepoID != wantID {
		t.Fatalf("https clone computes repo id %s, ssh %s", st.RepoID, wantID)
	}
	mustCtx(t, bare, env, "verify")
}
