package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// TestMain runs every in-process test in the strict error mode: an error
// that reaches run without a kind exits fault.ExitUnkinded (70) and says
// "error without a kind", so no test passes over one.
func TestMain(m *testing.M) {
	os.Setenv(strictErrorsEnv, "1")
	os.Exit(m.Run())
}

// TestReport: the exit code and the line of each way an error reaches run:
// a kinded error, an already-printed one, a foreign one from the explicit
// list, urfave/cli's required-flag error, and one without a kind (strict:
// 70 and "error without a kind"; otherwise 1 and its message, as before).
func TestReport(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		strict string
		code   int
		line   string
	}{
		{"kinded", fault.New(fault.Conflict, "branch moved"), "1", 6, "git-ctx: branch moved\n"},
		{"wrapped sentinel", fmt.Errorf("push: %w", gitstore.ErrNotInitialized), "1", 3, "git-ctx: push: " + gitstore.ErrNotInitialized.Error() + "\n"},
		{"silent", silent(fault.Refused), "1", 7, ""},
		{"cancelled", fmt.Errorf("fetch: %w", context.Canceled), "1", 1, "git-ctx: fetch: context canceled\n"},
		{"format size limit", fmt.Errorf("read: %w", checkpoint.ErrTooLarge), "1", 7, "git-ctx: read: checkpoint too large\n"},
		{"required flag", errors.New(`Required flag "to" not set`), "1", 2, "git-ctx: Required flag \"to\" not set\n"},
		{"git failed", &gitexec.Error{Args: []string{"show", "x"}, ExitCode: 128, Stderr: "fatal: bad revision"}, "1", 1, "git-ctx: git show failed: fatal: bad revision\n"},
		{"unkinded, strict", errors.New("disk on fire"), "1", fault.ExitUnkinded, "git-ctx: error without a kind: disk on fire\n"},
		{"unkinded", errors.New("disk on fire"), "", 1, "git-ctx: disk on fire\n"},
		{"joined, one kinded", errors.Join(errors.New("a"), fault.New(fault.Remote, "b")), "1", 4, "git-ctx: a b\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(strictErrorsEnv, c.strict)
			var stderr bytes.Buffer
			if code := report(c.err, &stderr); code != c.code || stderr.String() != c.line {
				t.Errorf("report = %d, %q; want %d, %q", code, stderr.String(), c.code, c.line)
			}
		})
	}
}
