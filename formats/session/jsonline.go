package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// RewriteLine calls fn for every string value that is directly the value of
// an object member, at any depth (objects inside arrays included; strings
// that are array elements or keys are not offered), with the member's
// decoded key and value. Where fn returns (v, true) with v different from
// the value, that string's bytes — from its opening to its closing quote —
// are replaced by v's JSON encoding. Every other byte of line is copied
// unchanged.
//
// Byte-exactness: the line is not decoded into Go values and re-marshalled.
// json.Valid decides whether the line is JSON at all (if not, or if it is
// whitespace only, it is returned unchanged, as rc.8 keeps such lines); a
// scanner then walks the original bytes, recording only the byte ranges of
// the strings fn rewrites, and the output is the input with those ranges
// spliced. Numbers, key order, duplicate keys, whitespace, CR before LF,
// escape styles, HTML characters and invalid UTF-8 elsewhere stay exactly as
// they were. A value whose bytes cannot be decoded losslessly (invalid UTF-8
// or a lone surrogate escape) is never offered to fn.
//
// Replacement strings are encoded minimally, as JSON.stringify and
// serde_json do: '"' and '\' escaped, \b \f \n \r \t short forms, other
// control characters as \u00xx, everything else (including '/', '<', '>',
// '&', U+2028, U+2029) raw.
//
// line may include its terminating "\n". When nothing changes, the returned
// slice is line itself. Lines over MaxRecordSize are refused
// (ErrRecordTooLarge).
func RewriteLine(line []byte, fn func(key, value string) (string, bool)) ([]byte, error) {
	if len(line) > MaxRecordSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrRecordTooLarge, len(line))
	}
	if !json.Valid(line) {
		return line, nil
	}
	s := lineScanner{b: line, fn: fn}
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

type edit struct {
	start, end int
	repl       []byte
}

// lineScanner walks JSON that json.Valid accepted. It still checks bounds,
// so it cannot panic on other input; it reports false on anything it does
// not understand.
type lineScanner struct {
	b     []byte
	i     int
	fn    func(key, value string) (string, bool)
	edits []edit
}

func (s *lineScanner) ws() { s.i = serdejson.SpaceEnd(s.b, s.i) }

func (s *lineScanner) value() bool {
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

func (s *lineScanner) object() bool {
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
					s.edits = append(s.edits, edit{start, s.i, serdejson.AppendRawString(nil, nv)})
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
func (s *lineScanner) opened(closer byte) (empty bool) {
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
func (s *lineScanner) afterElement(closer byte) (more, ok bool) {
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

func (s *lineScanner) array() bool {
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
func (s *lineScanner) str() (string, bool, bool) {
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

func (s *lineScanner) strEscaped(start int) (string, bool, bool) {
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

func (s *lineScanner) hex4() (rune, bool) {
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

// TransformRecords copies src to dst record by record (a record is
// everything up to and including "\n"; the last may lack it), passing each
// through fn. A record over MaxRecordSize is refused (ErrRecordTooLarge)
// as soon as that many bytes have been read without a newline, so memory
// stays bounded by one record. The record's buffer is reused for the next
// one once fn's result has been written: fn must not keep it.
func TransformRecords(dst io.Writer, src io.Reader, fn func(record []byte) ([]byte, error)) error {
	br := bufio.NewReaderSize(src, 64<<10)
	var buf []byte
	for {
		rec, err := readRecord(br, buf[:0])
		buf = rec
		if err != nil && err != io.EOF {
			return err
		}
		if len(rec) > 0 {
			out, ferr := fn(rec)
			if ferr != nil {
				return ferr
			}
			if _, werr := dst.Write(out); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readRecord returns the next record; at the end of the stream it returns
// the final unterminated record (if any) with io.EOF. It appends to rec.
func readRecord(br *bufio.Reader, rec []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(rec)+len(chunk) > MaxRecordSize {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrRecordTooLarge, MaxRecordSize)
		}
		rec = append(rec, chunk...)
		switch {
		case err == nil:
			return rec, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return rec, err
		}
	}
}
