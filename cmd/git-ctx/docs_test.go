package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every visible command appears in each completion script.
func TestCompletionsCoverCommands(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	top, all := commandTree(app)
	if len(top) < 15 || len(all) < len(top) {
		t.Fatalf("command tree: %v", top)
	}
	for _, shell := range []func(io.Writer, *cli.App) error{writeBash, writeZsh, writeFish} {
		var b bytes.Buffer
		if err := shell(&b, app); err != nil {
			t.Fatal(err)
		}
		for _, c := range top {
			if !strings.Contains(b.String(), c) {
				t.Errorf("completion lacks %q", c)
			}
		}
		if strings.Contains(b.String(), "claude-stop") {
			t.Error("hidden hook entry points must not be completed")
		}
	}
}
