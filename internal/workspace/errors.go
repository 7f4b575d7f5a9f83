package workspace

import "github.com/git-ctx/git-ctx/internal/fault"

// ErrInput marks input refused for safety (too large, not encodable).
var ErrInput = fault.Sentinel(fault.Refused, "input refused")

// ErrNotFound means no record matched.
var ErrNotFound = fault.Sentinel(fault.Failed, "not found")

// ErrLayoutMismatch means --layout asked for a layout the existing branch does not use.
var ErrLayoutMismatch = fault.Sentinel(fault.Usage, "layout mismatch")

// ErrOutputExists means a file to write already exists and replacing it was
// not asked for.
var ErrOutputExists = fault.Sentinel(fault.Refused, "output file exists")

// ErrAmbiguous means a prefix matched several records.
var ErrAmbiguous = fault.Sentinel(fault.Usage, "ambiguous")

// taggedErr keeps err's text and adds kind for errors.Is (exit codes).
type taggedErr struct{ err, kind error }

func (e taggedErr) Error() string   { return e.err.Error() }
func (e taggedErr) Unwrap() []error { return []error{e.kind, e.err} } // the tag's kind first

// Tagged returns an error with err's text that is also kind for errors.Is
// (and still err).
func Tagged(err, kind error) error { return taggedErr{err, kind} }
