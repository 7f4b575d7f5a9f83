package main

import (
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/recall"
)

// cmdMCP is `git ctx mcp`: the Model Context Protocol server over standard
// input and output. Standard output carries only the protocol; the
// server's own log goes to standard error.
func cmdMCP() *cli.Command {
	return &cli.Command{
		Name: "mcp", ArgsUsage: " ",
		Action: func(c *cli.Context) error {
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			m.Progress = nil // no progress line while a client reads the protocol
			logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))
			return recall.Serve(c.Context, m, c.App.Reader, c.App.Writer, recall.Options{Version: version, Logger: logger})
		},
	}
}
