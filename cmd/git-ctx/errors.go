package main

import (
	"context"
	"errors"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// strictErrorsEnv, set to 1, makes an error without a kind exit
// fault.ExitUnkinded ("error without a kind") instead of 1: the tests set
// it, so any path that returns an unkinded error fails them.
const strictErrorsEnv = "GIT_CTX_STRICT_ERRORS"

// errPrinted is the error of a command that already printed why it failed
// (e.g. a verification report): its text is empty, so nothing more is
// printed; silent gives it the kind that decides the exit code.
var errPrinted = errors.New("")

// silent is a failure whose message was already printed, of kind k.
func silent(k fault.Kind) error { return fault.Wrap(k, errPrinted) }

// foreign is the explicit list of errors without a kind that the CLI
// receives directly (internal/fault's rule for foreign errors): context
// cancellation, and the size limits of formats/ that lower packages still
// return unwrapped. Consulted only for an error that has no kind.
var foreign = []struct {
	err  error
	kind fault.Kind
}{
	{context.Canceled, fault.Failed},
	{context.DeadlineExceeded, fault.Failed},
	{checkpoint.ErrTooLarge, fault.Refused},
	{checkpoint.ErrUnencodable, fault.Refused},
	{ctxpkg.ErrTooLarge, fault.Refused},
	{ctxpkg.ErrEnvelopeTooLarge, fault.Refused},
}

// errorKind is the kind of an error that reached run: its own, else that
// of the foreign errors above, else that of urfave/cli's errors that skip
// OnUsageError ("Required flag … not set"). ok is false for an error
// nobody gave a kind (a bug).
func errorKind(err error) (fault.Kind, bool) {
	if k, ok := fault.KindOf(err); ok {
		return k, true
	}
	for _, f := range foreign {
		if errors.Is(err, f.err) {
			return f.kind, true
		}
	}
	if strings.HasPrefix(err.Error(), "Required flag") {
		return fault.Usage, true
	}
	return 0, false
}

// failedIf is err; else, when failed, the failure of a command whose
// output already says what failed (silent, of kind fault.Failed).
func failedIf(err error, failed bool) error {
	if err == nil && failed {
		return silent(fault.Failed)
	}
	return err
}
