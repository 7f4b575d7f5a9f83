package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

// newApp defines every command; the man page and help come from here too.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "git-ctx",
		HelpName:  "git ctx",
		Usage:     "keep coding agents' memory in the project's git repository",
		UsageText: "git ctx <command> [options]",
		Version:   version,
		Description: "git ctx records signed, hash-chained checkpoints of agents' work on the orphan branch " +
			"ghyll/memory, without touching HEAD, the index or the work tree.",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// We print errors ourselves, once, as one line.
		ExitErrHandler:         func(*cli.Context, error) {},
		HideVersion:            true,
		UseShortOptionHandling: true,
		Suggest:                true,
		CommandNotFound: func(c *cli.Context, name string) {
			// Reported as a usage error by the Before hook below.
		},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageErr("%v (see 'git ctx %s --help')", err, c.Command.Name)
		},
		Commands: []*cli.Command{
			cmdInit(), cmdStatus(), cmdCheckpoint(), cmdLog(), cmdShow(), cmdSearch(), cmdSimilar(),
			cmdVerify(), cmdPull(), cmdPush(), cmdSync(), cmdDevices(), cmdReview(),
			cmdHooks(), cmdHook(), cmdDoctor(), cmdReindex(), cmdImport(), cmdAdopt(), cmdSnapshot(), cmdSession(), cmdVersion(),
			cmdPkg(),
			cmdMan(), cmdCompletion(),
		},
	}
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return usageErr("'%s' is not a git ctx command (see 'git ctx --help')", c.Args().First())
		}
		return cli.ShowAppHelp(c)
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = app.OnUsageError
	}
	return app
}

// jsonFlag is the --json flag every read command takes.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}
