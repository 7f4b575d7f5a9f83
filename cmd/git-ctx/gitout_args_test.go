package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestGitoutArgs: the global paging flags stay in front of the command,
// the command's flags are permuted as before, and a bare --color (not
// after "--") becomes --color=always.
func TestGitoutArgs(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	for in, want := range map[string]string{
		"git-ctx --no-pager log --oneline":        "git-ctx --no-pager log --oneline",
		"git-ctx -P -p show abc --json":           "git-ctx -P -p show --json -- abc",
		"git-ctx log --color -n 2":                "git-ctx log --color=always -n 2",
		"git-ctx search word --color":             "git-ctx search --color=always -- word",
		"git-ctx search -- --color":               "git-ctx search -- --color",
		"git-ctx --paginate review --color=never": "git-ctx --paginate review --color=never",
		"git-ctx -p": "git-ctx -p",
	} {
		if got := strings.Join(gitoutArgs(app, strings.Fields(in)), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if got := gitoutArgs(app, []string{"git-ctx"}); !slices.Equal(got, []string{"git-ctx"}) {
		t.Errorf("no arguments: %q", got)
	}
}
