package main

import (
	"github.com/urfave/cli/v2"
)

// cmdMCP is `git ctx mcp`: the Model Context Protocol server over standard
// input and output, served by git-ctx-full (full.go); the shipped lean
// git-ctx hands it over (lean.go, companion.go).
func cmdMCP() *cli.Command {
	return &cli.Command{
		Name: "mcp", ArgsUsage: " ",
		Action: serveMCP,
	}
}
