package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func cmdAdopt() *cli.Command {
	return &cli.Command{
		Name: "adopt", ArgsUsage: "<repo-id>", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			id := c.Args().First()
			if err := m.Adopt(c.Context, id); err != nil {
				return err
			}
			this, err := m.RepoID(c.Context)
			if err != nil {
				return err
			}
			return emit(c, output.Adopt{Adopted: id, RepoID: this}, func(w io.Writer) {
				if !quiet(c) {
					fmt.Fprintf(w, "Adopted repos/%s into repository %s\n", id, this)
				}
			})
		}),
	}
}
