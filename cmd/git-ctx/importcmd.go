package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

func cmdImport() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "append the checkpoints of a ghyll memory.db to this device's chain",
		Description: "Each row is verified first: its hash under either checkpoint rule (trying the version and the\n" +
			"null/[] list forms ghyll's store loses) and its signature under <ghyll-keys>/<device>.pub.\n" +
			"Rows that fail are reported and skipped; the rest are re-signed by this device in one commit,\n" +
			"each naming its origin in an \"imported_from\" member (in a ghyll-v1 branch, whose hash rule leaves\n" +
			"unknown members out: in the summary's last line). Importing again adds nothing.\n\n" +
			"Example:\n  git ctx import --ghyll-db ~/.ghyll/memory.db",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ghyll-db", Usage: "ghyll database `PATH`", Required: true},
			&cli.StringFlag{Name: "ghyll-keys", Usage: "`DIR` of ghyll's <device>.pub keys (default ~/.ghyll/keys)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			keys := c.String("ghyll-keys")
			if keys == "" {
				if home, err := os.UserHomeDir(); err == nil {
					keys = filepath.Join(home, ".ghyll", "keys")
				}
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			res, err := checkpoints.ImportGhyllDB(c.Context, m, c.String("ghyll-db"), keys)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := output.Write(c.App.Writer, output.NewImport(res)); err != nil {
					return err
				}
			} else {
				w := c.App.Writer
				for _, s := range res.Skipped {
					fmt.Fprintf(w, "skipped %s (device %s): %s\n", termtext.Line(shortHash(s.Hash)), termtext.Line(s.Device), termtext.Line(s.Reason))
				}
				fmt.Fprintf(w, "Imported %d checkpoints (%d skipped, %d already imported)\n", len(res.Imported), len(res.Skipped), res.Already)
			}
			if len(res.Skipped) > 0 {
				return silent(fault.Failed)
			}
			return nil
		},
	}
}
