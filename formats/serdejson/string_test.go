package serdejson

import (
	"encoding/json"
	"testing"
)

func TestQuoteString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x07\x0b\x0e\x1b\x1f", `"\u0000\u0001\u0007\u000b\u000e\u001b\u001f"`},
		{"\x20", `" "`},
		{"/", `"/"`},
		{"\x7f", "\"\x7f\""},
		{"<script>&amp;</script>", `"<script>&amp;</script>"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é ü 日本 🚀", `"é ü 日本 🚀"`},
		{"\uFFFD", "\"\uFFFD\""},
		// Invalid UTF-8 (impossible in a Rust String): one U+FFFD per bad byte.
		{"a\xffb", "\"a\uFFFDb\""},
		{"\xe2\x80", "\"\uFFFD\uFFFD\""},
		{"\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""}, // encoded surrogate
	} {
		if got := QuoteString(c.in); got != c.want {
			t.Errorf("QuoteString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestQuoteStringDecodesBack(t *testing.T) {
	for _, s := range []string{"\x00x\x1f", "tab\there", "\"quoted\"", "back\\slash", "<>&", "\u2028", "🚀\x7f"} {
		var back string
		if err := json.Unmarshal([]byte(QuoteString(s)), &back); err != nil || back != s {
			t.Errorf("%q: back %q, %v", s, back, err)
		}
		v, err := Parse([]byte(QuoteString(s)))
		if got, _ := v.Text(); err != nil || got != s {
			t.Errorf("%q: Parse back %q, %v", s, got, err)
		}
	}
}

// TestAppendRawString: QuoteString's escapes, but bytes that are not valid
// UTF-8 are copied as they are.
func TestAppendRawString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\"b\\c\b\t\n\f\r\x00\x1f\x7f", `"a\"b\\c\b\t\n\f\r\u0000\u001f` + "\x7f\""},
		{"é 🚀 \u2028", "\"é 🚀 \u2028\""},
		{"a\xffb\xe2\x80", "\"a\xffb\xe2\x80\""},
	} {
		if got := string(AppendRawString(nil, c.in)); got != c.want {
			t.Errorf("AppendRawString(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
