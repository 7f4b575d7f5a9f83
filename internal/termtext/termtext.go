// Package termtext makes text that git-ctx did not write itself (record
// summaries, file names, device and session ids, commit subjects, rejection
// details, paths) safe to print on a terminal.
//
// A terminal acts on some characters instead of showing them: a carriage
// return moves the cursor back over what was printed, ESC and the C1
// controls start sequences that move the cursor, clear the screen or set
// the window title, and the bidirectional overrides and isolates reorder
// what follows. Printed raw, a record could repaint or reorder the lines
// around it and pass itself off as another record. Line and Block replace
// every such character with a visible escape (\r, \x1b, \u202e); plain
// text comes back unchanged. They change only what is displayed: stored
// bytes and --json values stay exact (EscapeJSON keeps JSON exact too).
//
// Backslashes are not escaped, so the escape of a control character and
// the same characters typed literally look alike; neither moves the
// cursor, which is what matters for spoofing.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether a terminal could act on r instead of showing it:
// the C0 controls (tab and newline included), DEL, the C1 controls
// (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and
// the bidirectional marks, embeddings, overrides and isolates (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Line returns s for one line of terminal output: every unsafe rune
// (see Unsafe, newline and tab included) and every byte that is not valid
// UTF-8 is replaced by a visible escape. Text with none of these is
// returned unchanged.
func Line(s string) string {
	return escape(s, false)
}

// Block returns s for an indented block of lines, such as a summary's
// body: newlines and tabs are kept, every line (the first too) starts with
// indent, and everything else Line escapes is escaped. With a non-empty
// indent, no line of the block can look like an unindented line around it.
func Block(s, indent string) string {
	return indent + strings.ReplaceAll(escape(s, true), "\n", "\n"+indent)
}

const hexDigits = "0123456789abcdef"

// escape replaces unsafe runes and invalid bytes; block keeps '\n' and '\t'.
func escape(s string, block bool) string {
	i := firstUnsafe(s, block)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeByte(&b, s[i])
		case block && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && Unsafe(r):
			writeByte(&b, byte(r))
		case Unsafe(r):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte escape would change, or -1.
func firstUnsafe(s string, block bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		if Unsafe(r) && !(block && (r == '\n' || r == '\t')) {
			return i
		}
		i += size
	}
	return -1
}

func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

func writeRune(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// EscapeJSON rewrites, in JSON text, every unsafe rune above ASCII and DEL
// as a \uXXXX escape. Outside strings JSON text is ASCII, so only string
// contents change, and they decode to exactly the same values: the output
// stays exact for programs and cannot act on a terminal. Invalid UTF-8 is
// left as it is (encoding/json never writes any).
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || r > 0x7f && r != utf8.RuneError && Unsafe(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+16)
			}
			out = append(out, b[last:i]...)
			out = append(out, '\\', 'u')
			for shift := 12; shift >= 0; shift -= 4 {
				out = append(out, hexDigits[(r>>shift)&0xf])
			}
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
