package integration

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped pair (docs/ARCHITECTURE.md, "Two executables"): git-ctx is
// built lean and hands `git ctx mcp` and s3:// session commands to
// git-ctx-full beside it. TestMCPServerStdio and the S3 session tests
// (s3_test.go) run the lean binary, so they go through the hand-off.

// TestShippedPairModules: `go version -m` of the lean git-ctx lists neither the
// AWS SDK nor the MCP SDK; git-ctx-full lists both.
func TestShippedPairModules(t *testing.T) {
	mods := func(bin string) string {
		out, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		return string(out)
	}
	lean, full := mods(binPath), mods(fullPath)
	for _, m := range []string{"github.com/aws/aws-sdk-go-v2", "github.com/modelcontextprotocol/go-sdk"} {
		if strings.Contains(lean, "\t"+m) {
			t.Errorf("the shipped git-ctx links %s", m)
		}
		if !strings.Contains(full, "\t"+m) {
			t.Errorf("git-ctx-full does not link %s", m)
		}
	}
}

// TestLeanWithoutCompanion: a lean git-ctx with no git-ctx-full beside it
// or on PATH refuses `mcp` and s3:// session commands (store from --store
// or from git config) with one line naming git-ctx-full and install.sh,
// exit 3, before reading or prompting for anything; everything else works
// without it: a session command on a file:// store, the SessionStart
// briefing, version. A lean binary started as the companion (a wrong
// install) says so instead of exec'ing itself.
func TestLeanWithoutCompanion(t *testing.T) {
	s, repo, env, lonely, gitOnly, bin := leanAlone(t, "lonely")
	env = withEnv(env, "PATH="+lonely+string(os.PathListSeparator)+gitOnly)
	checkpoint(t, repo, env, "-m", "decided: lean start")

	refused := func(what string, env []string, args ...string) {
		t.Helper()
		// A passphrase on stdin: it must not be read (nothing prompts).
		r := execute(t, repo, env, []byte("hunter2 passphrase\n"), append([]string{bin}, args...)...)
		wantCode(t, what, r, 3)
		wantOneLine(t, what, r.stderr)
		for _, want := range []string{"git-ctx-full", "install.sh"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr %q does not name %s", what, r.stderr, want)
			}
		}
		if r.stdout != "" {
			t.Errorf("%s: stdout %q", what, r.stdout)
		}
	}
	refused("mcp", env, "mcp")
	refused("mcp after the paging flag", env, "--no-pager", "mcp")
	refused("session push --store s3://", env, "session", "push", "--store", "s3://team-bucket/sessions")
	refused("session list --store=s3://", env, "session", "list", "--store=s3://team-bucket")
	mustRun(t, repo, env, "git", "config", "ctx.sessionStore", "s3://team-bucket/ctx")
	refused("session list (ctx.sessionStore s3://)", env, "session", "list")
	refused("session status through git (ctx.sessionStore s3://)", env, "session", "status")
	r := execute(t, repo, env, nil, "git", "ctx", "session", "pull")
	wantCode(t, "git ctx session pull (ctx.sessionStore s3://)", r, 3)
	wantOneLine(t, "git ctx session pull", r.stderr)

	// Not handed off: a file:// store over the s3:// config, the
	// briefing, version.
	store := s.dir(t, "store")
	r = execute(t, repo, env, nil, bin, "session", "status", "--store", "file://"+store)
	wantCode(t, "session status --store file://", r, 0)
	top, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	in := fmt.Sprintf(`{"session_id":"lean-1","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, top)
	r = execute(t, repo, env, []byte(in), bin, "hook", "session-start")
	wantCode(t, "hook session-start", r, 0)
	if !strings.Contains(r.stdout, "decided: lean start") {
		t.Errorf("briefing without the companion:\n%s", r)
	}
	r = execute(t, repo, env, nil, bin, "version")
	wantCode(t, "version", r, 0)

	// Started as the companion but lean: no loop.
	refused("mcp with GIT_CTX_HANDOFF set", withEnv(env, "GIT_CTX_HANDOFF=1", "PATH="+binDir+string(os.PathListSeparator)+gitOnly), "mcp")

	// doctor: the server registered for Claude Code cannot start without
	// the companion; with it beside git-ctx, it can.
	r = execute(t, repo, env, nil, bin, "hooks", "install", "--agent", "claude", "--mcp")
	wantCode(t, "hooks install --agent claude --mcp", r, 0)
	mcpWantDoctor(t, repo, env, "FAIL", "git-ctx-full")
	copyExecutable(t, fullPath, filepath.Join(lonely, "git-ctx-full"))
	mcpWantDoctor(t, repo, env, "OK", "registered in")
}

// leanAlone is an initialised repository for device "a", a directory
// (named name) holding only a copy of the lean git-ctx (bin), and gitOnly,
// a directory holding only git: PATH made of them has no git-ctx-full.
func leanAlone(t *testing.T, name string) (s *sandbox, repo string, env []string, dir, gitOnly, bin string) {
	t.Helper()
	s, repo, env = cltInitRepo(t, "a")
	dir, gitOnly = s.dir(t, name), s.dir(t, "gitonly")
	bin = filepath.Join(dir, "git-ctx")
	copyExecutable(t, binPath, bin)
	if err := os.Symlink(gitPath, filepath.Join(gitOnly, "git")); err != nil {
		t.Fatal(err)
	}
	return s, repo, env, dir, gitOnly, bin
}

// copyExecutable copies the built binary src to dst (mode 0755) without
// holding it in memory: this process's resident set is folded into the max
// RSS of every child it starts (see TestLimits), which the memory-bound
// tests measure.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
