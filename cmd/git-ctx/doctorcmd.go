package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/doctor"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

func cmdDoctor() *cli.Command {
	return &cli.Command{
		Name: "doctor", Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			rep, err := doctor.Run(c.Context, ".")
			if err != nil {
				return err
			}
			err = emit(c, output.NewDoctor(rep), func(w io.Writer) {
				for _, f := range rep.Findings {
					line := fmt.Sprintf("%-4s %s: %s", f.Level, f.Check, f.Detail)
					if f.Fix != "" && f.Level != doctor.OK && !strings.Contains(f.Detail, f.Fix) {
						line += " — fix: " + f.Fix
					}
					// Details quote errors, paths and hook output.
					fmt.Fprintln(w, termtext.Line(line))
				}
			})
			return failedIf(err, rep.Failed())
		},
	}
}
