//go:build ctx_lean

// This file is the shipped git-ctx's (tag ctx_lean): no MCP server, no S3
// session store; git-ctx-full has them (companion.go).

package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

// serveMCP hands `git ctx mcp` to git-ctx-full (main does so before the
// CLI runs; this is reached only by a command line it did not recognise).
func serveMCP(*cli.Context) error { return handOff("git ctx mcp") }

// companionFor is the command of args that git-ctx-full must run, or ""
// (companionCommand, in the current directory).
func companionFor(ctx context.Context, args []string) string {
	return companionCommand(ctx, args, ".")
}

// checkHandoff: the lean build checks nothing here; handOff refuses to
// exec when it was itself started as the companion.
func checkHandoff() error { return nil }
