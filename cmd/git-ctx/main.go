// Command git-ctx is the `git ctx` subcommand: agents' memory as signed,
// hash-chained checkpoints on the ghyll/memory branch of the project's own
// repository. This package wires flags to the capability packages
// (internal/checkpoints, internal/snapshots, internal/ctxpackages, sync,
// sessions, hooks, doctor) and prints their results: human text with
// internal/termtext (git-like --format, --date and colour through
// internal/pretty, a pager through internal/pager: gitout.go), JSON only
// through internal/output. Errors carry a
// kind from internal/fault, which alone decides the exit code. It holds no
// logic of its own; docs/ARCHITECTURE.md says where a new command goes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

// version is set at build time: -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if err := checkHandoff(); err != nil {
		code = report(err, os.Stderr)
	} else if what := companionFor(ctx, os.Args[1:]); what != "" {
		// The lean build: git-ctx-full runs this command (companion.go).
		code = report(handOff(what), os.Stderr)
	} else {
		code = run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	}
	stop()
	os.Exit(code)
}

// run executes the CLI and returns the process exit code: 0, or the exit
// code of the error's kind (internal/fault's table).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, gitoutArgs(app, args))
	if err == nil {
		return 0
	}
	return report(err, stderr)
}

// report prints err as one line on stderr and returns the exit code of its
// kind (internal/fault's table). An error without a kind is a bug: with
// GIT_CTX_STRICT_ERRORS=1 (the tests) it is reported as "error without a
// kind" with exit fault.ExitUnkinded; otherwise it is printed as any error
// and exits 1, as it did before errors had kinds.
func report(err error, stderr io.Writer) int {
	kind, ok := errorKind(err)
	// An error may quote a path or a record's text: one safe line.
	msg := termtext.Line(strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	if !ok {
		if os.Getenv(strictErrorsEnv) == "1" {
			fmt.Fprintf(stderr, "git-ctx: error without a kind: %s\n", msg)
			return fault.ExitUnkinded
		}
		kind = fault.Failed
	}
	if msg != "" {
		fmt.Fprintf(stderr, "git-ctx: %s\n", msg)
	}
	return fault.ExitCode(kind)
}
