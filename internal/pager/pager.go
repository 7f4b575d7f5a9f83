// Package pager pages a command's standard output the way git does.
//
// The pager is chosen as git chooses it (Select): only when standard
// output is a terminal; $GIT_PAGER, else git config core.pager, else
// $PAGER, else "less"; an empty value or "cat" means no pager. It runs
// through "sh -c" with LESS=FRX and LV=-c added to its environment when
// they are unset, reads what the command writes, and writes to the
// command's standard output. Standard error is never paged.
//
// The one call a command makes:
//
//	w, done := pager.Wrap(stdout, pager.Options{Mode: mode, Getenv: os.LookupEnv, Config: cfg})
//	defer done()
//	… write the output to w …
//
// Wrap returns stdout itself when nothing is to be paged. Otherwise the
// pager starts at the first write (a command that fails before printing
// anything starts none); done closes its input and waits for it to exit
// (the user quits less). A pager that exits early, or cannot be started,
// does not make the command fail: writes after it is gone are dropped,
// and its exit status is ignored, as git ignores it.
package pager

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// Mode is whether a command pages: git's default for the command, or the
// global -p/--paginate and -P/--no-pager.
type Mode int

// The modes.
const (
	// Default pages when the command pages by default (Options.Pages) or
	// git config pager.ctx says so.
	Default Mode = iota
	// Always is -p/--paginate: page whatever the command (still only on
	// a terminal, as git).
	Always
	// Never is -P/--no-pager.
	Never
)

// Options is what the pager decision depends on.
type Options struct {
	Mode Mode
	// Pages: the command pages by default (log, search, review, lists).
	Pages bool
	// Getenv looks up an environment variable; nil is os.LookupEnv.
	Getenv func(key string) (string, bool)
	// Config looks up git configuration (core.pager, pager.ctx); nil is
	// an empty configuration.
	Config func(key string) (string, bool)
	// Terminal reports whether stdout is a terminal; nil checks that it
	// is an *os.File on a terminal.
	Terminal func(stdout io.Writer) bool
	// Stderr is the pager's standard error; nil is os.Stderr.
	Stderr io.Writer
}

func (o Options) getenv(k string) (string, bool) {
	if o.Getenv == nil {
		return os.LookupEnv(k)
	}
	return o.Getenv(k)
}

func (o Options) config(k string) (string, bool) {
	if o.Config == nil {
		return "", false
	}
	return o.Config(k)
}

// IsTerminal reports whether w is an *os.File on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Select returns the pager command to run for output to stdout, or ""
// for none. Only on a terminal, never with -P. Whether to page: -p
// always; else git config pager.ctx — a false value pages nothing, true
// pages, any other value is the pager command itself —, else the
// command's default. Which pager: $GIT_PAGER, core.pager, $PAGER,
// "less". An empty command or "cat" is none.
func Select(stdout io.Writer, o Options) string {
	isTerm := o.Terminal
	if isTerm == nil {
		isTerm = IsTerminal
	}
	if o.Mode == Never || !isTerm(stdout) {
		return "" // asked first: off a terminal no configuration is read
	}
	page, command := o.Mode == Always || o.Pages, ""
	if o.Mode != Always {
		if v, ok := o.config("pager.ctx"); ok {
			switch b, isBool := parseBool(v); {
			case isBool:
				page = b
			default:
				page, command = true, v
			}
		}
	}
	if !page {
		return ""
	}
	if command == "" {
		command = choose(o)
	}
	if command == "" || command == "cat" {
		return ""
	}
	return command
}

// choose is git's git_pager: GIT_PAGER, core.pager, PAGER, less; a set
// but empty value stops the search (no pager).
func choose(o Options) string {
	if v, ok := o.getenv("GIT_PAGER"); ok {
		return v
	}
	if v, ok := o.config("core.pager"); ok {
		return v
	}
	if v, ok := o.getenv("PAGER"); ok {
		return v
	}
	return "less"
}

// parseBool reads a git boolean; isBool false when v is not one.
func parseBool(v string) (b, isBool bool) {
	switch v {
	case "true", "yes", "on", "1", "":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// Wrap returns where a command writes its standard output: stdout
// itself, or a pager (see Select) started at the first write; and done,
// to call once when the command has finished writing. done waits for
// the pager and returns nil: the pager's exit is the user's business.
func Wrap(stdout io.Writer, o Options) (w io.Writer, done func() error) {
	command := Select(stdout, o)
	if command == "" {
		return stdout, func() error { return nil }
	}
	p := &Pager{command: command, stdout: stdout, stderr: o.Stderr, env: pagerEnv(o)}
	if p.stderr == nil {
		p.stderr = os.Stderr
	}
	return p, p.Close
}

// Paging reports whether w, from Wrap, goes to a pager (for the colour
// decision: colour is on in a pager as on a terminal).
func Paging(w io.Writer) bool {
	_, ok := w.(*Pager)
	return ok
}

// pagerEnv is the pager's environment: the process's, with LESS and LV
// as Getenv sees them, LESS=FRX and LV=-c when unset (git's defaults).
func pagerEnv(o Options) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LESS=") && !strings.HasPrefix(kv, "LV=") {
			env = append(env, kv)
		}
	}
	for k, def := range map[string]string{"LESS": "FRX", "LV": "-c"} {
		v, ok := o.getenv(k)
		if !ok {
			v = def
		}
		env = append(env, k+"="+v)
	}
	return env
}

// Pager is a running (or not yet started) pager: an io.Writer that feeds
// it. Its zero value is not usable; Wrap makes one.
type Pager struct {
	command        string
	stdout, stderr io.Writer
	env            []string

	mu      sync.Mutex
	started bool
	in      *os.File // the pipe's write end; nil when not started or start failed
	cmd     *exec.Cmd
	gone    bool // the pager stopped reading: drop what follows
}

// Command is the pager command line (run by sh -c).
func (p *Pager) Command() string { return p.command }

// Write feeds the pager, starting it on the first call. When it cannot
// be started the output goes to stdout unpaged; once it has exited,
// writes are dropped (and reported as written, so the command goes on
// and exits as it would have).
func (p *Pager) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.started = true
		p.start()
	}
	switch {
	case p.gone:
		return len(b), nil
	case p.in == nil:
		return p.stdout.Write(b)
	}
	n, err := p.in.Write(b)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)) {
		p.gone = true
		return len(b), nil
	}
	return n, err
}

// start runs the pager with a pipe as its standard input; on failure
// p.in stays nil (output unpaged), as git goes on without its pager.
func (p *Pager) start() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command("sh", "-c", p.command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = r, p.stdout, p.stderr, p.env
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return
	}
	r.Close() // the pager holds the read end; when it exits, writes fail with EPIPE
	p.in, p.cmd = w, cmd
}

// Close ends the pager's input and waits for it to exit. It returns nil:
// a pager that quit early or failed does not fail the command.
func (p *Pager) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.in == nil {
		return nil
	}
	p.in.Close()
	p.in = nil
	p.gone = true
	_ = p.cmd.Wait()
	return nil
}
