package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestCompanionCommand: the lean git-ctx hands exactly `mcp` and the
// session commands whose store is s3:// (flag, else git config) to
// git-ctx-full; everything else, help included, stays.
func TestCompanionCommand(t *testing.T) {
	s, repo, env := newRepoAs(t, "a")
	plain := t.TempDir() // not a repository
	ctx := context.Background()
	cases := []struct {
		args []string
		dir  string
		want bool
	}{
		{[]string{"mcp"}, plain, true},
		{[]string{"--no-pager", "-p", "mcp"}, plain, true},
		{[]string{"version"}, plain, false},
		{[]string{"log", "mcp"}, plain, false},
		{[]string{"hook", "session-start"}, plain, false},
		{[]string{"session", "push", "--store", "s3://bucket/p"}, plain, true},
		{[]string{"session", "list", "--json", "--store=s3://bucket"}, plain, true},
		{[]string{"session", "pull", "-store", "s3://bucket"}, plain, true},
		{[]string{"session", "status", "--store", "s3://b", "--store", "file:///tmp/x"}, plain, false},
		{[]string{"session", "status", "--store", "file:///tmp/x"}, repo, false},
		{[]string{"session", "status", "--", "--store", "s3://b"}, plain, false},
		{[]string{"session", "status", "--store"}, plain, false},
		{[]string{"session", "--help"}, repo, false},
		{[]string{"session"}, repo, false},
		{[]string{"session", "list"}, repo, false},
		{[]string{"session", "list"}, plain, false},
	}
	for _, c := range cases {
		if got := companionCommand(ctx, c.args, c.dir); (got != "") != c.want {
			t.Errorf("companionCommand(%q) = %q, want handed off %v", c.args, got, c.want)
		}
	}
	testrepo.Git(t, repo, env, nil, "config", "ctx.sessionStore", "s3://team-bucket/ctx")
	_ = s
	for _, args := range [][]string{{"session", "list"}, {"session", "push", "--json"}, {"-P", "session", "restore"}} {
		if got := companionCommand(ctx, args, repo); !strings.Contains(got, "s3://") {
			t.Errorf("companionCommand(%q) with ctx.sessionStore=s3://… = %q, want a hand-off", args, got)
		}
	}
	if got := companionCommand(ctx, []string{"session", "list", "--store", "git"}, repo); got != "" {
		t.Errorf("--store git over an s3:// config is handed off: %q", got)
	}
}

// TestFindCompanion: git-ctx-full beside the executable first, then on
// PATH; missing, a one-line Config error (exit 3) saying how to install it.
func TestFindCompanion(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(self), companionName)); err == nil {
		t.Skipf("%s beside the test binary", companionName)
	}
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	_, err = findCompanion("git ctx mcp")
	if k, ok := fault.KindOf(err); !ok || fault.ExitCode(k) != 3 {
		t.Fatalf("missing companion: %v (kind %v), want exit 3", err, k)
	}
	msg := err.Error()
	for _, want := range []string{"git ctx mcp", companionName, "./install.sh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	onPath := filepath.Join(empty, companionName)
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := findCompanion("git ctx mcp"); err != nil || p != onPath {
		t.Errorf("companion on PATH: %q, %v; want %s", p, err, onPath)
	}
}

// TestShippedBuildLeavesOutSDKs: the shipped git-ctx (the Makefile's and
// install.sh's tags, with ctx_lean) links neither the AWS SDK nor the MCP
// SDK, whose init every command would pay; git-ctx-full (the same tags
// without ctx_lean) links both, so the check can fail.
func TestShippedBuildLeavesOutSDKs(t *testing.T) {
	deps := func(tags string) string {
		cmd := exec.Command("go", "list", "-deps", "-tags", tags, ".")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps -tags %s: %v", tags, err)
		}
		return string(out)
	}
	sdks := []string{"github.com/aws/", "github.com/modelcontextprotocol/", "github.com/google/jsonschema-go/"}
	lean, full := deps(shippedTags), deps(companionTags)
	for _, p := range sdks {
		if strings.Contains(lean, "\n"+p) || strings.HasPrefix(lean, p) {
			t.Errorf("the shipped git-ctx (tags %s) links %s…: its init runs at every start", shippedTags, p)
		}
		if !strings.Contains(full, "\n"+p) {
			t.Errorf("%s (tags %s) does not link %s…: update this test", companionName, companionTags, p)
		}
	}
}

// The build tags of the shipped pair (Makefile BUILDTAGS, install.sh).
const (
	shippedTags   = "sqlite_fts5,urfave_cli_no_docs,ctx_lean"
	companionTags = "sqlite_fts5,urfave_cli_no_docs"
)

// FuzzCompanionCommand: any command line (NUL-separated words) is
// classified without a panic, and only one naming mcp or session (after
// the paging flags) is ever handed off.
func FuzzCompanionCommand(f *testing.F) {
	for _, s := range []string{"mcp", "-p\x00mcp", "session\x00push\x00--store\x00s3://b", "session\x00list\x00--store=s3://b", "session\x00--store", "session\x00x\x00-store", "log\x00mcp", "--\x00mcp", ""} {
		f.Add(s)
	}
	dir := f.TempDir() // not a repository: a session without --store reads no config
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		got := companionCommand(context.Background(), args, dir)
		if got == "" {
			return
		}
		i := 0
		for i < len(args) && isGlobalFlag(args[i]) {
			i++
		}
		if i == len(args) || (args[i] != "mcp" && args[i] != "session") {
			t.Fatalf("companionCommand(%q) = %q: handed off a command that is neither mcp nor session", args, got)
		}
		if args[i] == "session" && !strings.Contains(line, "s3://") {
			t.Fatalf("companionCommand(%q) = %q without an s3:// store", args, got)
		}
	})
}
