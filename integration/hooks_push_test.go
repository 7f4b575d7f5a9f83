package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// ddOriginRemote gives repo a new bare remote "origin" (remote.git in the
// sandbox), pushes main to it, and returns the remote's path.
func ddOriginRemote(t *testing.T, s *sandbox, env []string, repo string) string {
	t.Helper()
	remote := filepath.Join(s.root, "remote.git")
	mustRun(t, s.root, env, "git", "init", "-q", "--bare", remote)
	mustRun(t, repo, env, "git", "remote", "add", "origin", remote)
	mustRun(t, repo, env, "git", "push", "-q", "origin", "main")
	return remote
}

// TestHooksPrePush: the opt-in pre-push hook pushes ghyll/memory to the
// remote the user pushes to, once (no recursion), and never fails the
// user's push, even when the remote refuses the memory branch.
func TestHooksPrePush(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	remote := ddOriginRemote(t, s, env, repo)

	out := mustCtx(t, repo, env, "hooks", "install", "--pre-push")
	if !strings.Contains(out, "pre-push: installed") || strings.Contains(out, "post-commit") {
		t.Fatalf("install --pre-push output: %q", out)
	}
	st := hkHooksStatus(t, repo, env)
	hkWantHook(t, "--pre-push", st, "pre-push", true, "stub", false, false, false)
	hkWantHook(t, "--pre-push", st, "post-commit", false, "", false, false, false)
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "pre-push", "installed (")

	checkpoint(t, repo, env, "-m", "worked on the fetcher")
	hkQuietCommit(t, repo, env, "code to push", map[string]string{"fetch.go": "package a\n"})
	if _, _, code := run(t, remote, env, "git", "rev-parse", "--verify", "-q", memRef); code == 0 {
		t.Fatal("the remote has ghyll/memory before any push")
	}

	// The user's push takes the memory along.
	r := execute(t, repo, env, nil, "git", "push", "-q", "origin", "main")
	wantCode(t, "git push with the pre-push hook", r, 0)
	if !strings.Contains(r.stderr, "git-ctx: pushed memory to origin") {
		t.Fatalf("git push: stderr %q", r.stderr)
	}
	if got, want := gitOut(t, remote, env, "rev-parse", "main"), gitOut(t, repo, env, "rev-parse", "main"); got != want {
		t.Fatalf("remote main %s, want %s", got, want)
	}
	memTip := gitOut(t, repo, env, "rev-parse", memRef)
	if got := gitOut(t, remote, env, "rev-parse", memRef); got != memTip {
		t.Fatalf("remote ghyll/memory %s, want %s", got, memTip)
	}
	// Our own push of ghyll/memory ran no pre-push: one run in the log.
	if n := hkHookRuns(hkHookLog(t, repo, env), "pre-push"); n != 1 {
		t.Fatalf("pre-push ran %d times for one git push, want 1:\n%s", n, strings.Join(hkHookLog(t, repo, env), "\n"))
	}

	// The remote now refuses ghyll/memory: the code push still succeeds.
	hkWriteExec(t, filepath.Join(remote, "hooks", "pre-receive"), "#!/bin/sh\n"+
		"while read old new ref; do\n"+
		"  if [ \"$ref\" = refs/heads/ghyll/memory ]; then echo 'memory is not welcome here' >&2; exit 1; fi\n"+
		"done\nexit 0\n", 0o755)
	checkpoint(t, repo, env, "-m", "more work")
	hkQuietCommit(t, repo, env, "more code", map[string]string{"fetch.go": "package a\n// more\n"})
	r = execute(t, repo, env, nil, "git", "push", "-q", "origin", "main")
	wantCode(t, "git push while the remote refuses the memory branch", r, 0)
	var warnings []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "git-ctx:") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "git-ctx: warning: pre-push hook:") {
		t.Fatalf("git push with a refused memory push: want one git-ctx warning line, stderr %q", r.stderr)
	}
	if got, want := gitOut(t, remote, env, "rev-parse", "main"), gitOut(t, repo, env, "rev-parse", "main"); got != want {
		t.Fatalf("the user's push did not go through: remote main %s, want %s", got, want)
	}
	if got := gitOut(t, remote, env, "rev-parse", memRef); got != memTip {
		t.Fatalf("remote ghyll/memory moved to %s although refused", got)
	}
	lines := hkHookLog(t, repo, env)
	if n := hkHookRuns(lines, "pre-push"); n != 2 {
		t.Fatalf("pre-push ran %d times for two pushes:\n%s", n, strings.Join(lines, "\n"))
	}
	if last := hkHooksStatus(t, repo, env).LastRun; !strings.Contains(last, " pre-push ") || !strings.Contains(last, " error: ") {
		t.Fatalf("hooks status last_run = %q, want the failed pre-push", last)
	}

	// Pushing to a URL rather than a remote name: the code goes, the
	// memory stays, and the hook says why.
	hkQuietCommit(t, repo, env, "third", map[string]string{"third.go": "package a\n"})
	other := filepath.Join(s.root, "other.git")
	mustRun(t, s.root, env, "git", "init", "-q", "--bare", other)
	r = execute(t, repo, env, nil, "git", "push", "-q", other, "main")
	wantCode(t, "git push to a URL", r, 0)
	if !strings.Contains(r.stderr, "is a URL") {
		t.Fatalf("git push to a URL: stderr %q", r.stderr)
	}
	if _, _, code := run(t, other, env, "git", "rev-parse", "--verify", "-q", memRef); code == 0 {
		t.Fatal("memory pushed to a URL")
	}

	mustCtx(t, repo, env, "hooks", "uninstall")
	hkWantHook(t, "after uninstall", hkHooksStatus(t, repo, env), "pre-push", false, "", false, false, false)
}
