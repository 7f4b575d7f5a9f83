package hooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// managersRepo makes a real repository whose work tree holds a .husky
// directory (the first manager DetectManagers lists) and a lefthook.yml
// (the second), with git's global and system configuration kept out.
func managersRepo(t *testing.T, lefthook string) (*gitrepo.Repo, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".husky"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lefthook.yml"), []byte(lefthook), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// TestInstallSecondManagerWired: with Husky and Lefthook both present and
// only Lefthook (the second manager detected) already running git-ctx,
// install reports it wired and writes nothing, and status says so. An
// install that considered only the first manager returned Husky's advice
// and ErrManaged (staticcheck SA4004 on the loop that returned on its
// first iteration).
func TestInstallSecondManagerWired(t *testing.T) {
	ctx := context.Background()
	r, dir := managersRepo(t, "post-commit:\n  commands:\n    git-ctx:\n      run: "+Command(PostCommit)+" || true\n")
	ms, err := DetectManagers(ctx, r)
	if err != nil || len(ms) != 2 || ms[0].Name != "husky" || ms[1].Name != "lefthook" {
		t.Fatalf("managers %+v, %v; want husky then lefthook", ms, err)
	}
	msg, err := InstallGitHook(ctx, r, PostCommit, Options{})
	if err != nil || msg != "lefthook already runs git-ctx for post-commit" {
		t.Fatalf("install: %q, %v; want lefthook already wired, no error", msg, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", PostCommit)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("install wrote a stub although lefthook runs git-ctx: %v", err)
	}
	if v, _ := exec.Command("git", "-C", dir, "config", "--local", "--get-regexp", `^hook\.`).Output(); len(v) != 0 {
		t.Fatalf("install wrote config hooks although lefthook runs git-ctx: %s", v)
	}
	st, err := GitHookState(ctx, r, PostCommit)
	if err != nil || !st.Installed || st.Via != "lefthook" {
		t.Fatalf("state %+v, %v; want installed via lefthook", st, err)
	}
	// post-merge is not in lefthook.yml: both managers' advice, first
	// named in the error.
	msg, err = InstallGitHook(ctx, r, PostMerge, Options{})
	if !errors.Is(err, ErrManaged) || !strings.Contains(err.Error(), "(husky)") {
		t.Fatalf("post-merge install: %v; want ErrManaged naming husky", err)
	}
	lines := strings.Split(msg, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "add this line to "+filepath.Join(dir, ".husky", PostMerge)) ||
		!strings.Contains(msg, "add to "+filepath.Join(dir, "lefthook.yml")+":\npost-merge:") {
		t.Fatalf("post-merge advice names both managers? %q", msg)
	}
}
