package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

func cmdExport() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write this repository's verified checkpoints into a new ghyll memory.db",
		Description: "Writes the checkpoints that verify (never quarantined or unverified ones) into a new SQLite file\n" +
			"in ghyll's code schema (the seed's columns plus plan_mode and resumed_from), oldest first, rows\n" +
			"that ghyll's store reads back as the same records (files and tools keep null versus []). The\n" +
			"schema has no version column: a reader verifies with v 2, the version ghyll writes.\n" +
			"Records under ghyll's rule (v 2) verify in ghyll; their emb, which their hash does not cover, is\n" +
			"left out. Records under git-ctx's rule (v 1, emb in the hash) are exported with their emb, and\n" +
			"ghyll's VerifyCheckpoint reports hash_mismatch for them: stderr says how many, and\n" +
			"--ghyll-verifiable-only leaves them out. An existing PATH is refused (exit 7) unless --force;\n" +
			"the file appears complete or not at all.\n\n" +
			"Example:\n  git ctx export --ghyll-db ~/team-memory.db",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ghyll-db", Usage: "database `PATH` to create (its directory must exist)", Required: true},
			&cli.BoolFlag{Name: "ghyll-verifiable-only", Usage: "leave out the records ghyll would report as hash_mismatch (git-ctx's rule)"},
			forceFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			res, err := checkpoints.ExportGhyllDB(c.Context, m, c.String("ghyll-db"), checkpoints.ExportOptions{
				Replace: c.Bool("force"), GhyllVerifiableOnly: c.Bool("ghyll-verifiable-only")})
			if err != nil {
				return err
			}
			if res.Mismatch > 0 && !quiet(c) {
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: note: %d exported checkpoints will not verify in ghyll: %s (--ghyll-verifiable-only leaves them out)\n",
					res.Mismatch, checkpoints.GhyllMismatchNote)
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.NewExport(res))
			}
			w := c.App.Writer
			fmt.Fprintf(w, "Exported %d checkpoints to %s (%d that ghyll verifies, %d that it reports as hash_mismatch)\n",
				res.Exported, termtext.Line(res.Path), res.Verifiable, res.Mismatch)
			if res.LeftOut > 0 {
				fmt.Fprintf(w, "Left out %d checkpoints that ghyll would report as hash_mismatch\n", res.LeftOut)
			}
			if res.EmbLeftOut > 0 {
				fmt.Fprintf(w, "Left out the emb of %d checkpoints under ghyll's rule (their hash does not cover it)\n", res.EmbLeftOut)
			}
			return nil
		},
	}
}
