package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
)

func cmdAdopt() *cli.Command {
	return &cli.Command{
		Name:      "adopt",
		Usage:     "take the records under another repository id as this repository's",
		ArgsUsage: "<repo-id>",
		Description: "Records sit under repos/<id>/ on the memory branch and are signed over their repo field, so\n" +
			"they cannot be moved. 'adopt' leaves them where they are and adds an adoption of <id>, signed by\n" +
			"this device, to the branch's REPO file: log, status, show, pull and verify then treat that\n" +
			"directory as this repository's. 'git ctx status' and 'git ctx doctor' list the ids on the branch\n" +
			"that are not adopted yet. Push to share the adoption.\n\n" +
			"Example:\n  git ctx adopt 0432dc9db558d8b80b2438dabb57bd7de1631e8960f1773e40a2a00f409dd657",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fault.New(fault.Usage, "adopt takes one repository id")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			id := c.Args().First()
			if err := m.Adopt(c.Context, id); err != nil {
				return err
			}
			this, err := m.RepoID(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.Adopt{Adopted: id, RepoID: this})
			}
			if !quiet(c) {
				fmt.Fprintf(c.App.Writer, "Adopted repos/%s into repository %s\n", id, this)
			}
			return nil
		},
	}
}
