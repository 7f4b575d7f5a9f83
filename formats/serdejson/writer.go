package serdejson

import (
	"strconv"
	"time"
)

// Writer appends compact serde_json output to a byte slice. The zero value
// is ready to use. It inserts the ',' and ':' separators itself; the caller
// writes keys in Rust declaration order and one value after every Key.
// Misuse (a value where a key is due, unbalanced End calls) is not
// detected: the output is then simply not valid JSON.
type Writer struct {
	buf      []byte
	nonEmpty []bool // one per open container: has it an element yet?
	afterKey bool
	era      Era
}

// NewWriter returns a Writer that appends to buf.
func NewWriter(buf []byte) *Writer {
	return &Writer{buf: buf}
}

// SetEra makes the Writer format floats as serde_json of era e does (the
// default is Zmij). Only verification uses Ryu: it re-renders a document an
// older lean-ctx wrote.
func (w *Writer) SetEra(e Era) { w.era = e }

// Bytes returns the output so far (compact). It aliases the Writer's buffer.
func (w *Writer) Bytes() []byte { return w.buf }

// Reset discards the output and any open containers, keeping the buffer's
// capacity and the era.
func (w *Writer) Reset() {
	w.buf = w.buf[:0]
	w.nonEmpty = w.nonEmpty[:0]
	w.afterKey = false
}

// sep writes the ',' that precedes every element but the first of its
// container; a value right after a key needs none.
func (w *Writer) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.nonEmpty); n > 0 {
		if w.nonEmpty[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.nonEmpty[n-1] = true
	}
}

// BeginObject writes '{'.
func (w *Writer) BeginObject() { w.open('{') }

// EndObject writes '}'.
func (w *Writer) EndObject() { w.close('}') }

// BeginArray writes '['.
func (w *Writer) BeginArray() { w.open('[') }

// EndArray writes ']'.
func (w *Writer) EndArray() { w.close(']') }

// open writes the opening bracket c of a container, which has no element
// yet.
func (w *Writer) open(c byte) {
	w.sep()
	w.buf = append(w.buf, c)
	w.nonEmpty = append(w.nonEmpty, false)
}

// close writes the closing bracket c of the innermost container.
func (w *Writer) close(c byte) {
	w.nonEmpty = w.nonEmpty[:len(w.nonEmpty)-1]
	w.buf = append(w.buf, c)
}

// Key writes an object key and its ':'.
func (w *Writer) Key(k string) {
	w.sep()
	w.buf = AppendString(w.buf, k)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// String writes s as QuoteString does.
func (w *Writer) String(s string) {
	w.sep()
	w.buf = AppendString(w.buf, s)
}

// Float64 writes an f64 as FormatFloat does (null for NaN and ±Inf, as
// serde_json does; such a value does not parse back into a non-Option f64).
func (w *Writer) Float64(f float64) {
	w.sep()
	w.buf = appendFloat(w.buf, f, 64, w.era)
}

// Float32 writes an f32 as FormatFloat32 does.
func (w *Writer) Float32(f float32) {
	w.sep()
	w.buf = appendFloat(w.buf, float64(f), 32, w.era)
}

// Uint64 writes an unsigned integer (u8 … u64, usize) in decimal.
func (w *Writer) Uint64(u uint64) {
	w.sep()
	w.buf = strconv.AppendUint(w.buf, u, 10)
}

// Int64 writes a signed integer in decimal.
func (w *Writer) Int64(i int64) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, i, 10)
}

// Bool writes true or false.
func (w *Writer) Bool(b bool) {
	w.sep()
	w.buf = strconv.AppendBool(w.buf, b)
}

// Null writes null (an Option that is None).
func (w *Writer) Null() {
	w.sep()
	w.buf = append(w.buf, "null"...)
}

// Raw writes v, which must already be one compact serde_json value.
func (w *Writer) Raw(v []byte) {
	w.sep()
	w.buf = append(w.buf, v...)
}

// OptString writes *s, or null when s is nil (Option<String>).
func (w *Writer) OptString(s *string) {
	if s == nil {
		w.Null()
		return
	}
	w.String(*s)
}

// OptFloat64 writes *f, or null when f is nil (Option<f64>).
func (w *Writer) OptFloat64(f *float64) {
	if f == nil {
		w.Null()
		return
	}
	w.Float64(*f)
}

// OptUint64 writes *u, or null when u is nil (Option<u64> and friends).
func (w *Writer) OptUint64(u *uint64) {
	if u == nil {
		w.Null()
		return
	}
	w.Uint64(*u)
}

// Strings writes a Vec<String>; a nil slice is written as [] (never null).
func (w *Writer) Strings(list []string) {
	w.BeginArray()
	for _, s := range list {
		w.String(s)
	}
	w.EndArray()
}

// Members: each writes an object key and its value, as Key followed by the
// value's method does.

// StringMember writes the key k and the string s.
func (w *Writer) StringMember(k, s string) { w.Key(k); w.String(s) }

// OptStringMember writes the key k and *s, or null when s is nil.
func (w *Writer) OptStringMember(k string, s *string) { w.Key(k); w.OptString(s) }

// Uint64Member writes the key k and the unsigned integer u.
func (w *Writer) Uint64Member(k string, u uint64) { w.Key(k); w.Uint64(u) }

// Float64Member writes the key k and the f64 f.
func (w *Writer) Float64Member(k string, f float64) { w.Key(k); w.Float64(f) }

// OptFloat64Member writes the key k and *f, or null when f is nil.
func (w *Writer) OptFloat64Member(k string, f *float64) { w.Key(k); w.OptFloat64(f) }

// BoolMember writes the key k and b.
func (w *Writer) BoolMember(k string, b bool) { w.Key(k); w.Bool(b) }

// StringsMember writes the key k and the Vec<String> list.
func (w *Writer) StringsMember(k string, list []string) { w.Key(k); w.Strings(list) }

// TimeMember writes the key k and t as chrono's serde form of
// DateTime<Utc> (FormatTime).
func (w *Writer) TimeMember(k string, t time.Time) { w.Key(k); w.String(FormatTime(t)) }

// OptTimeMember writes the key k and *t as TimeMember does, or null when t
// is nil (Option<DateTime<Utc>>).
func (w *Writer) OptTimeMember(k string, t *time.Time) {
	if t == nil {
		w.Key(k)
		w.Null()
		return
	}
	w.TimeMember(k, *t)
}

// ObjectMember writes the key k and an object whose members body writes
// (a nested struct).
func (w *Writer) ObjectMember(k string, body func()) {
	w.Key(k)
	w.BeginObject()
	body()
	w.EndObject()
}

// ObjectsMember writes the key k and a Vec of structs: one object per
// element of list, whose members body writes (an empty list is []).
func ObjectsMember[T any](w *Writer, k string, list []T, body func(*T)) {
	w.Key(k)
	w.BeginArray()
	for i := range list {
		w.BeginObject()
		body(&list[i])
		w.EndObject()
	}
	w.EndArray()
}
