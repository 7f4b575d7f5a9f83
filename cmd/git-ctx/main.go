// Command git-ctx is the `git ctx` subcommand: agents' memory as signed,
// hash-chained checkpoints on the ghyll/memory branch of the project's own
// repository. This package wires flags to the memory, gitstore and formats
// packages and prints their results (JSON only through internal/output);
// it holds no logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/git-ctx/git-ctx/internal/termtext"
)

// version is set at build time: -ldflags "-X main.version=…".
var version = "dev"

// Exit codes (documented in docs/git-ctx.1.md and the README).
const (
	exitOK       = 0
	exitFailed   = 1 // verification failed, or not found
	exitUsage    = 2
	exitConfig   = 3 // not initialised or bad configuration
	exitRemote   = 4
	exitConflict = 6
	exitRefused  = 7 // refused for safety: bad input, size limit, unsafe path, existing output file
)

// exitError carries an exit code and a one-line message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func usageErr(format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf(format, args...))
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, permuteArgs(app, args))
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	// An error may quote a path or a record's text: one safe line.
	msg := termtext.Line(strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	if msg != "" {
		fmt.Fprintf(stderr, "git-ctx: %s\n", msg)
	}
	return code
}

// silent is an error whose message was already printed (e.g. a failed
// verification report); only its exit code matters.
type silent struct{ code int }

func (s silent) Error() string { return "" }

func exitCode(err error) int {
	var s silent
	if errors.As(err, &s) {
		return s.code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return classify(err)
}
