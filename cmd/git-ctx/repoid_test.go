package main

import (
	"strings"
	"testing"
)

// TestShortRepoIDNoPanic: a repo id shorter than 12 characters (git config
// ctx.repoId ab is one path segment, so it is accepted) is printed whole
// by status and doctor instead of panicking on a slice.
func TestShortRepoIDNoPanic(t *testing.T) {
	_, repo, env := newRepoAs(t, "dev")
	inproc.MustRun(t, repo, env, "git", "config", "ctx.repoId", "ab")
	for _, args := range [][]string{{"init"}, {"status"}, {"doctor"}} {
		r := inproc.Ctx(t, repo, env, args...)
		if args[0] != "doctor" && r.Code != 0 {
			t.Fatalf("%v: %s", args, r)
		}
		if args[0] != "init" && !strings.Contains(r.Stdout, "ab (") {
			t.Errorf("%v does not show the repo id:\n%s", args, r.Stdout)
		}
	}
}
