package recall

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Budgets of a tool's result, in bytes of text.
const (
	DefaultMaxBytes = 16 << 10
	MinMaxBytes     = 256
	MaxMaxBytes     = 1 << 20
)

// noteRoom is kept free in every budget for the line that says a result
// was cut.
const noteRoom = 160

// textBudget builds a result of at most max bytes from blocks (one record
// each): a block that does not fit is left out with every one after it,
// and the result ends by saying how many were left out.
type textBudget struct {
	b       strings.Builder
	max     int
	omitted int
	cut     bool
}

func newBudget(max int) *textBudget { return &textBudget{max: max} }

// add appends block unless it would not fit; it reports whether it did.
func (t *textBudget) add(block string) bool {
	if t.omitted > 0 || t.b.Len()+len(block) > t.max-noteRoom {
		t.omitted++
		return false
	}
	t.b.WriteString(block)
	return true
}

// addCut appends as much of block as fits (whole UTF-8 characters),
// marking the result as cut when not all of it did.
func (t *textBudget) addCut(block string) {
	if t.cut || t.omitted > 0 {
		t.omitted++
		return
	}
	room := t.max - noteRoom - t.b.Len()
	if len(block) <= room {
		t.b.WriteString(block)
		return
	}
	if room < 0 {
		room = 0
	}
	part := block[:room]
	for len(part) > 0 && !utf8.ValidString(part) {
		part = part[:len(part)-1]
	}
	t.b.WriteString(part)
	t.cut = true
}

// String is the result with its truncation note, if any.
func (t *textBudget) String() string {
	s := t.b.String()
	switch {
	case t.omitted > 0 && t.cut:
		s += fmt.Sprintf("\n[truncated at max_bytes=%d, and %d more part(s) not shown; raise max_bytes]\n", t.max, t.omitted)
	case t.omitted > 0:
		s += fmt.Sprintf("\n[truncated: %d more result(s) not shown within max_bytes=%d; raise max_bytes or narrow the query]\n", t.omitted, t.max)
	case t.cut:
		s += fmt.Sprintf("\n[truncated at max_bytes=%d; raise max_bytes to see the rest]\n", t.max)
	}
	return s
}

// firstLine is s up to its first newline, cut to n bytes ("…" marking it).
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return cutText(strings.TrimSpace(s), n)
}

// cutText cuts s to n bytes of whole characters, "…" marking a cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
