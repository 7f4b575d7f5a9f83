package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksOneCheckpointPerCommit: with the default hooks (post-commit and
// post-merge) every new commit becomes exactly one checkpoint, however it
// was made, and a fast-forward (no new commit) records nothing.
func TestHooksOneCheckpointPerCommit(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	// core.hooksPath for commits that must not be recorded
	r := &tstCommits{t: t, repo: repo, env: env, noHooks: s.dir(t, "no-hooks")}
	tstCommitsInstall(t, repo, env)

	// Normal commits, one with a body.
	r.want = append(r.want, hkQuietCommit(t, repo, env, "add the parser", map[string]string{
		"parser/parser.go": "package parser\n", "parser/parser_test.go": "package parser\n",
	}))
	r.want = append(r.want, hkQuietCommit(t, repo, env, "fix the README\n\nThe install section named the wrong flag.\nSee #12.", map[string]string{
		"README.md": "hello\nfixed\n",
	}))
	r.count("after two commits")
	r.amend()
	r.merge()
	r.conflictedMerge()
	r.fastForward()
	r.cherryPick()
	tstCommitsRecorded(t, repo, env, r.want)
}

// tstCommits is the repository TestHooksOneCheckpointPerCommit commits in,
// with the commits that must be recorded so far (want, in order).
type tstCommits struct {
	t       *testing.T
	repo    string
	env     []string
	noHooks string // core.hooksPath for commits that must not be recorded
	want    []string
}

// git runs git in the repository (hooks as installed).
func (r *tstCommits) git(args ...string) {
	r.t.Helper()
	mustRun(r.t, r.repo, r.env, append([]string{"git"}, args...)...)
}

// unhooked runs git with no hooks at all.
func (r *tstCommits) unhooked(args ...string) {
	r.t.Helper()
	mustRun(r.t, r.repo, r.env, append([]string{"git", "-c", "core.hooksPath=" + r.noHooks}, args...)...)
}

// count wants one checkpoint per commit in want.
func (r *tstCommits) count(what string) {
	r.t.Helper()
	if n := len(logJSON(r.t, r.repo, r.env)); n != len(r.want) {
		r.t.Fatalf("%s: %d checkpoints, want %d", what, n, len(r.want))
	}
}

// head is the commit HEAD names.
func (r *tstCommits) head() string {
	r.t.Helper()
	return gitOut(r.t, r.repo, r.env, "rev-parse", "HEAD")
}

// twoSides makes branch (from HEAD, on main) with one commit, then one
// commit on main: both recorded.
func (r *tstCommits) twoSides(branch, sideMsg string, sideFiles map[string]string, mainMsg string, mainFiles map[string]string) {
	r.t.Helper()
	r.git("checkout", "-q", "-b", branch)
	r.want = append(r.want, hkQuietCommit(r.t, r.repo, r.env, sideMsg, sideFiles))
	r.git("checkout", "-q", "main")
	r.want = append(r.want, hkQuietCommit(r.t, r.repo, r.env, mainMsg, mainFiles))
}

// mergeRecorded: HEAD is a merge of the side commit made by twoSides (or
// the test fails saying notMerge), and it is recorded too.
func (r *tstCommits) mergeRecorded(notMerge, what string) {
	r.t.Helper()
	merge := r.head()
	if gitOut(r.t, r.repo, r.env, "rev-parse", "HEAD^2") != r.want[len(r.want)-2] {
		r.t.Fatal(notMerge)
	}
	r.want = append(r.want, merge)
	r.count(what)
}

// tstCommitsInstall installs the default hooks and checks what install
// says and what hooks status reports; install records nothing.
func tstCommitsInstall(t *testing.T, repo string, env []string) {
	t.Helper()
	out := mustCtx(t, repo, env, "hooks", "install")
	if !strings.Contains(out, "post-commit: ") || !strings.Contains(out, "post-merge: ") {
		t.Fatalf("hooks install output: %q", out)
	}
	st := hkHooksStatus(t, repo, env)
	hkWantHook(t, "after install", st, "post-commit", true, "stub", false, false, false)
	hkWantHook(t, "after install", st, "post-merge", true, "stub", false, false, false)
	hkWantHook(t, "after install", st, "pre-push", false, "", false, false, false)
	if st.Binary == "" || st.Claude || st.Codex || len(st.Managers) != 0 {
		t.Fatalf("hooks status after install: %+v", st)
	}
	if n := len(logJSON(t, repo, env)); n != 0 {
		t.Fatalf("install recorded %d checkpoints", n)
	}
}

// amend: --amend makes a new commit: recorded too, with its own changes.
func (r *tstCommits) amend() {
	t := r.t
	t.Helper()
	writeFile(t, filepath.Join(r.repo, "docs/install.md"), "# install\n")
	r.git("add", "docs/install.md")
	if res := hkGitCommit(t, r.repo, r.env, "--amend", "-m", "fix the README and the install docs"); res.code != 0 || res.stderr != "" {
		t.Fatalf("commit --amend: %s", res)
	}
	r.want = append(r.want, r.head())
	r.count("after --amend")
}

// merge: a non-fast-forward merge: post-merge records the merge commit.
func (r *tstCommits) merge() {
	t := r.t
	t.Helper()
	r.twoSides("feature", "feature work", map[string]string{"feature.go": "package a\n"},
		"main work", map[string]string{"main.go": "package a\n"})
	if res := execute(t, r.repo, r.env, nil, "git", "merge", "-q", "--no-edit", "feature"); res.code != 0 || res.stderr != "" {
		t.Fatalf("git merge feature: %s", res)
	}
	r.mergeRecorded("git merge feature did not make a merge commit", "after a merge")
}

// conflictedMerge: a conflicted merge, concluded with git commit
// (post-commit).
func (r *tstCommits) conflictedMerge() {
	t := r.t
	t.Helper()
	r.twoSides("conflict", "conflict side", map[string]string{"README.md": "conflict side\n", "side.txt": "x\n"},
		"main side", map[string]string{"README.md": "main side\n"})
	if res := execute(t, r.repo, r.env, nil, "git", "merge", "--no-edit", "conflict"); res.code == 0 {
		t.Fatalf("git merge conflict should have stopped on a conflict: %s", res)
	}
	r.count("after a merge stopped on a conflict")
	writeFile(t, filepath.Join(r.repo, "README.md"), "both sides\n")
	r.git("add", "README.md")
	if res := hkGitCommit(t, r.repo, r.env, "--no-edit"); res.code != 0 || res.stderr != "" {
		t.Fatalf("git commit concluding the merge: %s", res)
	}
	r.mergeRecorded("the concluded merge is not a merge commit", "after concluding a conflicted merge")
}

// fastForward: a fast-forward merge makes no commit: post-merge runs,
// records nothing.
func (r *tstCommits) fastForward() {
	t := r.t
	t.Helper()
	r.git("checkout", "-q", "-b", "ff")
	writeFile(t, filepath.Join(r.repo, "ff.txt"), "ff\n")
	r.git("add", "ff.txt")
	r.unhooked("commit", "-q", "-m", "fast-forward target")
	ffTip := r.head()
	r.git("checkout", "-q", "main")
	runsBefore := hkHookRuns(hkHookLog(t, r.repo, r.env), "post-merge")
	if res := execute(t, r.repo, r.env, nil, "git", "merge", "-q", "--ff-only", "ff"); res.code != 0 || res.stderr != "" {
		t.Fatalf("git merge --ff-only: %s", res)
	}
	if r.head() != ffTip {
		t.Fatal("the fast-forward did not move main")
	}
	if got := hkHookRuns(hkHookLog(t, r.repo, r.env), "post-merge"); got != runsBefore+1 {
		t.Fatalf("post-merge ran %d times for the fast-forward, want once", got-runsBefore)
	}
	r.count("after a fast-forward merge")
}

// cherryPick: cherry-pick makes a commit: recorded.
func (r *tstCommits) cherryPick() {
	t := r.t
	t.Helper()
	r.git("checkout", "-q", "-b", "pick", "HEAD~1")
	writeFile(t, filepath.Join(r.repo, "pick.go"), "package a\n")
	r.git("add", "pick.go")
	r.unhooked("commit", "-q", "-m", "pick me\n\nPicked from a topic branch.")
	picked := r.head()
	r.git("checkout", "-q", "main")
	if res := execute(t, r.repo, r.env, nil, "git", "cherry-pick", picked); res.code != 0 {
		t.Fatalf("git cherry-pick: %s", res)
	}
	r.want = append(r.want, r.head())
	r.count("after cherry-pick")
}

// tstCommitsRecorded: the checkpoints, oldest first: one per commit of
// want, in order, each naming its commit, its subject and body, and the
// paths it changed; the branch verifies and the last hook run was ok.
func tstCommitsRecorded(t *testing.T, repo string, env []string, want []string) {
	t.Helper()
	list := hkOldestFirst(t, repo, env)
	got := hkRecordedCommits(list)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("recorded commits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	seen := map[string]bool{}
	for i, r := range list {
		if seen[got[i]] || seen[r.Hash] {
			t.Fatalf("duplicate checkpoint %s for commit %s", r.Hash[:12], got[i])
		}
		seen[got[i]], seen[r.Hash] = true, true
		hkWantCommitRecord(t, repo, env, r, want[i])
		if r.Turn != i+1 || r.Session != "" || r.Model != "" || len(r.Tools) != 0 {
			t.Fatalf("checkpoint %d: turn %d session %q model %q tools %q; want turn %d and no session, model or tools",
				i, r.Turn, r.Session, r.Model, r.Tools, i+1)
		}
		wantBranch := "main"
		if i == 3 {
			wantBranch = "feature"
		} else if i == 6 {
			wantBranch = "conflict"
		}
		if r.Branch != wantBranch {
			t.Fatalf("checkpoint %d (%s): branch %q, want %q", i, r.Summary, r.Branch, wantBranch)
		}
	}
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify after recording commits: %s", rep.Raw)
	}
	if last := hkHooksStatus(t, repo, env).LastRun; !strings.Contains(last, " post-commit ") || !strings.HasSuffix(last, " ok") {
		t.Fatalf("hooks status last_run = %q, want the cherry-pick's post-commit run, ok", last)
	}
}

// TestHooksCommitMetadata: session, model and tools come from the
// environment or git config, turns count per session, and a commit with
// many files is bounded with a note of how many were left out.
func TestHooksCommitMetadata(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	mustCtx(t, repo, env, "hooks", "install")

	agentEnv := withEnv(env, "GIT_CTX_SESSION=sess-env", "GIT_CTX_MODEL=model-env", "CLAUDECODE=1", "GIT_CTX_TOOLS=lint, test")
	c1 := hkQuietCommit(t, repo, agentEnv, "from an agent", map[string]string{"x.go": "package a\n"})
	c2 := hkQuietCommit(t, repo, agentEnv, "from an agent again", map[string]string{"y.go": "package a\n"})

	mustRun(t, repo, env, "git", "config", "ctx.session", "sess-config")
	mustRun(t, repo, env, "git", "config", "ctx.model", "model-config")
	files := map[string]string{}
	for i := 0; i < 205; i++ {
		files[fmt.Sprintf("many/f%03d.txt", i)] = "x\n"
	}
	c3 := hkQuietCommit(t, repo, env, "add many files", files)

	list := hkOldestFirst(t, repo, env)
	if got := hkRecordedCommits(list); strings.Join(got, " ") != strings.Join([]string{c1, c2, c3}, " ") {
		t.Fatalf("recorded commits %q, want %q", got, []string{c1, c2, c3})
	}
	for i, r := range list[:2] {
		if r.Session != "sess-env" || r.Model != "model-env" || r.Turn != i+1 ||
			strings.Join(r.Tools, ",") != "claude-code,lint,test" {
			t.Fatalf("checkpoint %d from the agent environment: session %q model %q turn %d tools %q",
				i, r.Session, r.Model, r.Turn, r.Tools)
		}
	}
	r := list[2]
	if r.Session != "sess-config" || r.Model != "model-config" || r.Turn != 1 || len(r.Tools) != 0 {
		t.Fatalf("checkpoint from git config: session %q model %q turn %d tools %q", r.Session, r.Model, r.Turn, r.Tools)
	}
	if len(r.Files) != 200 || !strings.Contains(r.Summary, "(5 more changed files not listed)") ||
		!strings.HasSuffix(r.Summary, "\n\nCommit: "+c3) || !strings.HasPrefix(r.Summary, "add many files\n\n") {
		t.Fatalf("checkpoint of a 205-file commit: %d files, summary %q", len(r.Files), r.Summary)
	}
}

// TestHooksTurnPerSession: "turn = next in that session" — a session's turn
// keeps counting when checkpoints of another session came in between.
func TestHooksTurnPerSession(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	mustCtx(t, repo, env, "hooks", "install")
	a := withEnv(env, "GIT_CTX_SESSION=sess-a")
	b := withEnv(env, "GIT_CTX_SESSION=sess-b")
	hkQuietCommit(t, repo, a, "a one", map[string]string{"a1": "1\n"})
	hkQuietCommit(t, repo, b, "b one", map[string]string{"b1": "1\n"})
	hkQuietCommit(t, repo, a, "a two", map[string]string{"a2": "2\n"})
	var got []string
	for _, r := range hkOldestFirst(t, repo, env) {
		got = append(got, fmt.Sprintf("%s/%d", r.Session, r.Turn))
	}
	if want := "sess-a/1 sess-b/1 sess-a/2"; strings.Join(got, " ") != want {
		t.Fatalf("session/turn of the checkpoints: %q, want %q", strings.Join(got, " "), want)
	}
}

// TestHooksNeverFailTheCommit: whatever goes wrong in git-ctx, a commit that
// succeeds exits 0 and git-ctx says one line on stderr; a commit that fails
// (a failing pre-commit) still fails.
func TestHooksNeverFailTheCommit(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	// The synchronous path (the spooled one: TestHookSpoolDrainFailure).
	env = withEnv(env, "GIT_CTX_HOOK_SYNC=1")
	mustCtx(t, repo, env, "hooks", "install")
	hkQuietCommit(t, repo, env, "recorded", map[string]string{"ok.txt": "1\n"})
	recorded := 1
	device := status(t, repo, env).Device
	key := filepath.Join(s.ctxHome("dev"), "keys", device+".key")
	keyBytes := readFile(t, key)

	n := 0
	// failing commits a change and wants exit 0, a new HEAD, no new
	// checkpoint and one line on stderr containing each of want.
	failing := func(what string, env []string, want ...string) string {
		t.Helper()
		n++
		before := gitOut(t, repo, env, "rev-parse", "HEAD")
		writeFile(t, filepath.Join(repo, "change.txt"), fmt.Sprintf("%d\n", n))
		mustRun(t, repo, env, "git", "add", "change.txt")
		r := hkGitCommit(t, repo, env, "-m", what)
		wantCode(t, "git commit with "+what, r, 0)
		wantOneLine(t, "git commit with "+what, r.stderr)
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Fatalf("git commit with %s: stderr %q should contain %q", what, r.stderr, w)
			}
		}
		if gitOut(t, repo, env, "rev-parse", "HEAD") == before {
			t.Fatalf("git commit with %s did not commit", what)
		}
		return r.stderr
	}
	wantRecorded := func(what string) {
		t.Helper()
		if got := len(logJSON(t, repo, env)); got != recorded {
			t.Fatalf("%s: %d checkpoints, want %d", what, got, recorded)
		}
	}

	// An insecure key file (mode 0644): git-ctx refuses it, the commit stands.
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	failing("a 0644 key", env, "git-ctx: warning: post-commit hook:", "chmod 600")
	wantRecorded("with a 0644 key")
	if last := hkHooksStatus(t, repo, env).LastRun; !strings.Contains(last, " post-commit ") || !strings.Contains(last, " error: ") {
		t.Fatalf("hooks status last_run after a failed hook = %q, want a post-commit error", last)
	}
	if txt := hkHooksStatusText(t, repo, env); !strings.Contains(txt, "last hook run: ") || !strings.Contains(txt, "error: ") {
		t.Fatalf("hooks status should show the failed run:\n%s", txt)
	}

	// A corrupt key file.
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("-----BEGIN ED25519 PRIVATE KEY-----\nnot base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	failing("a corrupt key", env, "git-ctx: warning: post-commit hook:", "corrupt")
	wantRecorded("with a corrupt key")
	if err := os.WriteFile(key, keyBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	hkQuietCommit(t, repo, env, "recorded again", map[string]string{"ok.txt": "2\n"})
	recorded++
	wantRecorded("with the key restored")

	// git-ctx missing from PATH: the stub says how to fix it (stubs only:
	// a config-based hook is a plain command).
	if !hkConfigHooks(t, repo, env) {
		tstHooksWithoutBinary(t, repo, env, failing, wantRecorded)
	}

	// A failing pre-commit (not ours) still fails the commit; our hook does
	// not run.
	tstHooksPreCommitFails(t, repo, env, wantRecorded)

	// The memory branch deleted: a warning, the commit stands.
	mustRun(t, repo, env, "git", "update-ref", "-d", memRef)
	failing("no memory branch", env, "git-ctx: warning: post-commit hook:", "git ctx init")
	if _, _, code := run(t, repo, env, "git", "rev-parse", "--verify", "-q", memRef); code == 0 {
		t.Fatal("the post-commit hook re-created the deleted memory branch")
	}
}

// tstHooksWithoutBinary: with git-ctx missing from PATH a commit stands,
// the hook stub's one line says how to fix it, and hooks status reports no
// binary. failing and wantRecorded are TestHooksNeverFailTheCommit's.
func tstHooksWithoutBinary(t *testing.T, repo string, env []string,
	failing func(what string, env []string, want ...string) string, wantRecorded func(what string)) {
	t.Helper()
	noBin := hkPathWithoutGitCtx(env)
	msg := failing("git-ctx missing from PATH", noBin, "git-ctx", "PATH", "install")
	if !strings.Contains(msg, "install.sh") && !strings.Contains(msg, "hooks uninstall") {
		t.Fatalf("missing binary: stderr %q does not say how to fix it", msg)
	}
	wantRecorded("without git-ctx on PATH")
	st := execute(t, repo, noBin, nil, "git-ctx", "hooks", "status", "--json")
	wantCode(t, "hooks status without git-ctx on PATH", st, 0)
	var hs hkStatus
	if err := json.Unmarshal([]byte(st.stdout), &hs); err != nil || hs.Binary != "" || !hs.hook(t, "post-commit").Installed {
		t.Fatalf("hooks status --json without git-ctx on PATH should report no binary (%v):\n%s", err, st.stdout)
	}
	txt := execute(t, repo, noBin, nil, "git-ctx", "hooks", "status")
	if !strings.Contains(txt.stdout, "git-ctx is not on PATH") {
		t.Fatalf("hooks status without git-ctx on PATH:\n%s", txt)
	}
}

// tstHooksPreCommitFails: a failing pre-commit (not ours) still fails the
// commit, and git-ctx's hook does not run.
func tstHooksPreCommitFails(t *testing.T, repo string, env []string, wantRecorded func(what string)) {
	t.Helper()
	preCommit := filepath.Join(hkCommonDir(t, repo, env), "hooks", "pre-commit")
	hkWriteExec(t, preCommit, "#!/bin/sh\necho 'pre-commit: no' >&2\nexit 1\n", 0o755)
	logBefore := len(hkHookLog(t, repo, env))
	head := gitOut(t, repo, env, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(repo, "change.txt"), "refused\n")
	mustRun(t, repo, env, "git", "add", "change.txt")
	r := hkGitCommit(t, repo, env, "-m", "refused by pre-commit")
	if r.code == 0 || gitOut(t, repo, env, "rev-parse", "HEAD") != head {
		t.Fatalf("a commit refused by pre-commit succeeded: %s", r)
	}
	if !strings.Contains(r.stderr, "pre-commit: no") || strings.Contains(r.stderr, "git-ctx") {
		t.Fatalf("refused commit: stderr %q", r.stderr)
	}
	if got := len(hkHookLog(t, repo, env)); got != logBefore {
		t.Fatalf("git-ctx's hook ran for a commit that failed (%d new log lines)", got-logBefore)
	}
	wantRecorded("after a refused commit")
	if err := os.Remove(preCommit); err != nil {
		t.Fatal(err)
	}
}
