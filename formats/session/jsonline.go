package session

import (
	"bufio"
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
// One scanner walks the original bytes, deciding exactly what json.Valid
// decides (the RFC 8259 grammar with encoding/json's nesting limit of
// 10000; bytes that are not UTF-8 are accepted inside strings) and noting
// the byte ranges of the member strings. A line that is not JSON, or is
// whitespace only, is returned unchanged (rc.8 keeps such lines) and fn is
// never called for it; otherwise fn is called in document order and the
// output is the input with the rewritten ranges spliced. Numbers, key
// order, duplicate keys, whitespace, CR before LF, escape styles, HTML
// characters and invalid UTF-8 elsewhere stay exactly as they were. A value
// whose bytes cannot be decoded losslessly (invalid UTF-8 or a lone
// surrogate escape) is never offered to fn.
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
	return NewLineRewriter(fn).Line(line)
}

// LineRewriter is RewriteLine for a stream of records: it keeps its scanner
// and output buffers from one record to the next, so a transcript is
// rewritten without an allocation per record. The slice Line returns is
// valid until the next call. A LineRewriter is not safe for concurrent use.
type LineRewriter struct {
	// keys, when non-nil, is the only member keys fn is offered (a
	// pre-filter; fn still sees the decoded key).
	keys    map[string]bool
	keyList []string // keys' members, to name an unescaped key without a copy
	fn      func(key, value string) (string, bool)
	s       lineScanner
	out     []byte
}

// NewLineRewriter returns a LineRewriter calling fn as RewriteLine does.
func NewLineRewriter(fn func(key, value string) (string, bool)) *LineRewriter {
	return &LineRewriter{fn: fn}
}

// Line rewrites one record as RewriteLine does. When nothing changes the
// result is line itself; otherwise it is the rewriter's buffer, overwritten
// by the next call.
func (r *LineRewriter) Line(line []byte) ([]byte, error) {
	if len(line) > MaxRecordSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrRecordTooLarge, len(line))
	}
	s := &r.s
	s.b, s.i, s.keys, s.members = line, 0, r.keys, s.members[:0]
	valid := s.scan()
	s.b = nil
	if !valid || len(s.members) == 0 || r.fn == nil {
		return line, nil
	}
	out, last := r.out[:0], 0
	for _, m := range s.members {
		key, ok := r.key(line[m.keyStart:m.keyEnd], m.keyEsc)
		if !ok || (r.keys != nil && !r.keys[key]) {
			continue
		}
		val, ok := decodeString(line[m.valStart+1:m.valEnd-1], m.valEsc)
		if !ok {
			continue
		}
		nv, changed := r.fn(key, val)
		if !changed || nv == val {
			continue
		}
		out = append(out, line[last:m.valStart]...)
		out = serdejson.AppendRawString(out, nv)
		last = m.valEnd
	}
	if last == 0 {
		r.out = out
		return line, nil
	}
	out = append(out, line[last:]...)
	r.out = out
	return out, nil
}

// key decodes a member's key; an unescaped one that is among keyList is
// returned as that string, without a copy.
func (r *LineRewriter) key(raw []byte, escaped bool) (string, bool) {
	if !escaped {
		for _, k := range r.keyList {
			if string(raw) == k {
				return k, true
			}
		}
	}
	return decodeString(raw, escaped)
}

// maxJSONDepth is encoding/json's nesting limit: json.Valid refuses a
// document with more nested arrays and objects than this.
const maxJSONDepth = 10000

// member is an object member whose value is a string: the byte ranges of
// its key (inside the quotes) and of its value (quotes included), and
// whether each holds a backslash escape.
type member struct {
	keyStart, keyEnd int
	valStart, valEnd int
	keyEsc, valEsc   bool
}

// lineScanner validates one JSON text in a single pass, exactly as
// json.Valid does, and notes the members whose value is a string (those
// whose unescaped key is in keys, when keys is non-nil; escaped keys are
// always noted and filtered after decoding). It checks every bound, so it
// cannot panic on any input.
type lineScanner struct {
	b       []byte
	i       int
	keys    map[string]bool
	members []member
}

// scan reports whether s.b is one JSON value with optional surrounding
// whitespace.
func (s *lineScanner) scan() bool {
	s.ws()
	if !s.value(0) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *lineScanner) ws() {
	b, i := s.b, s.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

// value scans the value at s.i, depth being the number of containers
// around it.
func (s *lineScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{':
		return s.object(depth + 1)
	case '[':
		return s.array(depth + 1)
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func (s *lineScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number scans '-'? ('0' | [1-9][0-9]*) ('.' [0-9]+)? ([eE] [+-]? [0-9]+)?;
// what may follow it is the caller's to check, as for every value.
func (s *lineScanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) || !isDigit(b[i]) {
		return false
	}
	if b[i] == '0' {
		i++
	} else {
		i = digitsEnd(b, i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digitsEnd(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digitsEnd(b, i)
	}
	s.i = i
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func (s *lineScanner) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	if s.opened('}') {
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		keyStart := s.i + 1
		keyEsc, ok := s.str()
		if !ok {
			return false
		}
		keyEnd := s.i - 1
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '"' {
			valStart := s.i
			valEsc, ok := s.str()
			if !ok {
				return false
			}
			if keyEsc || s.keys == nil || s.keys[string(s.b[keyStart:keyEnd])] {
				s.members = append(s.members, member{keyStart, keyEnd, valStart, s.i, keyEsc, valEsc})
			}
		} else if !s.value(depth) {
			return false
		}
		if more, ok := s.afterElement('}'); !more {
			return ok
		}
		s.ws()
	}
}

// opened steps over the opening bracket at s.i of a container closed by
// closer and the whitespace after it, and reports whether the container is
// empty (closer follows, and is stepped over too).
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

func (s *lineScanner) array(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	if s.opened(']') {
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if more, ok := s.afterElement(']'); !more {
			return ok
		}
		s.ws()
	}
}

// strPlain marks the bytes a JSON string holds as they are: everything but
// control characters, '"' and '\\'.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans the string whose opening quote is at s.i, leaving s.i after
// its closing quote, and reports whether it holds an escape.
func (s *lineScanner) str() (escaped, ok bool) {
	b, i := s.b, s.i+1
	for {
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			return false, false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(b) {
				return false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return false, false
				}
				i += 6
			default:
				return false, false
			}
		default: // a control character
			return false, false
		}
	}
}

// hex4 decodes the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
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
	return r, true
}

// decodeString decodes the contents of a JSON string that str accepted
// (escaped: it holds a backslash) and reports whether the decoding is
// lossless: valid UTF-8 and no lone surrogate escape.
func decodeString(raw []byte, escaped bool) (string, bool) {
	if !escaped {
		return string(raw), utf8.Valid(raw)
	}
	var sb strings.Builder
	sb.Grow(len(raw))
	lossless := true
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				lossless = false
			}
			sb.Write(raw[i : i+size])
			i += size
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		esc := raw[i+1]
		i += 2
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
			r, ok := hex4(raw, i)
			if !ok {
				return "", false
			}
			i += 4
			if !utf16.IsSurrogate(r) {
				sb.WriteRune(r)
				continue
			}
			if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				r2, ok := hex4(raw, i+2)
				if !ok {
					return "", false
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					sb.WriteRune(d)
					i += 6
					continue
				}
			}
			lossless = false
			sb.WriteRune(utf8.RuneError)
		default:
			return "", false
		}
	}
	return sb.String(), lossless
}

// TransformRecords copies src to dst record by record (a record is
// everything up to and including "\n"; the last may lack it), passing each
// through fn. A record over MaxRecordSize is refused (ErrRecordTooLarge)
// as soon as that many bytes have been read without a newline, so memory
// stays bounded by one record. The record fn gets is only valid until fn's
// result has been written (it is usually a view of the read buffer): fn
// must not keep it.
func TransformRecords(dst io.Writer, src io.Reader, fn func(record []byte) ([]byte, error)) error {
	br := bufio.NewReaderSize(src, recordBuffer)
	var long []byte
	for {
		rec, err := readRecord(br, &long)
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

// recordBuffer is TransformRecords' read buffer: a record up to this size
// is handed to fn in place, without a copy.
const recordBuffer = 64 << 10

// readRecord returns the next record; at the end of the stream it returns
// the final unterminated record (if any) with io.EOF. A record that fits in
// br's buffer is returned as a view of it; a longer one is assembled in
// *long, which is reused.
func readRecord(br *bufio.Reader, long *[]byte) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return chunk, err
	}
	rec := append((*long)[:0], chunk...)
	defer func() { *long = rec[:0] }()
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
