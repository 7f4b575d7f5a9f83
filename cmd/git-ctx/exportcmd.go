package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func cmdExport() *cli.Command {
	return &cli.Command{
		Name: "export",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ghyll-db", Usage: "database `PATH` to create (its directory must exist)", Required: true},
			&cli.BoolFlag{Name: "ghyll-verifiable-only", Usage: "leave out the records ghyll would report as hash_mismatch (git-ctx's rule)"},
			forceFlag, jsonFlag,
		},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			res, err := checkpoints.ExportGhyllDB(c.Context, m, c.String("ghyll-db"), checkpoints.ExportOptions{
				Replace: c.Bool("force"), GhyllVerifiableOnly: c.Bool("ghyll-verifiable-only")})
			if err != nil {
				return err
			}
			if res.Mismatch > 0 && !quiet(c) {
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: note: %d exported checkpoints will not verify in ghyll: %s (--ghyll-verifiable-only leaves them out)\n",
					res.Mismatch, checkpoints.GhyllMismatchNote)
			}
			return emit(c, output.NewExport(res), func(w io.Writer) {
				fmt.Fprintf(w, "Exported %d checkpoints to %s (%d that ghyll verifies, %d that it reports as hash_mismatch)\n",
					res.Exported, termtext.Line(res.Path), res.Verifiable, res.Mismatch)
				if res.LeftOut > 0 {
					fmt.Fprintf(w, "Left out %d checkpoints that ghyll would report as hash_mismatch\n", res.LeftOut)
				}
				if res.EmbLeftOut > 0 {
					fmt.Fprintf(w, "Left out the emb of %d checkpoints under ghyll's rule (their hash does not cover it)\n", res.EmbLeftOut)
				}
			})
		}),
	}
}
