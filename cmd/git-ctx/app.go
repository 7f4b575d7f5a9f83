package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
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
			return fault.New(fault.Usage, "%v (see 'git ctx %s --help')", err, c.Command.Name)
		},
		Commands: []*cli.Command{
			cmdInit(), cmdStatus(), cmdCheckpoint(), cmdLog(), cmdShow(), cmdSearch(), cmdSimilar(),
			cmdVerify(), cmdPull(), cmdPush(), cmdSync(), cmdDevices(), cmdReview(),
			cmdHooks(), cmdHook(), cmdDoctor(), cmdReindex(), cmdImport(), cmdExport(), cmdAdopt(), cmdSnapshot(), cmdSession(), cmdVersion(),
			cmdPkg(),
			cmdMan(), cmdCompletion(),
		},
	}
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return fault.New(fault.Usage, "'%s' is not a git ctx command%s (see 'git ctx --help')", c.Args().First(), didYouMean(c.App.Commands, c.Args().First()))
		}
		return cli.ShowAppHelp(c)
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = app.OnUsageError
	}
	enforceArity(app.Commands, "git ctx")
	return app
}

// unknownSubcommand is the usage error of a command group (devices, pkg,
// session, snapshot) called with a word that is none of its subcommands.
func unknownSubcommand(c *cli.Context, group string) error {
	word := c.Args().First()
	return fault.New(fault.Usage, "'%s' is not a git ctx %s subcommand%s (see 'git ctx %s --help')", word, group, didYouMean(c.Command.Subcommands, word), group)
}

// enforceArity refuses positional arguments a command does not declare. A
// command's ArgsUsage is its contract: empty takes none, a word ending in
// "..." any number, otherwise one argument per word.
func enforceArity(cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		name := parent + " " + cmd.Name
		enforceArity(cmd.Subcommands, name)
		if cmd.Action == nil || len(cmd.Subcommands) > 0 {
			continue // a group's own action reports unknown subcommands
		}
		usage := strings.Fields(cmd.ArgsUsage)
		if strings.Contains(cmd.ArgsUsage, "...") || strings.Contains(cmd.ArgsUsage, "…") {
			continue
		}
		action, max := cmd.Action, len(usage)
		cmd.Action = func(c *cli.Context) error {
			if c.NArg() > max {
				extra := c.Args().Get(max)
				if max == 0 {
					return fault.New(fault.Usage, "%s takes no arguments, not %q (see '%s --help')", name, extra, name)
				}
				return fault.New(fault.Usage, "%s takes %s; unexpected %q (see '%s --help')", name, strings.Join(usage, " "), extra, name)
			}
			return action(c)
		}
	}
}

// didYouMean names the visible command closest to word (", did you mean
// 'log'?"), or "" when none is close: at most two edits apart, or word
// a prefix of exactly one.
func didYouMean(cmds []*cli.Command, word string) string {
	best, bestDist, prefixed := "", 3, []string{}
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, name := range c.Names() {
			if d := editDistance(word, name); d < bestDist {
				best, bestDist = name, d
			}
			if len(word) >= 2 && strings.HasPrefix(name, word) {
				prefixed = append(prefixed, name)
			}
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean '%s'?", best)
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 64 // too long to be a typo of a command name
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// jsonFlag is the --json flag every read command takes.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}
