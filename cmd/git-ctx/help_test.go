package main

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpText: help.txt has an entry with a usage line for every command,
// and every entry names a command.
func TestHelpText(t *testing.T) {
	help := parseHelp(helpText)
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	if missing := describe(app.Commands, "", help); len(missing) > 0 {
		t.Errorf("help.txt has no entry for %q", missing)
	}
	paths := map[string]bool{}
	var walk func(parent string, cmds []*cli.Command)
	walk = func(parent string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(parent + " " + c.Name)
			paths[path] = true
			if c.Usage == "" || strings.Contains(c.Usage, "\n") {
				t.Errorf("%s: usage %q is not one line", path, c.Usage)
			}
			walk(path, c.Subcommands)
		}
	}
	walk("", app.Commands)
	for path := range help {
		if !paths[path] {
			t.Errorf("help.txt: %q is no command", path)
		}
	}
}
