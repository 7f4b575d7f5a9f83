package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of the hook spool (issue 18, "invisible hook"): the post-commit
// stub appends the commit to <git-common-dir>/ctx/spool/queue and a
// detached `git-ctx hook drain` (or the next git-ctx command) records it,
// exactly once and in commit order, whatever is killed when.

// phStatus is the spool part of `git ctx status --json`.
type phStatus struct {
	Pending    int    `json:"pending_hook_entries"`
	SpoolError string `json:"spool_error"`
}

func phStatusOf(t *testing.T, dir string, env []string) phStatus {
	t.Helper()
	var st phStatus
	inpCtxJSON(t, dir, env, &st, "status", "--json")
	return st
}

// phSpoolDir is the repository's spool directory.
func phSpoolDir(t *testing.T, dir string, env []string) string {
	t.Helper()
	return filepath.Join(hkCommonDir(t, dir, env), "ctx", "spool")
}

// phSetup is a repository with the default hooks installed; env defers
// draining (GIT_CTX_HOOK_DEFER) so the test decides when it happens.
func phSetup(t *testing.T) (s *sandbox, repo string, env []string) {
	t.Helper()
	s, env = newHookSandbox(t)
	repo = newRepo(t, s, "repo")
	hkRequireStubHooks(t, repo, env)
	mustCtx(t, repo, env, "hooks", "install")
	return s, repo, withEnv(env, "GIT_CTX_HOOK_DEFER=1")
}

// phCommits makes n hooked commits and returns them in order.
func phCommits(t *testing.T, repo string, env []string, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, hkQuietCommit(t, repo, env, fmt.Sprintf("%s %d", prefix, i), map[string]string{
			fmt.Sprintf("%s-%d.txt", prefix, i): fmt.Sprintf("%d\n", i),
		}))
	}
	return out
}

// phDrain runs `git-ctx hook drain` with extra environment and returns
// its result (the drainer prints nothing and exits 0 unless killed).
func phDrain(t *testing.T, repo string, env []string, extra ...string) result {
	t.Helper()
	return execute(t, repo, withEnv(env, extra...), nil, "git-ctx", "hook", "drain")
}

// phMemTip is the memory branch's tip, read with git (a git-ctx command
// would drain the spool first).
func phMemTip(t *testing.T, repo string, env []string) string {
	t.Helper()
	return gitOut(t, repo, env, "rev-parse", memRef)
}

// phWantRecorded: the checkpoints name exactly want, in order, once each.
func phWantRecorded(t *testing.T, what, repo string, env []string, want []string) {
	t.Helper()
	got := hkRecordedCommits(hkOldestFirst(t, repo, env))
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: recorded commits\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A hooked commit leaves one spool line and no checkpoint; status counts
// it; one drain records it once; the detached drainer the stub starts
// records the next commit without any git-ctx command.
func TestHookSpoolOneCommit(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	tip := phMemTip(t, repo, env)
	c := hkQuietCommit(t, repo, env, "spooled", map[string]string{"a.txt": "a\n"})
	queue, err := os.ReadFile(filepath.Join(phSpoolDir(t, repo, env), "queue"))
	if err != nil {
		t.Fatalf("a hooked commit left no spool: %v", err)
	}
	if !strings.Contains(string(queue), "\npost-commit "+c+" refs/heads/main\t") {
		t.Fatalf("spool %q does not name commit %s on main", queue, c)
	}
	if got := phMemTip(t, repo, env); got != tip {
		t.Fatal("the hook recorded synchronously: the memory branch moved before any drain")
	}
	if st := phStatusOf(t, repo, env); st.Pending != 1 || st.SpoolError != "" {
		t.Fatalf("status after one spooled commit: %+v, want 1 pending", st)
	}
	if txt := mustCtx(t, repo, env, "status"); !strings.Contains(txt, "Pending:       1 hook entries") {
		t.Fatalf("status text does not show the pending entry:\n%s", txt)
	}
	if r := phDrain(t, repo, env); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("git-ctx hook drain: %s", r)
	}
	phWantRecorded(t, "after one drain", repo, env, []string{c})
	if r := phDrain(t, repo, env); r.code != 0 {
		t.Fatalf("second drain: %s", r)
	}
	phWantRecorded(t, "after a second drain", repo, env, []string{c})
	if st := phStatusOf(t, repo, env); st.Pending != 0 {
		t.Fatalf("status after the drain: %+v, want nothing pending", st)
	}
	// Nothing pending is left: only the drained queue, kept for a late line.
	if names := hkDirNames(t, phSpoolDir(t, repo, env)); len(names) != 1 || !strings.HasPrefix(names[0], "queue.drained.") {
		t.Fatalf("spool after the drain holds %v, want only the kept drained queue", names)
	}
	if last := hkHooksStatus(t, repo, env).LastRun; !strings.Contains(last, " post-commit ") || !strings.HasSuffix(last, " ok") {
		t.Fatalf("hooks status last_run = %q, want the drained post-commit, ok", last)
	}

	// Without GIT_CTX_HOOK_DEFER the stub starts the drainer itself.
	live := withEnv(env, "GIT_CTX_HOOK_DEFER=")
	before := phMemTip(t, repo, env)
	c2 := hkQuietCommit(t, repo, live, "drained by the detached drainer", map[string]string{"b.txt": "b\n"})
	deadline := time.Now().Add(60 * time.Second)
	for phMemTip(t, repo, env) == before {
		if time.Now().After(deadline) {
			t.Fatal("the detached drainer did not record the commit within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	phWantRecorded(t, "after the detached drain", repo, env, []string{c, c2})
}

// 20 commits in a row: 20 checkpoints in commit order.
func TestHookSpoolTwentyInOrder(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	want := phCommits(t, repo, env, "c", 20)
	if st := phStatusOf(t, repo, env); st.Pending != 20 {
		t.Fatalf("status after 20 spooled commits: %+v", st)
	}
	// Any command that opens the memory (log here) drains first.
	phWantRecorded(t, "20 commits", repo, env, want)
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify: %s", rep.Raw)
	}
}

// kill -9 of the drainer after an append and before the spool records it,
// and between entries; garbage and a half-written line in the queue: each
// commit is recorded exactly once, in order.
func TestHookSpoolKillDrainer(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	want := phCommits(t, repo, env, "k", 3)
	// A line cut short by a crash: the next entry still parses.
	queue := filepath.Join(phSpoolDir(t, repo, env), "queue")
	f, err := os.OpenFile(queue, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\npost-comm")
	f.Close()
	want = append(want, phCommits(t, repo, env, "k2", 3)...)

	killed := func(at string, wantCheckpoints int) {
		t.Helper()
		r := phDrain(t, repo, env, "GIT_CTX_TEST_DRAIN_KILL="+at)
		if r.code == 0 {
			t.Fatalf("drain with the failpoint %s was not killed: %s", at, r)
		}
		if n := len(phBranchCheckpoints(t, repo, env)); n != wantCheckpoints {
			t.Fatalf("after a kill at %s: %d checkpoints, want %d", at, n, wantCheckpoints)
		}
	}
	// Recorded but not marked done: the next drain must not record it again.
	killed("after-record:1", 1)
	// Resumes: entry 1 skipped (already on the chain), entry 2 recorded and
	// marked done, killed between entries.
	killed("after-done:2", 2)
	// Entries 3, 4 (past the cut line) and 5 recorded, 5 not marked done.
	killed("after-record:3", 5)
	if st := phStatusOf(t, repo, env); st.Pending != 2 {
		t.Fatalf("status after three kills: %+v, want 2 pending (entries 5 and 6 of 6 not marked done)", st)
	}
	// A commit made while a drain was half done goes after the others.
	want = append(want, phCommits(t, repo, env, "k3", 1)...)
	// A half-written last line (no newline): ignored, never fatal.
	f, err = os.OpenFile(queue, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\npost-commit 0123")
	f.Close()
	if r := phDrain(t, repo, env); r.code != 0 {
		t.Fatalf("final drain: %s", r)
	}
	phWantRecorded(t, "after kills and a final drain", repo, env, want)
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify: %s", rep.Raw)
	}
}

// phBranchCheckpoints counts checkpoints from the branch with git alone: the
// chain file of this device lists one line per record.
func phBranchCheckpoints(t *testing.T, repo string, env []string) []string {
	t.Helper()
	var out []string
	for _, p := range branchPaths(t, repo, env) {
		if strings.HasSuffix(p, ".json") && strings.Contains(p, "checkpoints/") {
			out = append(out, p)
		}
	}
	return out
}

// Two drainers started at once: each commit recorded exactly once.
func TestHookSpoolConcurrentDrainers(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	want := phCommits(t, repo, env, "p", 8)
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(filepath.Join(binDir, "git-ctx"), "hook", "drain")
		cmd.Dir, cmd.Env = repo, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("drainer: %v", err)
		}
	}
	phWantRecorded(t, "two drainers", repo, env, want)
}

// push drains first: the pushed branch holds the spooled commit's
// checkpoint.
func TestHookSpoolPushDrainsFirst(t *testing.T) {
	t.Parallel()
	s, repo, env := phSetup(t)
	remote := ddOriginRemote(t, s, env, repo)
	c := hkQuietCommit(t, repo, env, "to be pushed", map[string]string{"p.txt": "p\n"})
	if st := phStatusOf(t, repo, env); st.Pending != 1 {
		t.Fatalf("status before push: %+v", st)
	}
	mustCtx(t, repo, env, "push", "origin")
	tip := phMemTip(t, repo, env)
	if got := gitOut(t, remote, env, "rev-parse", memRef); got != tip {
		t.Fatalf("remote ghyll/memory %s, local %s", got, tip)
	}
	found := false
	for _, p := range branchPaths(t, remote, env) {
		if strings.Contains(p, "checkpoints/") && strings.Contains(gitOut(t, remote, env, "show", memRef+":"+p), "Commit: "+c) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the pushed branch has no checkpoint naming %s", c)
	}
}

// A drain that fails (an insecure key) keeps the entries, says why in
// status and doctor and on the next commit, and the next command records
// them all once the key is fixed.
func TestHookSpoolDrainFailure(t *testing.T) {
	t.Parallel()
	s, repo, env := phSetup(t)
	key := filepath.Join(s.ctxHome("dev"), "keys", status(t, repo, env).Device+".key")
	want := phCommits(t, repo, env, "f", 1)
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := phDrain(t, repo, env); r.code != 0 || r.stderr != "" {
		t.Fatalf("failing drain: %s", r)
	}
	// status refuses to run with an insecure key: fix it first; the
	// failed drain is still reported until a drain succeeds.
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	st := phStatusOf(t, repo, env)
	if st.Pending != 1 || !strings.Contains(st.SpoolError, "chmod 600") {
		t.Fatalf("status after a failed drain: %+v", st)
	}
	if out, _, _ := run(t, repo, env, "git-ctx", "doctor"); !strings.Contains(out, "hook spool") || !strings.Contains(out, "chmod 600") {
		t.Fatalf("doctor does not report the stuck spool:\n%s", out)
	}
	writeFile(t, filepath.Join(repo, "g.txt"), "g\n")
	mustRun(t, repo, env, "git", "add", "g.txt")
	r := hkGitCommit(t, repo, env, "-m", "while stuck")
	wantCode(t, "commit with a stuck spool", r, 0)
	wantOneLine(t, "commit with a stuck spool", r.stderr)
	if !strings.Contains(r.stderr, "git-ctx: warning: post-commit hook: commits are waiting") {
		t.Fatalf("commit with a stuck spool: stderr %q", r.stderr)
	}
	want = append(want, gitOut(t, repo, env, "rev-parse", "HEAD"))
	phWantRecorded(t, "after fixing the key", repo, env, want)
	if st := phStatusOf(t, repo, env); st.Pending != 0 || st.SpoolError != "" {
		t.Fatalf("status after recovery: %+v", st)
	}
}

// The old stub (before the spool) keeps working, is reported as the old
// form, and hooks install rewrites it in place.
func TestHookSpoolOldStub(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	path := hkHooksStatus(t, repo, env).hook(t, "post-commit").Path
	hkWriteExec(t, path, phStubV1, 0o755)
	var st struct {
		Hooks []struct {
			Hook    string `json:"hook"`
			Via     string `json:"via"`
			OldForm bool   `json:"old_form"`
		} `json:"hooks"`
	}
	inpCtxJSON(t, repo, env, &st, "hooks", "status", "--json")
	if st.Hooks[0].Hook != "post-commit" || !st.Hooks[0].OldForm || st.Hooks[0].Via != "stub" {
		t.Fatalf("hooks status with the v1 stub: %+v", st.Hooks)
	}
	if txt := hkHooksStatusText(t, repo, env); !strings.Contains(txt, "old form") {
		t.Fatalf("hooks status text does not mention the old form:\n%s", txt)
	}
	c := hkQuietCommit(t, repo, env, "through the old stub", map[string]string{"o.txt": "o\n"})
	phWantRecorded(t, "old stub", repo, env, []string{c})
	mustCtx(t, repo, env, "hooks", "install")
	if b := string(readFile(t, path)); !strings.Contains(b, "# git-ctx-hook: post-commit v2") {
		t.Fatalf("hooks install left\n%s", b)
	}
	if hkExists(path + ".pre-git-ctx") {
		t.Fatal("hooks install kept the old stub as a foreign hook")
	}
	inpCtxJSON(t, repo, env, &st, "hooks", "status", "--json")
	if st.Hooks[0].OldForm {
		t.Fatal("old_form still set after hooks install")
	}
}

// phStubV1 is the exact post-commit stub git-ctx installed before the spool.
const phStubV1 = `#!/bin/sh
# Installed by 'git ctx hooks install'; 'git ctx hooks uninstall' removes it
# and restores any hook that was here before.
# git-ctx-hook: post-commit v1
status=0
prev="$(dirname "$0")/post-commit.pre-git-ctx"
if [ -x "$prev" ]; then
	"$prev" "$@" || status=$?
fi
if command -v git-ctx >/dev/null 2>&1; then
	git-ctx hook post-commit "$@" </dev/null || true
else
	echo "git-ctx: the post-commit hook needs git-ctx on PATH: install it (./install.sh), or run 'git ctx hooks uninstall'" >&2
fi
exit $status
`

// Claude's Stop hook spools the turn and returns; a drain killed after
// recording it and a new drain leave exactly one checkpoint of the turn.
func TestHookSpoolClaudeStop(t *testing.T) {
	t.Parallel()
	s, repo, env := phSetup(t)
	top, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(s.root, "home", ".claude", "projects", "p", "session.jsonl")
	data := strings.ReplaceAll(string(fixture(t, "claude-session.jsonl")), "/home/dev/proj", jsonString(top))
	writeFile(t, transcript, data)
	r := execute(t, repo, env, claudeStopInput(t, transcript, top), "git-ctx", "hook", "claude-stop")
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("claude-stop: %s", r)
	}
	if n := len(phBranchCheckpoints(t, repo, env)); n != 0 {
		t.Fatalf("claude-stop recorded synchronously: %d checkpoints", n)
	}
	var turns []string
	for _, n := range hkDirNames(t, phSpoolDir(t, repo, env)) {
		if strings.HasPrefix(n, "turn-") {
			turns = append(turns, n)
		}
	}
	if len(turns) != 1 {
		t.Fatalf("spool holds turn files %v, want one", turns)
	}
	// The transcript changes before the drain: the spooled turn is what
	// the hook saw.
	writeFile(t, transcript, data+"\n")
	if st := phStatusOf(t, repo, env); st.Pending != 1 {
		t.Fatalf("status after a spooled Stop: %+v", st)
	}
	if r := phDrain(t, repo, env, "GIT_CTX_TEST_DRAIN_KILL=after-record:1"); r.code == 0 {
		t.Fatalf("drain was not killed: %s", r)
	}
	list := hkOldestFirst(t, repo, env)
	if len(list) != 1 || list[0].Session != "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40" {
		var b []byte
		b, _ = json.Marshal(list)
		t.Fatalf("after a killed drain and a new one: %s", b)
	}
	if hkExists(filepath.Join(phSpoolDir(t, repo, env), turns[0])) {
		t.Fatal("the drained turn's file is still in the spool")
	}
}

// A hook that opened the queue just before a drain took it over, and was
// stalled (a loaded machine, SIGSTOP) until long after that drain ended,
// writes its line into the drained file: it is recorded exactly once, before
// the commits spooled after it, across a kill, and status counts it.
func TestHookSpoolStalledHookLine(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	want := phCommits(t, repo, env, "s", 1)
	queue := filepath.Join(phSpoolDir(t, repo, env), "queue")
	stalled, err := os.OpenFile(queue, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if r := phDrain(t, repo, env); r.code != 0 {
		t.Fatalf("drain: %s", r)
	}
	// The stalled hook's commit, made while its hook had not written yet.
	writeFile(t, filepath.Join(repo, "late.txt"), "late\n")
	mustRun(t, repo, env, "git", "add", "late.txt")
	mustRun(t, repo, env, "git", "-c", "core.hooksPath="+t.TempDir(), "commit", "-q", "-m", "late")
	late := gitOut(t, repo, env, "rev-parse", "HEAD")
	time.Sleep(300 * time.Millisecond) // longer than any grace a drain could give
	if _, err := fmt.Fprintf(stalled, "\npost-commit %s refs/heads/main\n", late); err != nil {
		t.Fatal(err)
	}
	want = append(want, late)
	if st := phStatusOf(t, repo, env); st.Pending != 1 {
		t.Fatalf("status after a late line: %+v, want 1 pending", st)
	}
	want = append(want, phCommits(t, repo, env, "s2", 1)...)
	// Killed after recording the late line and before marking it: the next
	// drain does not record it again.
	if r := phDrain(t, repo, env, "GIT_CTX_TEST_DRAIN_KILL=after-record:1"); r.code == 0 {
		t.Fatalf("drain with the failpoint was not killed: %s", r)
	}
	if r := phDrain(t, repo, env); r.code != 0 {
		t.Fatalf("drain: %s", r)
	}
	phWantRecorded(t, "a late line and a commit after it", repo, env, want)
	if st := phStatusOf(t, repo, env); st.Pending != 0 {
		t.Fatalf("status after the drains: %+v", st)
	}
	// The same file written to again, later still: recorded too.
	writeFile(t, filepath.Join(repo, "later.txt"), "later\n")
	mustRun(t, repo, env, "git", "add", "later.txt")
	mustRun(t, repo, env, "git", "-c", "core.hooksPath="+t.TempDir(), "commit", "-q", "-m", "later")
	later := gitOut(t, repo, env, "rev-parse", "HEAD")
	if _, err := fmt.Fprintf(stalled, "\npost-commit %s refs/heads/main\n", later); err != nil {
		t.Fatal(err)
	}
	phWantRecorded(t, "a second late line", repo, env, append(want, later))
}

// A detached drainer that finds another drain holding the spool's lock
// exits at once instead of waiting (a rebase of hundreds of commits starts
// hundreds of drainers); what it would have recorded is recorded by the
// next drain, which looks at the spool again after it lets the lock go.
func TestHookSpoolDrainerDoesNotQueue(t *testing.T) {
	t.Parallel()
	_, repo, env := phSetup(t)
	want := phCommits(t, repo, env, "q", 2)
	dir, err := os.Open(phSpoolDir(t, repo, env))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if err := syscall.Flock(int(dir.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "git-ctx"), "hook", "drain")
	cmd.Dir, cmd.Env = repo, env
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hook drain while another drain holds the lock: %v", err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("hook drain waited for the spool's lock (killed after 60 s)")
	}
	if st := phStatusOf(t, repo, env); st.Pending != 2 {
		t.Fatalf("status after a drainer that gave way: %+v, want 2 pending", st)
	}
	if err := syscall.Flock(int(dir.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	phWantRecorded(t, "after the lock was let go", repo, env, want)
}
