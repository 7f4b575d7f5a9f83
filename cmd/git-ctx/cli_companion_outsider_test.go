package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// The lean git-ctx's hand-off to git-ctx-full as a careless user meets it:
// the store given every way a session command takes it, git config from
// `git -c` (GIT_CONFIG_PARAMETERS) or the global file only, and a broken
// install (a git-ctx-full without execute permission).

// TestCompanionStoreFromEveryWhere: a session command is handed off exactly
// when the store it will use is s3://, wherever that comes from.
func TestCompanionStoreFromEveryWhere(t *testing.T) {
	s, repo, env := newRepoAs(t, "a")
	ctx := context.Background()
	// companionCommand reads git config in this process: give it the
	// sandbox's environment (HOME, GIT_CONFIG_GLOBAL, …).
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME") {
			t.Setenv(k, v)
		}
	}
	_ = s
	handed := func(args ...string) bool { return companionCommand(ctx, args, repo) != "" }

	if handed("session", "list") {
		t.Fatal("no store configured: handed off")
	}
	// git -c ctx.sessionStore=s3://x ctx session push: git passes it on
	// in GIT_CONFIG_PARAMETERS.
	t.Setenv("GIT_CONFIG_PARAMETERS", "'ctx.sessionStore'='s3://from-dash-c'")
	if !handed("session", "push") {
		t.Error("git -c ctx.sessionStore=s3://… not handed off")
	}
	if handed("session", "push", "--store", "git") {
		t.Error("--store git over git -c s3:// handed off")
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", "")

	// The global config only.
	global := filepath.Join(t.TempDir(), "gitconfig")
	testrepo.WriteFile(t, global, "[ctx]\n\tsessionStore = s3://from-global/p\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	if !handed("session", "status") {
		t.Error("ctx.sessionStore=s3://… in the global config only: not handed off")
	}
	// An empty --store is no store: the session command then reads the
	// configured s3:// store, which the lean build cannot open.
	for _, args := range [][]string{{"session", "push", "--store="}, {"session", "push", "--store", ""}} {
		if !handed(args...) {
			t.Errorf("%q with an s3:// ctx.sessionStore: not handed off", args)
		}
	}
	// Both spellings of the flag, over a non-s3 config.
	testrepo.WriteFile(t, global, "[ctx]\n\tsessionStore = git\n")
	for _, args := range [][]string{{"session", "push", "--store=s3://b"}, {"session", "push", "--store", "s3://b"}, {"session", "push", "-store=s3://b"}} {
		if !handed(args...) {
			t.Errorf("%q: not handed off", args)
		}
	}
}

// TestCompanionNotExecutable: a git-ctx-full on PATH without execute
// permission is named in the one-line error (exit 3), not reported as
// missing.
func TestCompanionNotExecutable(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(self), companionName)); err == nil {
		t.Skipf("%s beside the test binary", companionName)
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	p := filepath.Join(dir, companionName)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = findCompanion("git ctx mcp")
	if k, ok := fault.KindOf(err); !ok || fault.ExitCode(k) != 3 {
		t.Fatalf("non-executable companion: %v, want exit 3", err)
	}
	if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, "not executable") || strings.Contains(msg, "\n") {
		t.Fatalf("error does not name the non-executable %s on one line: %q", p, msg)
	}
}
