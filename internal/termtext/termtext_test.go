package termtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text, ünïcödé ✓ 日本", "plain text, ünïcödé ✓ 日本"},
		{`back\slash`, `back\slash`},
		{"a\rb", `a\rb`},
		{"a\nb", `a\nb`},
		{"a\tb", `a\tb`},
		{"\x00\x01\x1f", `\x00\x01\x1f`},
		{"\x1b[2J", `\x1b[2J`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"del\x7f", `del\x7f`},
		{"c1 \u0080 \u009b \u009f", `c1 \u0080 \u009b \u009f`},
		{"\u00a0nbsp stays", "\u00a0nbsp stays"},
		{"rlo \u202e evil", `rlo \u202e evil`},
		{"\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`},
		{"\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"\u2028\u2029", `\u2028\u2029`},
		{"\u2065\u206a\u2029x", "\u2065\u206a" + `\u2029` + "x"},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"cut \xe2\x80", `cut \xe2\x80`},
		{"\xc2\x9b", `\u009b`}, // C1 CSI as UTF-8
		{"\x9b", `\x9b`},       // C1 CSI as a raw byte
		{"ok\r\n\x1b[1A2026-01-01 forged", `ok\r\n\x1b[1A2026-01-01 forged`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlock(t *testing.T) {
	for _, tc := range []struct{ in, indent, want string }{
		{"", "    ", "    "},
		{"one", "    ", "    one"},
		{"one\ntwo\tcol", "  ", "  one\n  two\tcol"},
		{"a\r\nb", "> ", "> a\\r\n> b"},
		{"x\n\x1b[1Acheckpoint abc", "    ", "    x\n    \\x1b[1Acheckpoint abc"},
		{"\u202e\n", "", "\\u202e\n"},
	} {
		if got := Block(tc.in, tc.indent); got != tc.want {
			t.Errorf("Block(%q, %q) = %q, want %q", tc.in, tc.indent, got, tc.want)
		}
	}
}

func TestUnsafe(t *testing.T) {
	for r := rune(0); r <= 0x10ffff; r++ {
		want := r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f ||
			r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		if Unsafe(r) != want {
			t.Fatalf("Unsafe(%U) = %v", r, !want)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	values := []string{"plain", "\u202e\u2066x\u2069", "c1 \u0085\u009b", "del \x7f", "ls \u2028 ps \u2029", "esc \x1b cr \r"}
	for _, v := range values {
		raw, err := json.Marshal(map[string]string{"k": v})
		if err != nil {
			t.Fatal(err)
		}
		got := EscapeJSON(raw)
		for _, r := range string(got) {
			if Unsafe(r) {
				t.Errorf("EscapeJSON(%s) = %s: raw %U left", raw, got, r)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("EscapeJSON(%s) = %s: not JSON: %v", raw, got, err)
		}
		if back["k"] != v {
			t.Errorf("EscapeJSON changed the value %q into %q", v, back["k"])
		}
	}
	in := []byte("{\n  \"a\": \"b\"\n}\n")
	if got := EscapeJSON(in); string(got) != string(in) {
		t.Errorf("EscapeJSON changed plain JSON: %q", got)
	}
}

// FuzzLine: no panic; the output holds no unsafe rune and no invalid
// UTF-8 (Block: no unsafe rune but newline and tab, and every line starts
// with the indent); text with nothing to escape comes back unchanged;
// EscapeJSON leaves no unsafe rune in JSON and keeps its value.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", "a\rb\nc\td", "\x1b[2J\x1b]0;t\x07", "\u202e\u2066\u009b", "\xff\xc2", "\xe2\x80\xae"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := Line(s)
		if !utf8.ValidString(line) {
			t.Fatalf("Line(%q) = %q: invalid UTF-8", s, line)
		}
		for _, r := range line {
			if Unsafe(r) {
				t.Fatalf("Line(%q) = %q: holds %U", s, line, r)
			}
		}
		plain := utf8.ValidString(s) && strings.IndexFunc(s, Unsafe) < 0
		if plain != (line == s) {
			t.Fatalf("Line(%q) = %q (plain text: %v)", s, line, plain)
		}
		block := Block(s, "  ")
		if !utf8.ValidString(block) {
			t.Fatalf("Block(%q) = %q: invalid UTF-8", s, block)
		}
		for _, l := range strings.Split(block, "\n") {
			if !strings.HasPrefix(l, "  ") {
				t.Fatalf("Block(%q): line %q lacks the indent", s, l)
			}
			for _, r := range l {
				if Unsafe(r) && r != '\t' {
					t.Fatalf("Block(%q) = %q: holds %U", s, block, r)
				}
			}
		}
		if strings.Count(block, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Block(%q) = %q: the number of lines changed", s, block)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		esc := EscapeJSON(raw)
		if i := strings.IndexFunc(string(esc), Unsafe); i >= 0 {
			t.Fatalf("EscapeJSON(%s) = %s: unsafe rune at %d", raw, esc, i)
		}
		var want, got string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(esc, &got); err != nil || got != want {
			t.Fatalf("EscapeJSON(%s) = %s decodes to %q (%v), want %q", raw, esc, got, err, want)
		}
	})
}
