package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/doctor"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

func cmdDoctor() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the setup and say how to fix what is wrong",
		Description: "Checks git, this device's identity and key permissions, the memory branch and its layout,\n" +
			"hook wiring (and hook managers), the remote and unpushed memory, cache freshness, unverified\n" +
			"records and loose objects. Each line is OK, WARN or FAIL with the fix; exits 1 on any FAIL.\n" +
			"It changes nothing.\n\nExample:\n  git ctx doctor",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			rep, err := doctor.Run(c.Context, ".")
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := output.Write(c.App.Writer, output.NewDoctor(rep)); err != nil {
					return err
				}
			} else {
				for _, f := range rep.Findings {
					line := fmt.Sprintf("%-4s %s: %s", f.Level, f.Check, f.Detail)
					if f.Fix != "" && f.Level != doctor.OK && !strings.Contains(f.Detail, f.Fix) {
						line += " — fix: " + f.Fix
					}
					// Details quote errors, paths and hook output.
					fmt.Fprintln(c.App.Writer, termtext.Line(line))
				}
			}
			if rep.Failed() {
				return silent(fault.Failed)
			}
			return nil
		},
	}
}
