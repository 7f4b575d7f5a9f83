package main

import (
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestGitoutColor: the colour matrix on a non-terminal standard output
// (a buffer): none by default, with --color (bare or =always) and
// color.ui/color.ctx=always the short hash is yellow and the status
// green; NO_COLOR beats the configuration but not --color=always;
// --no-color and color.ctx=never beat color.ui=always; --json is never
// coloured; a bad configured value is a configuration error (exit 3).
func TestGitoutColor(t *testing.T) {
	repo, env, recs := goutFixture(t)
	yellowHash := "\x1b[33m" + recs[0].Hash[:12] + "\x1b[m"
	git := func(args ...string) { testrepo.MustGit(t, repo, env, args...) }
	unset := func(key string) { testrepo.Git(t, repo, env, nil, "config", "--unset", key) }
	noColor := testrepo.WithEnv(env, "NO_COLOR=1")
	cases := []struct {
		name   string
		config []string // key value to set first ("" value: unset)
		env    []string
		args   []string
		color  bool
	}{
		{"default to a buffer", nil, env, []string{"log"}, false},
		{"bare --color", nil, env, []string{"log", "--color"}, true},
		{"--color=always", nil, env, []string{"log", "--color=always"}, true},
		{"--color=auto to a buffer", nil, env, []string{"log", "--color=auto"}, false},
		{"--color=always beats NO_COLOR", nil, noColor, []string{"log", "--color=always"}, true},
		{"color.ui=always", []string{"color.ui", "always"}, env, []string{"log"}, true},
		{"NO_COLOR beats color.ui=always", nil, noColor, []string{"log"}, false},
		{"--no-color beats color.ui=always", nil, env, []string{"log", "--no-color"}, false},
		{"--color=never beats color.ui=always", nil, env, []string{"log", "--color=never"}, false},
		{"--json is never coloured", nil, env, []string{"log", "--json", "--color=always"}, false},
		{"color.ctx=never beats color.ui=always", []string{"color.ctx", "never"}, env, []string{"log"}, false},
		{"color.ctx=always", []string{"color.ui", "", "color.ctx", "always"}, env, []string{"log", "--oneline"}, true},
		{"color.ui=true is auto", []string{"color.ctx", "", "color.ui", "true"}, env, []string{"log"}, false},
		{"search with --color", nil, env, []string{"search", "second", "--color"}, true},
		{"review with --color", nil, env, []string{"review", "--color"}, true},
	}
	for _, c := range cases {
		for i := 0; i+1 < len(c.config); i += 2 {
			if c.config[i+1] == "" {
				unset(c.config[i])
			} else {
				git("config", c.config[i], c.config[i+1])
			}
		}
		out := inproc.MustCtx(t, repo, c.env, c.args...)
		if got := strings.Contains(out, "\x1b["); got != c.color {
			t.Errorf("%s: coloured %v, want %v:\n%q", c.name, got, c.color, out)
			continue
		}
		if c.color && c.args[0] != "review" && !strings.Contains(out, yellowHash) {
			t.Errorf("%s: the short hash is not yellow: %q", c.name, out)
		}
	}
	review := inproc.MustCtx(t, repo, env, "review", "--color=always")
	if !strings.Contains(review, "\x1b[32mverified\x1b[m") || !strings.Contains(review, "\x1b[33m") {
		t.Errorf("review: status not green or hash not yellow:\n%q", review)
	}
	full := inproc.MustCtx(t, repo, env, "log", "-n", "1", "--format=full", "--color=always")
	if !strings.Contains(full, "Status:  \x1b[32mverified\x1b[m") {
		t.Errorf("--format=full: status not green:\n%q", full)
	}
	git("config", "color.ui", "sometimes")
	unset("color.ctx")
	if r := inproc.Ctx(t, repo, env, "log"); r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, "color.ui") {
		t.Errorf("bad color.ui: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
