package workspace

import "errors"

// ErrInput marks input refused for safety (too large, not encodable).
var ErrInput = errors.New("input refused")

// ErrNotFound means no record matched.
var ErrNotFound = errors.New("not found")

// ErrLayoutMismatch means --layout asked for a layout the existing branch does not use.
var ErrLayoutMismatch = errors.New("layout mismatch")

// ErrOutputExists means a file to write already exists and replacing it was
// not asked for.
var ErrOutputExists = errors.New("output file exists")

// ErrAmbiguous means a prefix matched several records.
var ErrAmbiguous = errors.New("ambiguous")

// taggedErr keeps err's text and adds kind for errors.Is (exit codes).
type taggedErr struct{ err, kind error }

func (e taggedErr) Error() string   { return e.err.Error() }
func (e taggedErr) Unwrap() []error { return []error{e.err, e.kind} }

// Tagged returns an error with err's text that is also kind for errors.Is
// (and still err).
func Tagged(err, kind error) error { return taggedErr{err, kind} }
