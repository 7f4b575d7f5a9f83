package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permuteArgs moves flags that follow positional arguments in front of them,
// as git's own option parser allows (`git ctx show abc --json`); urfave/cli
// v2 stops at the first positional argument. Everything after "--" stays
// positional; a flag that takes a value keeps its value with it.
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	cmds := app.Commands
	var cmd *cli.Command
	// Walk the command path (e.g. "hooks install").
	for len(rest) > 0 {
		next := findCommand(cmds, rest[0])
		if next == nil {
			break
		}
		cmd = next
		out = append(out, rest[0])
		rest = rest[1:]
		cmds = cmd.Subcommands
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	known := map[string]bool{"help": true, "h": true}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			known[n] = true
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		// git's attached short form: -n20 is -n 20.
		if a[1] != '-' && len(a) > 2 && takesValue[a[1:2]] && !strings.Contains(a, "=") {
			flags = append(flags, a[:2], a[2:])
			continue
		}
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		flags = append(flags, a)
		if known[name] && takesValue[name] && !hasValue && i+1 < len(rest) {
			flags = append(flags, rest[i+1])
			i++
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}
