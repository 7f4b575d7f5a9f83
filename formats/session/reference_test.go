package session

// The reference rewrite: RewriteLine as it was before the one-pass scanner
// (json.Valid, then a second scan recording the edits), kept verbatim so
// that the differential tests and FuzzRewriteLineReference can compare the
// two on every input.

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// refRewriteLine is the pre-one-pass RewriteLine.
func refRewriteLine(line []byte, fn func(key, value string) (string, bool)) ([]byte, error) {
	if len(line) > MaxRecordSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrRecordTooLarge, len(line))
	}
	if !json.Valid(line) {
		return line, nil
	}
	s := refLineScanner{b: line, fn: fn}
	if !s.value() {
		return line, nil // unreachable for valid JSON; be safe
	}
	if len(s.edits) == 0 {
		return line, nil
	}
	grow := 0
	for _, e := range s.edits {
		grow += len(e.repl) - (e.end - e.start)
	}
	out := make([]byte, 0, len(line)+max(grow, 0))
	last := 0
	for _, e := range s.edits {
		out = append(out, line[last:e.start]...)
		out = append(out, e.repl...)
		last = e.end
	}
	return append(out, line[last:]...), nil
}

type refEdit struct {
	start, end int
	repl       []byte
}

// refLineScanner walks JSON that json.Valid accepted. It still checks bounds,
// so it cannot panic on other input; it reports false on anything it does
// not understand.
type refLineScanner struct {
	b     []byte
	i     int
	fn    func(key, value string) (string, bool)
	edits []refEdit
}

func (s *refLineScanner) ws() { s.i = serdejson.SpaceEnd(s.b, s.i) }

func (s *refLineScanner) value() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, _, ok := s.str()
		return ok
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}

func (s *refLineScanner) object() bool {
	if s.opened('}') {
		return true
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key, keyOK, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '"' {
			start := s.i
			val, valOK, ok := s.str()
			if !ok {
				return false
			}
			if keyOK && valOK && s.fn != nil {
				if nv, changed := s.fn(key, val); changed && nv != val {
					s.edits = append(s.edits, refEdit{start, s.i, serdejson.AppendRawString(nil, nv)})
				}
			}
		} else if !s.value() {
			return false
		}
		if more, ok := s.afterElement('}'); !more {
			return ok
		}
	}
}

// opened steps over the opening bracket at s.i of a container closed by
// closer and reports whether the container is empty (closer follows, and
// is stepped over too).
func (s *refLineScanner) opened(closer byte) (empty bool) {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return true
	}
	return false
}

// afterElement reads what follows an element of a container closed by
// closer: ',' (more is true) or closer (the container ends, ok is true);
// anything else, or the end of the line, is malformed (both false).
func (s *refLineScanner) afterElement(closer byte) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case closer:
		s.i++
		return false, true
	}
	return false, false
}

func (s *refLineScanner) array() bool {
	if s.opened(']') {
		return true
	}
	for {
		if !s.value() {
			return false
		}
		if more, ok := s.afterElement(']'); !more {
			return ok
		}
	}
}

// str scans the string at s.i (an opening quote) and returns its decoded
// value and whether that decoding is lossless (valid UTF-8, no lone
// surrogate escapes).
func (s *refLineScanner) str() (string, bool, bool) {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			return string(raw), utf8.Valid(raw), true
		case c == '\\':
			return s.strEscaped(start)
		case c < 0x20:
			return "", false, false
		default:
			s.i++
		}
	}
	return "", false, false
}

func (s *refLineScanner) strEscaped(start int) (string, bool, bool) {
	var sb strings.Builder
	sb.Write(s.b[start:s.i])
	lossless := utf8.Valid(s.b[start:s.i])
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return sb.String(), lossless, true
		case c < 0x20:
			return "", false, false
		case c != '\\':
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				lossless = false
			}
			sb.Write(s.b[s.i : s.i+size])
			s.i += size
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", false, false
		}
		esc := s.b[s.i+1]
		s.i += 2
		switch esc {
		case '"', '\\', '/':
			sb.WriteByte(esc)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", false, false
			}
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					if r2, ok = s.hex4(); !ok {
						return "", false, false
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						sb.WriteRune(d)
						continue
					}
					s.i = save
				}
				lossless = false
				sb.WriteRune(utf8.RuneError)
				continue
			}
			sb.WriteRune(r)
		default:
			return "", false, false
		}
	}
	return "", false, false
}

func (s *refLineScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}
