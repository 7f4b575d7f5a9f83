//go:build !ctx_lean

// This file is built without the tag ctx_lean: git-ctx-full, and the
// tests' in-process CLI, which have everything (companion.go).

package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/recall"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

// companionFor: git-ctx-full runs every command itself.
func companionFor(context.Context, []string) string { return "" }

// checkHandoff: started by a lean git-ctx (handoffEnv holds its version),
// git-ctx-full refuses to run for a git-ctx of another build: a stale
// companion on PATH would otherwise write the cache, or the branch, in its
// own older form. It drops handoffEnv so that the git-ctx its children run
// (git hooks) starts clean.
func checkHandoff() error {
	from, set := os.LookupEnv(handoffEnv)
	os.Unsetenv(handoffEnv)
	if !set || from == version {
		return nil
	}
	self, _ := os.Executable()
	return fault.New(fault.Config, "%s is version %s but was started by git-ctx %s: the two must come from one build; reinstall both with ./install.sh or make install",
		termtext.Line(self), termtext.Line(version), termtext.Line(from))
}

// serveMCP is `git ctx mcp`: the Model Context Protocol server over
// standard input and output. Standard output carries only the protocol;
// the server's own log goes to standard error.
func serveMCP(c *cli.Context) error {
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	m.Progress = nil // no progress line while a client reads the protocol
	logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return recall.Serve(c.Context, m, c.App.Reader, c.App.Writer, recall.Options{Version: version, Logger: logger})
}
