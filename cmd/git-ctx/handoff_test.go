package main

import (
	"os"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// TestHandoffVersionSkew: git-ctx-full started by a lean git-ctx of another
// build (a stale companion on PATH) refuses in one line with exit 3 instead
// of writing the cache or the branch in its own form; the same build, or a
// start without a hand-off, runs. Either way the variable is gone from the
// environment its children (git hooks) inherit.
func TestHandoffVersionSkew(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		set, fail bool
	}{
		{"not handed off", "", false, false},
		{"same build", version, true, false},
		{"another build", "v0.0.1-stale", true, true},
		{"hostile text", "v9\x1b[2J\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(handoffEnv, "")
			if tc.set {
				os.Setenv(handoffEnv, tc.env)
			} else {
				os.Unsetenv(handoffEnv)
			}
			err := checkHandoff()
			if _, still := os.LookupEnv(handoffEnv); still {
				t.Errorf("%s is still set", handoffEnv)
			}
			if !tc.fail {
				if err != nil {
					t.Fatalf("checkHandoff: %v", err)
				}
				return
			}
			if k, ok := fault.KindOf(err); err == nil || !ok || k != fault.Config || fault.ExitCode(k) != 3 {
				t.Fatalf("checkHandoff = %v, want a Config error (exit 3)", err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b") || !strings.Contains(msg, "reinstall both") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}
