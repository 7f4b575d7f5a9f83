// Package fault gives every error git-ctx can return a Kind, and holds THE
// ONE table from kinds to the process's exit codes (ExitCode); the man
// page's EXIT STATUS is generated from it and the README's exit-code table
// says the same. The kinds, in those words:
//
//	Failed    1  verification failed, something was rejected, or not found
//	Usage     2  usage (unknown command, unexpected argument, bad flag value)
//	Config    3  not initialised or bad configuration
//	Remote    4  remote or transport failure
//	Conflict  6  conflict or fork
//	Refused   7  refused for safety (bad input, size limit, unsafe path, an
//	             output file that exists without --force)
//
// A package declares the errors its callers branch on as kinded sentinels
// (Sentinel), so the kind is fixed where the error is defined:
//
//	var ErrBranchMoved = fault.Sentinel(fault.Conflict, "memory branch moved concurrently")
//
// and errors.Is keeps working on them through any wrapping. New and Wrap
// give a kind to an error made on the spot. When an error holds several
// kinded errors, the first one met walking its chain (outermost first, the
// branches of a joined error in order) decides: wrapping an error with a
// kind overrides the kinds inside it.
//
// The rule for foreign errors. The packages under formats/ import nothing of
// this project, so their sentinels (checkpoint.ErrTooLarge, ctxpkg.ErrTooLarge,
// snapshot.ErrParse, …) carry no kind; neither do the standard library's
// (context.Canceled, fs.ErrNotExist) nor those of the CLI library. The
// package of ours that returns such an error to its callers gives it the
// kind that fits there (fault.Wrap, or wrapping it in one of its kinded
// sentinels). The single exception is the CLI (cmd/git-ctx): it keeps one
// small explicit list of the foreign errors it receives directly (context
// cancellation, the CLI library's flag errors, and the format size limits
// that still arrive unwrapped), consulted only for an error that has no
// kind. Any other error without a kind that reaches the CLI is a bug: the
// tests run the CLI in a strict mode (GIT_CTX_STRICT_ERRORS=1) that exits
// ExitUnkinded on it; otherwise it exits 1.
//
// Failed is also the kind of an operation that failed for a reason none of
// the other kinds names (an I/O error, a git command that failed: see
// gitexec.ErrGit): exit 1, as before errors had kinds.
package fault

import (
	"errors"
	"fmt"
)

// Kind is what kind of failure an error is; it decides the exit code.
// The zero Kind is no kind.
type Kind int

// The kinds. Their exit codes are in the table behind ExitCode.
const (
	// Failed: verification failed, something was rejected, or not found.
	Failed Kind = iota + 1
	// Usage: the command line is wrong (unknown command, unexpected
	// argument, bad flag value, a missing required flag).
	Usage
	// Config: not initialised, or bad configuration (repository, device
	// identity, git config, passphrase source).
	Config
	// Remote: the remote or the transport to it failed.
	Remote
	// Conflict: something moved concurrently, a device's chain forked, or
	// what is to be written differs from what is already there.
	Conflict
	// Refused: refused for safety: bad input, a size limit, an unsafe path,
	// an output file that exists without --force.
	Refused
)

// ExitUnkinded is not a kind: it is the exit code of a strict run
// (GIT_CTX_STRICT_ERRORS=1) that met an error without a kind (70 is
// sysexits' EX_SOFTWARE: an internal error).
const ExitUnkinded = 70

// table is THE ONE table of kinds, their exit codes and the words the
// documentation uses for them (the man page's EXIT STATUS is generated
// from it).
var table = []struct {
	kind  Kind
	name  string
	code  int
	words string
}{
	{Failed, "failed", 1, "verification failed, something was rejected, or not found"},
	{Usage, "usage", 2, "usage"},
	{Config, "config", 3, "not initialised or bad configuration"},
	{Remote, "remote", 4, "remote or transport failure"},
	{Conflict, "conflict", 6, "conflict or fork"},
	{Refused, "refused", 7, "refused for safety (bad input, size limit, unsafe path, an output file that exists without --force)"},
}

// ExitCode is the process exit code of an error of kind k. A value that
// is not a kind exits 1, like Failed.
func ExitCode(k Kind) int {
	for _, r := range table {
		if r.kind == k {
			return r.code
		}
	}
	return 1
}

// Kinds lists every kind in exit-code order.
func Kinds() []Kind {
	ks := make([]Kind, len(table))
	for i, r := range table {
		ks[i] = r.kind
	}
	return ks
}

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	for _, r := range table {
		if r.kind == k {
			return true
		}
	}
	return false
}

// String is the kind's short name ("refused"), or "Kind(N)".
func (k Kind) String() string {
	for _, r := range table {
		if r.kind == k {
			return r.name
		}
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Describe is what an exit with this kind's code means, in the words of
// the documentation ("not initialised or bad configuration").
func (k Kind) Describe() string {
	for _, r := range table {
		if r.kind == k {
			return r.words
		}
	}
	return ""
}

// Error is an error with a kind. Err is the error itself (its text is the
// message); Error adds nothing to the text.
type Error struct {
	Kind Kind
	Err  error
}

// Error is the wrapped error's text (the kind's name when there is none).
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.String()
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// New is fmt.Errorf (with %w) of kind k.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Wrap gives err the kind k, overriding any kind inside it. Wrap(k, nil)
// is nil.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// Default is err unchanged when it has a kind, else err with the kind k
// (nil stays nil). It is for a caller that returns a foreign error (see
// the rule above) from a call whose every failure that has no kind of its
// own is of one kind: "whatever the format rejects in this file is a
// verification failure".
func Default(k Kind, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := KindOf(err); ok {
		return err
	}
	return &Error{Kind: k, Err: err}
}

// Sentinel declares a package's sentinel error of kind k with the text
// msg. Each call makes a distinct error for errors.Is; KindOf finds its
// kind through any wrapping.
func Sentinel(k Kind, msg string) error {
	return &Error{Kind: k, Err: errors.New(msg)}
}

// KindOf is the kind of err: that of the first *Error with a kind met
// walking err's chain (outermost first; a joined error's branches in
// order). ok is false for nil and for an error without a kind.
func KindOf(err error) (k Kind, ok bool) {
	for err != nil {
		if e, isFault := err.(*Error); isFault && e.Kind.Valid() {
			return e.Kind, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, b := range u.Unwrap() {
				if k, ok := KindOf(b); ok {
					return k, true
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return 0, false
}
