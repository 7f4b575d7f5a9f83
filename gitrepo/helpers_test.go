package gitrepo_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// isolateGit gives the test a git environment of its own: an empty HOME, a
// temporary global config file, no system config and none of the variables
// that would point git at another repository. It uses t.Setenv, so tests
// calling it must not run in parallel.
func isolateGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git executable not found")
	}
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	cfg := "[user]\n\tname = Test User\n\temail = test@example.org\n" +
		"[init]\n\tdefaultBranch = main\n" +
		"[commit]\n\tgpgSign = false\n" +
		"[tag]\n\tgpgSign = false\n" +
		"[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(global, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_EDITOR", ":")
	t.Setenv("GIT_SEQUENCE_EDITOR", ":")
	t.Setenv("GIT_MERGE_AUTOEDIT", "no")
	t.Setenv("GIT_TERMINAL_PROMPT", "0")
	for _, k := range []string{
		"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
		"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
		"GIT_NAMESPACE", "GIT_PREFIX", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
		"GIT_CONFIG_COUNT", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE",
	} {
		unsetenv(t, k)
	}
}

// unsetenv removes k for the duration of the test (t.Setenv restores it).
func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "")
	os.Unsetenv(k)
}

// gitOut runs git in dir and returns its stdout with the final newline
// trimmed, failing the test when git fails.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s (in %s): %v", strings.Join(args, " "), dir, err)
	}
	return out
}

// gitTry runs git in dir; the error carries git's stderr.
func gitTry(dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &gitFailure{err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

type gitFailure struct {
	err    error
	stderr string
}

func (e *gitFailure) Error() string { return e.err.Error() + ": " + e.stderr }

// realPath resolves symbolic links so paths from git and from t.TempDir
// compare equal on systems where the temporary directory is a link.
func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatalf("resolve %s: %v", p, err)
	}
	return r
}

// newRepo makes an empty non-bare repository on branch main.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := realPath(t, t.TempDir())
	gitOut(t, dir, "init", "-q")
	return dir
}

// writeFile writes content to rel inside dir, creating parent directories.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitFiles writes files (path → content), stages them and commits with
// message msg; it returns the new commit id.
func commitFiles(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		writeFile(t, dir, p, c)
		gitOut(t, dir, "add", "--", p)
	}
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gitOut(t, dir, "rev-parse", "HEAD")
}

// open opens dir with gitrepo.Open, failing the test on error.
func open(t *testing.T, dir string) *gitrepo.Repo {
	t.Helper()
	r, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return r
}
