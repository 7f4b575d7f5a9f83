// Package gitexec runs the git executable: with a context, a clean and
// non-interactive environment, and errors that carry git's own message.
package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// Error is a git command that exited non-zero or could not start.
type Error struct {
	Args     []string
	ExitCode int    // -1 when git did not run
	Stderr   string // trimmed
	Err      error
}

func (e *Error) Error() string {
	msg := e.Stderr
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("git %s failed: %s", e.Subcommand(), msg)
}

// Subcommand is the git command that failed ("fetch", "config"), without
// its options and arguments: those are internal details, and may carry
// URLs or paths that do not belong in a message.
func (e *Error) Subcommand() string {
	for i := 0; i < len(e.Args); i++ {
		a := e.Args[i]
		switch {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree":
			i++ // an option of git itself, with its value
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "(no command)"
}

// Unwrap returns the cause (the exec error, ErrNoGit, or the context's
// error) and ErrGit, which gives every failed git command the kind Failed
// unless its caller wraps it with another kind.
func (e *Error) Unwrap() []error { return []error{e.Err, ErrGit} }

// ErrGit is in the chain of every Error: a git command failed.
var ErrGit = fault.Sentinel(fault.Failed, "git command failed")

// ErrNoGit means no git executable is on PATH.
var ErrNoGit = fault.Sentinel(fault.Failed, "git executable not found on PATH")

// Cmd describes one git invocation.
type Cmd struct {
	Dir   string    // working directory ("" = current)
	Args  []string  // arguments after "git"
	Stdin io.Reader // nil = empty
	Env   []string  // extra KEY=VALUE entries, appended last
	// Interactive keeps git's terminal prompts enabled; by default
	// GIT_TERMINAL_PROMPT=0 so a missing credential fails instead of hanging.
	Interactive bool
	Stderr      io.Writer // when set, git's stderr streams there too
}

// Run runs git and returns its stdout.
func Run(ctx context.Context, c Cmd) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", c.Args...)
	cmd.Dir = c.Dir
	cmd.Stdin = c.Stdin
	cmd.Stdout = &stdout
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Stderr)
	} else {
		cmd.Stderr = &stderr
	}
	cmd.Env = Environ(c.Interactive, c.Env...)
	start := time.Now()
	err := cmd.Run()
	if os.Getenv("GIT_CTX_TRACE") != "" {
		code := 0
		if err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
		}
		fmt.Fprintf(os.Stderr, "git-ctx trace: git %s -> exit %d in %s\n", strings.Join(c.Args, " "), code, time.Since(start).Round(time.Microsecond))
		if s := strings.TrimSpace(stderr.String()); s != "" && code != 0 {
			fmt.Fprintf(os.Stderr, "git-ctx trace:   %s\n", strings.ReplaceAll(s, "\n", "\ngit-ctx trace:   "))
		}
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	ge := &Error{Args: c.Args, ExitCode: -1, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ge.ExitCode = ee.ExitCode()
	case errors.Is(err, exec.ErrNotFound):
		ge.Err = ErrNoGit
	}
	if ctx.Err() != nil {
		ge.Err = ctx.Err()
	}
	return stdout.Bytes(), ge
}

// Git is Run with only a directory and arguments.
func Git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return Run(ctx, Cmd{Dir: dir, Args: args})
}

// Environ returns the environment for a git child: the current one, with
// GIT_TERMINAL_PROMPT=0 unless interactive, and extra appended last.
func Environ(interactive bool, extra ...string) []string {
	env := os.Environ()
	if !interactive {
		env = append(env, "GIT_TERMINAL_PROMPT=0")
	}
	return append(env, extra...)
}
