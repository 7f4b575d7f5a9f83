package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompanionOutsider: the lean git-ctx beside a git-ctx-full that is not
// the real one (a stale or unrelated shell script) hands off exactly the
// command line it was given, as `git -c ctx.sessionStore=s3://… ctx
// session …` and `git -C dir ctx …` reach it, with GIT_CTX_HANDOFF set (so a
// lean binary installed as the companion refuses instead of looping);
// a git-ctx-full beside it without execute permission is named in a
// one-line error, exit 3, and nothing is run.
func TestCompanionOutsider(t *testing.T) {
	s, repo, env, dir, gitOnly, bin := leanAlone(t, "pair")
	stale := filepath.Join(dir, "git-ctx-full")
	script := "#!/bin/sh\necho \"stale companion handoff=$GIT_CTX_HANDOFF args=$*\"\nexit 7\n"
	if err := os.WriteFile(stale, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env = withEnv(env, "PATH="+dir+string(os.PathListSeparator)+gitOnly)

	r := execute(t, s.root, env, nil, "git", "-C", repo, "-c", "ctx.sessionStore=s3://dash-c-bucket", "ctx", "session", "status")
	wantCode(t, "git -C -c ctx.sessionStore=s3:// ctx session status", r, 7)
	if !strings.Contains(r.stdout, "stale companion handoff=dev args=session status") {
		t.Fatalf("the companion did not get the command line: %s", r)
	}
	r = execute(t, repo, env, nil, bin, "session", "push", "--store=s3://b")
	wantCode(t, "session push --store=s3://b", r, 7)
	if !strings.Contains(r.stdout, "args=session push --store=s3://b") {
		t.Fatalf("--store=s3://b: %s", r)
	}
	// Not handed off: nothing of the script runs.
	r = execute(t, repo, env, nil, bin, "session", "status", "--store", "file://"+s.dir(t, "store"))
	wantCode(t, "session status --store file://", r, 0)
	if strings.Contains(r.stdout, "stale companion") {
		t.Fatalf("a file:// store was handed off: %s", r)
	}

	// Without execute permission: named, exit 3, not run.
	if err := os.Chmod(stale, 0o644); err != nil {
		t.Fatal(err)
	}
	r = execute(t, repo, env, nil, bin, "mcp")
	wantCode(t, "mcp with a non-executable git-ctx-full", r, 3)
	wantOneLine(t, "mcp with a non-executable git-ctx-full", r.stderr)
	if !strings.Contains(r.stderr, stale) || !strings.Contains(r.stderr, "not executable") || strings.Contains(r.stdout, "stale") {
		t.Fatalf("non-executable companion: %s", r)
	}
}
