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

// TestShortRepoIDNoPanic: a repo id shorter than 12 characters (git config
// ctx.repoId ab is one path segment, so it is accepted) is printed whole
// by status and doctor instead of panicking on a slice.
func TestShortRepoIDNoPanic(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CTX_HOME", filepath.Join(home, "ctx"))
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "root"}, {"config", "ctx.repoId", "ab"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(dir)
	for _, args := range [][]string{{"init"}, {"status"}, {"doctor"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(""), &stdout, &stderr)
		if args[0] != "doctor" && code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		}
		if args[0] != "init" && !strings.Contains(stdout.String(), "ab (") {
			t.Errorf("%v does not show the repo id:\n%s", args, stdout.String())
		}
	}
}
