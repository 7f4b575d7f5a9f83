package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
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
		Flags:                  globalFlags,
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
			cmdVerify(), cmdPull(), cmdPush(), cmdSync(), cmdDevices(), cmdReview(), cmdExplain(),
			cmdHooks(), cmdHook(), cmdDoctor(), cmdReindex(), cmdImport(), cmdExport(), cmdAdopt(), cmdSnapshot(), cmdSession(), cmdVersion(),
			cmdMCP(),
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
	describe(app.Commands, "", parseHelp(helpText))
	enforceArity(app.Commands, "git ctx")
	pageCommands(app.Commands, "")
	return app
}

// groupAction is the action of a command group (devices, pkg, session,
// snapshot) called with no subcommand: run, or with run nil the group's
// help. A word that is none of its subcommands is a usage error.
func groupAction(run cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if word := c.Args().First(); c.NArg() > 0 {
			group := c.Command.Name
			return fault.New(fault.Usage, "'%s' is not a git ctx %s subcommand%s (see 'git ctx %s --help')", word, group, didYouMean(c.Command.Subcommands, word), group)
		}
		if run == nil {
			return cli.ShowSubcommandHelp(c)
		}
		return run(c)
	}
}

// enforceArity holds every command to its ArgsUsage, the contract of its
// positional arguments: one word per argument, a word in [brackets]
// optional, a word with "..." any number more; empty takes none. A missing
// or unexpected argument is a usage error before the command runs.
func enforceArity(cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		name := parent + " " + cmd.Name
		enforceArity(cmd.Subcommands, name)
		if cmd.Action == nil || len(cmd.Subcommands) > 0 {
			continue // a group's own action reports unknown subcommands
		}
		usage := strings.Fields(cmd.ArgsUsage)
		min, max := arity(usage)
		action := cmd.Action
		cmd.Action = func(c *cli.Context) error {
			switch n := c.NArg(); {
			case n < min:
				return fault.New(fault.Usage, "%s needs %s (see '%s --help')", name, usage[n], name)
			case n > max && max == 0:
				return fault.New(fault.Usage, "%s takes no arguments, not %q (see '%s --help')", name, c.Args().Get(max), name)
			case n > max:
				return fault.New(fault.Usage, "%s takes %s; unexpected %q (see '%s --help')", name, strings.Join(usage, " "), c.Args().Get(max), name)
			}
			return action(c)
		}
	}
}

// arity is how many positional arguments the words of an ArgsUsage ask
// for at the least and at the most.
func arity(usage []string) (min, max int) {
	for _, w := range usage {
		if !strings.HasPrefix(w, "[") {
			min++
		}
		if strings.Contains(w, "...") || strings.Contains(w, "…") {
			return min, math.MaxInt
		}
		max++
	}
	return min, max
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

// emit prints a command's result on standard output: v, a shape of
// internal/output, with --json; else text (when not nil).
func emit(c *cli.Context, v any, text func(w io.Writer)) error {
	return emitBuilt(c, func() (any, error) { return v, nil }, text)
}

// emitBuilt is emit for a --json shape that is built only with --json,
// by a builder that can fail.
func emitBuilt[T any](c *cli.Context, build func() (T, error), text func(w io.Writer)) error {
	if !c.Bool("json") {
		if text != nil {
			text(c.App.Writer)
		}
		return nil
	}
	v, err := build()
	if err != nil {
		return err
	}
	return output.Write(c.App.Writer, v)
}

// forceFlag lets a command replace its output file.
var forceFlag = &cli.BoolFlag{Name: "force", Usage: "replace the output file if it exists (without it an existing file is refused, exit 7)"}

// outputFlags are -o/--output FILE (usage says its default) and --force,
// then more.
func outputFlags(usage string, more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: usage}, forceFlag}, more...)
}
