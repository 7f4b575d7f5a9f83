//go:build !ctx_lean

// This file is built without the tag ctx_lean: git-ctx-full, and the
// tests' in-process CLI, which have everything (companion.go).

package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/recall"
)

// companionFor: git-ctx-full runs every command itself. Started by a lean
// git-ctx, it drops handoffEnv so that the git-ctx its children run (git
// hooks) starts clean.
func companionFor(context.Context, []string) string {
	os.Unsetenv(handoffEnv)
	return ""
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
