package serdejson

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the nesting limit of Parse: like serde_json's recursion limit
// of 128, the 128th nested array or object is refused.
const MaxDepth = 127

// ErrSyntax is matched (errors.Is) by every error Parse returns.
var ErrSyntax = errors.New("invalid JSON")

// jsonError carries serde_json-like text and the sentinel it matches.
type jsonError struct {
	kind error
	msg  string
}

func (e *jsonError) Error() string { return e.msg }
func (e *jsonError) Unwrap() error { return e.kind }

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"null", "boolean", "number", "string", "sequence", "map"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Value is one JSON value of a document Parse has validated. It is a view of
// the value's bytes: strings are decoded and containers walked only when
// asked (Text, Elems, Members), so unknown fields cost no allocation. The
// zero Value is null.
type Value struct {
	kind Kind
	raw  []byte
}

// Kind returns the JSON type of v.
func (v Value) Kind() Kind { return v.kind }

// Raw returns the bytes of v exactly as they appear in the input.
func (v Value) Raw() []byte { return v.raw }

// IsFloat reports whether v is a Number spelled with a fraction or an
// exponent, which makes serde_json treat it as a float. (serde_json also
// treats -0 and integers beyond the 64-bit range as floats; see Uint.)
func (v Value) IsFloat() bool {
	return v.kind == KindNumber && bytes.ContainsAny(v.raw, ".eE")
}

// Parse validates data as exactly one JSON value, optionally surrounded by
// whitespace (space, tab, CR, LF), with serde_json's strictness: no trailing
// commas, comments, NaN, leading '+', leading zeros, BOM, raw control
// characters in strings, invalid UTF-8 or lone surrogate escapes, and at
// most MaxDepth nested containers. The returned Value aliases data.
func Parse(data []byte) (Value, error) {
	p := parser{src: data}
	p.skipSpace()
	start := p.pos
	k, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	end := p.pos
	p.skipSpace()
	if p.pos != len(p.src) {
		return Value{}, p.errorf("trailing characters")
	}
	return Value{kind: k, raw: data[start:end]}, nil
}

type parser struct {
	src []byte
	pos int
}

// errorf reports a syntax error at p.pos as serde_json words it: "… at line
// L column C" (1-based; the column counts bytes).
func (p *parser) errorf(format string, args ...any) error {
	pos := min(p.pos, len(p.src))
	line := 1 + bytes.Count(p.src[:pos], []byte{'\n'})
	col := pos - bytes.LastIndexByte(p.src[:pos], '\n')
	return &jsonError{kind: ErrSyntax, msg: fmt.Sprintf(format, args...) + fmt.Sprintf(" at line %d column %d", line, col)}
}

func (p *parser) skipSpace() { p.pos = SpaceEnd(p.src, p.pos) }

// SpaceEnd returns the index of the first byte of b at or after i that is
// not JSON whitespace (space, tab, newline, carriage return), or len(b).
func SpaceEnd(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *parser) peek(c byte) bool { return p.pos < len(p.src) && p.src[p.pos] == c }

// value scans one value starting at p.pos (no leading whitespace).
func (p *parser) value(depth int) (Kind, error) {
	if p.pos >= len(p.src) {
		return 0, p.errorf("EOF while parsing a value")
	}
	switch c := p.src[p.pos]; {
	case c == 'n':
		return KindNull, p.literal("null")
	case c == 't':
		return KindBool, p.literal("true")
	case c == 'f':
		return KindBool, p.literal("false")
	case c == '"':
		return KindString, p.str(nil)
	case c == '-' || isDigit(c):
		return KindNumber, p.number()
	case c == '[':
		return KindArray, p.container(depth+1, ']')
	case c == '{':
		return KindObject, p.container(depth+1, '}')
	default:
		return 0, p.errorf("expected value")
	}
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.src[p.pos:], []byte(word)) {
		return p.errorf("expected ident")
	}
	p.pos += len(word)
	return nil
}

// container scans an array (end ']') or an object (end '}').
func (p *parser) container(depth int, end byte) error {
	if depth > MaxDepth {
		return p.errorf("recursion limit exceeded")
	}
	p.pos++ // '[' or '{'
	p.skipSpace()
	if p.peek(end) {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if end == '}' {
			if p.pos >= len(p.src) {
				return p.errorf("EOF while parsing an object")
			}
			if p.src[p.pos] != '"' {
				return p.errorf("key must be a string")
			}
			if err := p.str(nil); err != nil {
				return err
			}
			p.skipSpace()
			if !p.peek(':') {
				return p.errorf("expected `:`")
			}
			p.pos++
			p.skipSpace()
		}
		if _, err := p.value(depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.src) {
			return p.errorf("EOF while parsing a list or object")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.peek(end) {
				return p.errorf("trailing comma")
			}
		case end:
			p.pos++
			return nil
		default:
			return p.errorf("expected `,` or `%c`", end)
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) digits() {
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
}

func (p *parser) number() error {
	if p.peek('-') {
		p.pos++
	}
	switch {
	case p.peek('0'):
		p.pos++
		if p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			return p.errorf("invalid number")
		}
	case p.pos < len(p.src) && isDigit(p.src[p.pos]):
		p.digits()
	default:
		return p.errorf("invalid number")
	}
	if p.peek('.') {
		p.pos++
		if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
			return p.errorf("invalid number")
		}
		p.digits()
	}
	if p.peek('e') || p.peek('E') {
		p.pos++
		if p.peek('+') || p.peek('-') {
			p.pos++
		}
		if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
			return p.errorf("invalid number")
		}
		p.digits()
	}
	return nil
}

// str scans a string literal starting at its opening quote, validating it;
// when out is non-nil the decoded text is appended to *out.
func (p *parser) str(out *[]byte) error {
	p.pos++ // opening '"'
	for {
		start := p.pos
		if err := p.plainRun(); err != nil {
			return err
		}
		if out != nil {
			*out = append(*out, p.src[start:p.pos]...)
		}
		if p.pos >= len(p.src) {
			return p.errorf("EOF while parsing a string")
		}
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == '"':
			return nil
		case c < 0x20:
			p.pos--
			return p.errorf("control character (\\u0000-\\u001F) found while parsing a string")
		}
		// c == '\\'
		if err := p.escape(out); err != nil {
			return err
		}
	}
}

// plainRun advances over the string's bytes up to the next quote,
// backslash, control character or the end of the input, checking that they
// are valid UTF-8.
func (p *parser) plainRun() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '"' || c == '\\' || c < 0x20 {
			return nil
		}
		if c < utf8.RuneSelf {
			p.pos++
			continue
		}
		r, size := utf8.DecodeRune(p.src[p.pos:])
		if r == utf8.RuneError && size == 1 {
			return p.errorf("invalid unicode code point")
		}
		p.pos += size
	}
	return nil
}

// escape reads the escape sequence after a backslash and appends what it
// stands for to *out when out is non-nil.
func (p *parser) escape(out *[]byte) error {
	if p.pos >= len(p.src) {
		return p.errorf("EOF while parsing a string")
	}
	esc := p.src[p.pos]
	p.pos++
	var b byte
	switch esc {
	case '"', '\\', '/':
		b = esc
	case 'b':
		b = '\b'
	case 'f':
		b = '\f'
	case 'n':
		b = '\n'
	case 'r':
		b = '\r'
	case 't':
		b = '\t'
	case 'u':
		r, err := p.unicodeEscape()
		if err != nil {
			return err
		}
		if out != nil {
			*out = utf8.AppendRune(*out, r)
		}
		return nil
	default:
		return p.errorf("invalid escape")
	}
	if out != nil {
		*out = append(*out, b)
	}
	return nil
}

// unicodeEscape reads the four hex digits after \u, and a following \uXXXX
// low surrogate when they are a high surrogate, and returns the code point.
func (p *parser) unicodeEscape() (rune, error) {
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case r >= 0xd800 && r < 0xdc00:
		if !bytes.HasPrefix(p.src[p.pos:], []byte(`\u`)) {
			return 0, p.errorf("lone leading surrogate in hex escape")
		}
		p.pos += 2
		lo, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return 0, p.errorf("lone leading surrogate in hex escape")
		}
		r = utf16.DecodeRune(r, lo)
	case r >= 0xdc00 && r <= 0xdfff:
		return 0, p.errorf("lone trailing surrogate in hex escape")
	}
	return r, nil
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.src) {
		return 0, p.errorf("EOF while parsing a string")
	}
	var r rune
	for _, c := range p.src[p.pos : p.pos+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.errorf("invalid escape")
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}

// decodeString returns the text of a validated string literal.
func decodeString(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	out := make([]byte, 0, len(inner))
	p := parser{src: raw}
	_ = p.str(&out) // validated by Parse
	return string(out)
}

// Elems calls fn for each element of an Array (a Rust Vec), in order,
// stopping at the first error, which it returns. Any other kind, null
// included, is an error ("invalid type: null, expected a sequence").
func (v Value) Elems(fn func(Value) error) error {
	if v.kind != KindArray {
		return v.invalidType("a sequence")
	}
	return v.walk(func(_ []byte, e Value) error { return fn(e) })
}

// Len returns the number of elements of an Array or members of an Object
// (0 for other kinds). It walks the value, so callers use it once, to size
// a slice.
func (v Value) Len() int {
	if v.kind != KindArray && v.kind != KindObject {
		return 0
	}
	n := 0
	_ = v.walk(func([]byte, Value) error { n++; return nil })
	return n
}

// Members calls fn for each member of an Object, in input order (duplicate
// keys included), stopping at the first error, which it returns.
func (v Value) Members(fn func(key string, val Value) error) error {
	if v.kind != KindObject {
		return v.invalidType("a map")
	}
	return v.walk(func(key []byte, e Value) error { return fn(decodeString(key), e) })
}

// walk iterates a validated container; key is the raw key literal of an
// object member, nil for array elements.
func (v Value) walk(fn func(key []byte, e Value) error) error {
	p := parser{src: v.raw, pos: 1}
	p.skipSpace()
	if p.pos >= len(p.src)-1 {
		return nil // empty
	}
	for {
		p.skipSpace()
		var key []byte
		if v.kind == KindObject {
			start := p.pos
			_ = p.str(nil)
			key = p.src[start:p.pos]
			p.skipSpace()
			p.pos++ // ':'
			p.skipSpace()
		}
		start := p.pos
		k, _ := p.value(0)
		if err := fn(key, Value{kind: k, raw: p.src[start:p.pos]}); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ',' {
			return nil
		}
		p.pos++
	}
}
