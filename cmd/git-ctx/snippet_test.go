package main

import "testing"

// TestSnippetLine: a search snippet becomes one safe line; only the
// highlight markers become bold, a record's own escapes stay visible.
func TestSnippetLine(t *testing.T) {
	for _, tc := range []struct {
		in    string
		color bool
		want  string
	}{
		{"plain [word] text", false, "plain [word] text"},
		{"a\nb\rc\x1b[2J", false, `a b\rc\x1b[2J`},
		{"x " + markOpen + "word" + markClose + " y", true, "x \x1b[1mword\x1b[0m y"},
		{markOpen + "w\x1b]0;t\x07" + markClose + "\u202e", true, "\x1b[1mw\\x1b]0;t\\x07\x1b[0m\\u202e"},
		{"\x1b[1mfake\x1b[0m", true, `\x1b[1mfake\x1b[0m`},
	} {
		if got := snippetLine(tc.in, tc.color); got != tc.want {
			t.Errorf("snippetLine(%q, %v) = %q, want %q", tc.in, tc.color, got, tc.want)
		}
	}
}
