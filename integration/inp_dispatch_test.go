package integration

import (
	"strings"
	"testing"
)

// TestInpGitDispatch: `git ctx` reaches the built binary through git's
// dispatch and behaves as the binary called directly (log output, version,
// a usage error). Command behaviour itself is tested in process in
// cmd/git-ctx (TestNewUserFlow, TestNotInitialisedAndUsage, …), where both
// forms are the same call; this is what only the real binary can show.
func TestInpGitDispatch(t *testing.T) {
	t.Parallel()
	_, repo, env := cltInitRepo(t, "laptop")
	cp := checkpoint(t, repo, env, "-m", "switched auth to JWT")

	logOut := mustCtx(t, repo, env, "log")
	if !strings.Contains(logOut, cp.Hash[:12]) || !strings.Contains(logOut, "switched auth to JWT") {
		t.Fatalf("git ctx log does not show the checkpoint:\n%s", logOut)
	}
	if direct := mustRun(t, repo, env, "git-ctx", "log"); direct != logOut {
		t.Fatalf("git-ctx log differs from git ctx log:\n%q\n%q", direct, logOut)
	}
	if v := mustRun(t, repo, env, "git-ctx", "version"); !strings.HasPrefix(v, "git-ctx version ") {
		t.Fatalf("git-ctx version: %q", v)
	}
	if v := mustCtx(t, repo, env, "version"); !strings.HasPrefix(v, "git-ctx version ") {
		t.Fatalf("git ctx version: %q", v)
	}
	for _, argv := range [][]string{{"git-ctx", "frobnicate"}, {"git", "ctx", "frobnicate"}} {
		r := execute(t, repo, env, nil, argv...)
		wantCode(t, strings.Join(argv, " "), r, 2)
		wantOneLine(t, strings.Join(argv, " "), r.stderr)
		if !strings.Contains(r.stderr, "frobnicate") {
			t.Fatalf("%q: stderr %q", argv, r.stderr)
		}
	}
}
