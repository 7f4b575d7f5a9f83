package main

import (
	_ "embed"
	"strings"

	"github.com/urfave/cli/v2"
)

// helpText is every command's usage line and description (help.txt's
// format is described at its top).
//
//go:embed help.txt
var helpText string

// helpEntry is one command's text in help.txt.
type helpEntry struct {
	usage, description string
}

// parseHelp reads help.txt's entries by command path ("pkg build").
func parseHelp(text string) map[string]helpEntry {
	entries := map[string]helpEntry{}
	blocks := strings.Split(text, "\n== ")
	for _, block := range blocks[1:] {
		head, body, _ := strings.Cut(block, "\n")
		usage, description, _ := strings.Cut(body, "\n")
		e := helpEntry{usage: usage, description: strings.Trim(description, "\n")}
		for _, path := range strings.Split(head, ",") {
			entries[strings.TrimSpace(path)] = e
		}
	}
	return entries
}

// describe gives every command under parent its usage line and
// description from help, and returns the paths help has no entry for.
func describe(cmds []*cli.Command, parent string, help map[string]helpEntry) (missing []string) {
	for _, cmd := range cmds {
		path := strings.TrimSpace(parent + " " + cmd.Name)
		if e, ok := help[path]; ok {
			cmd.Usage, cmd.Description = e.usage, e.description
		} else {
			missing = append(missing, path)
		}
		missing = append(missing, describe(cmd.Subcommands, path, help)...)
	}
	return missing
}
