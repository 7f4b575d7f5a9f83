package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func cmdImport() *cli.Command {
	return &cli.Command{
		Name: "import",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ghyll-db", Usage: "ghyll database `PATH`", Required: true},
			&cli.StringFlag{Name: "ghyll-keys", Usage: "`DIR` of ghyll's <device>.pub keys (default ~/.ghyll/keys)"},
			jsonFlag,
		},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			keys := c.String("ghyll-keys")
			if keys == "" {
				if home, err := os.UserHomeDir(); err == nil {
					keys = filepath.Join(home, ".ghyll", "keys")
				}
			}
			res, err := checkpoints.ImportGhyllDB(c.Context, m, c.String("ghyll-db"), keys)
			if err != nil {
				return err
			}
			err = emit(c, output.NewImport(res), func(w io.Writer) {
				for _, s := range res.Skipped {
					fmt.Fprintf(w, "skipped %s (device %s): %s\n", termtext.Line(shortHash(s.Hash)), termtext.Line(s.Device), termtext.Line(s.Reason))
				}
				fmt.Fprintf(w, "Imported %d checkpoints (%d skipped, %d already imported)\n", len(res.Imported), len(res.Skipped), res.Already)
			})
			return failedIf(err, len(res.Skipped) > 0)
		}),
	}
}
