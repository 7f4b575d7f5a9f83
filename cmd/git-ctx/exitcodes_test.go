package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exitFixture is a real repository with an initialised memory branch, the
// process's working directory for the duration of a test (commands find
// their repository from "."), with its own HOME, git config and
// GIT_CTX_HOME.
func exitFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	cfg := filepath.Join(root, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.org\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"HOME": root, "GIT_CONFIG_GLOBAL": cfg, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CTX_HOME": filepath.Join(root, "ctxhome"),
		"XDG_DATA_HOME": filepath.Join(root, "xdg"), "XDG_CONFIG_HOME": filepath.Join(root, "xdg"),
		"GIT_CTX_SESSION": "", "GIT_CTX_MODEL": "", "NO_COLOR": "1", "GIT_CEILING_DIRECTORIES": root,
	} {
		t.Setenv(k, v)
	}
	repo := filepath.Join(root, "repo")
	// A fixed repository id: the tests add remotes, which must not move the memory.
	for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"},
		{"-C", repo, "config", "ctx.repoId", "exit-codes-test"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	return repo
}

// runIn runs the CLI in process with in-memory streams.
func runIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestExitCodes: every documented exit code, reached the way users reach
// it, with one line on stderr saying what went wrong in words (no internal
// git command line).
func TestExitCodes(t *testing.T) {
	repo := exitFixture(t)
	for _, args := range [][]string{{"init"}, {"checkpoint", "-m", "first"}} {
		if code, _, stderr := runIn("", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	emb2 := filepath.Join(repo, "..", "e2.json")
	emb3 := filepath.Join(repo, "..", "e3.json")
	os.WriteFile(emb2, []byte("[1, 2]"), 0o644)
	os.WriteFile(emb3, []byte("[1, 2, 3]"), 0o644)
	if code, _, stderr := runIn("", "checkpoint", "-m", "with an embedding", "--emb-file", emb2); code != 0 {
		t.Fatalf("checkpoint --emb-file: %d %s", code, stderr)
	}
	exec.Command("git", "remote", "add", "gone", filepath.Join(repo, "..", "no-such-remote.git")).Run()

	cases := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string // a substring of the one stderr line ("" = no check)
	}{
		{"mistyped command", []string{"lgo"}, "", 2, "did you mean 'log'?"},
		{"unknown command", []string{"frobnicate"}, "", 2, "'frobnicate' is not a git ctx command"},
		{"mistyped subcommand", []string{"pkg", "lisst"}, "", 2, "did you mean 'list'?"},
		{"unknown snapshot subcommand", []string{"snapshot", "bogus"}, "", 2, "not a git ctx snapshot subcommand"},
		{"unknown devices subcommand", []string{"devices", "trsut", "x"}, "", 2, "did you mean 'trust'?"},
		{"extra argument to log", []string{"log", "extra"}, "", 2, `takes no arguments, not "extra"`},
		{"extra argument to status", []string{"status", "x"}, "", 2, "git ctx status takes no arguments"},
		{"extra argument to checkpoint", []string{"checkpoint", "-m", "x", "y"}, "", 2, "takes no arguments"},
		{"extra argument to hooks install", []string{"hooks", "install", "x"}, "", 2, "git ctx hooks install takes no arguments"},
		{"two arguments to show", []string{"show", "a", "b"}, "", 2, `unexpected "b"`},
		{"show without an argument", []string{"show"}, "", 2, ""},
		{"devices trust without an id", []string{"devices", "trust"}, "", 2, ""},
		{"missing summary", []string{"checkpoint"}, "", 2, "needs a summary"},
		{"empty --stdin object", []string{"checkpoint", "--stdin"}, "{}", 2, "needs a summary"},
		{"--stdin not JSON", []string{"checkpoint", "--stdin"}, "x", 2, "--stdin wants one JSON object"},
		{"--stdin two objects", []string{"checkpoint", "--stdin"}, `{"message":"a"} {}`, 2, "exactly one JSON object"},
		{"--stdin unknown key", []string{"checkpoint", "--stdin"}, `{"bogus":1}`, 2, `unknown key "bogus"`},
		{"--stdin wrong type", []string{"checkpoint", "--stdin"}, `{"message":"a","turn":"x"}`, 2, `key "turn"`},
		{"--stdin nested past the JSON depth limit", []string{"checkpoint", "--stdin"}, strings.Repeat("[", 20000), 7, "nesting is limited"},
		{"--stdin over the limit", []string{"checkpoint", "--stdin"}, `{"message":"` + strings.Repeat("a", maxStdin) + `"}`, 7, "exceeds"},
		{"bad flag value", []string{"log", "-n", "abc"}, "", 2, "invalid value"},
		{"unknown flag", []string{"log", "--frobnicate"}, "", 2, ""},
		{"trust an unknown device", []string{"devices", "trust", "no-such-device"}, "", 1, "no device \"no-such-device\""},
		{"trust an unknown device with --force", []string{"devices", "trust", "--force", "later-device"}, "", 0, ""},
		{"search without a match", []string{"search", "nomatchxyzzy"}, "", 1, "no matches"},
		{"similar with the wrong dimension", []string{"similar", "--emb-file", emb3}, "", 7, "has 3 dimensions; the embeddings stored here have 2"},
		{"similar with the right dimension", []string{"similar", "--emb-file", emb2}, "", 0, ""},
		{"show an unknown record", []string{"show", "deadbeef"}, "", 1, "not found"},
		{"pull from an unknown remote", []string{"pull", "nosuch"}, "", 3, "no remote"},
		{"pull from a remote that is gone", []string{"pull", "gone"}, "", 4, "fetch from gone: '"},
		{"verify", []string{"verify"}, "", 0, ""},
		{"extra argument to version", []string{"version", "1"}, "", 2, ""},
	}
	for _, c := range cases {
		code, stdout, stderr := runIn(c.stdin, c.args...)
		if code != c.code {
			t.Errorf("%s (git ctx %s): exit %d, want %d\nstdout: %s\nstderr: %s", c.name, strings.Join(c.args, " "), code, c.code, stdout, stderr)
			continue
		}
		if code == 0 {
			continue
		}
		// A first use may print one progress line before the error.
		line := strings.TrimSuffix(strings.TrimPrefix(stderr, "git-ctx: building the cache of the memory branch\n"), "\n")
		if line == "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "git-ctx: ") {
			t.Errorf("%s: stderr is not one line starting with git-ctx: %q", c.name, stderr)
		}
		if !strings.Contains(line, c.stderr) {
			t.Errorf("%s: stderr %q lacks %q", c.name, line, c.stderr)
		}
		for _, internal := range []string{"refs/", " --no-", "--porcelain", "+refs"} {
			if strings.Contains(line, internal) {
				t.Errorf("%s: stderr shows an internal git command line (%q): %q", c.name, internal, line)
			}
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"log", "log", 0}, {"lgo", "log", 1}, {"lo", "log", 1}, {"logg", "log", 1},
		{"stauts", "status", 1}, {"pul", "pull", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
