package serdejson

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFormatFloat: the output parses back to the same float (f64 and f32),
// follows the notation rules, and Parse reads it back to the same value; the
// Ryu era differs exactly by the '+' of a positive exponent.
func FuzzFormatFloat(f *testing.F) {
	for _, v := range loadFloatVectors(f) {
		x, _ := strconv.ParseFloat(v.Value, 64)
		f.Add(math.Float64bits(x))
	}
	f.Add(uint64(1))
	f.Add(math.Float64bits(math.MaxFloat64))
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		check := func(s string, size int, want float64) {
			if math.IsNaN(want) || math.IsInf(want, 0) {
				if s != "null" {
					t.Fatalf("%v: %s", want, s)
				}
				return
			}
			back, err := strconv.ParseFloat(s, size)
			if err != nil || back != want || math.Signbit(back) != math.Signbit(want) {
				t.Fatalf("%v (%d bits) -> %s -> %v %v", want, size, s, back, err)
			}
			if !bytes.ContainsAny([]byte(s), ".e") {
				t.Fatalf("%s has neither '.' nor 'e'", s)
			}
			v, err := Parse([]byte(s))
			if err != nil || !v.IsFloat() {
				t.Fatalf("%s: Parse %v %+v", s, err, v)
			}
			if size == 64 {
				if g, err := v.Float64(); err != nil || g != want {
					t.Fatalf("%s: Float64 %v %v", s, g, err)
				}
			}
		}
		check(FormatFloat(x), 64, x)
		x32 := math.Float32frombits(uint32(bits))
		check(FormatFloat32(x32), 32, float64(x32))
		// The Ryu era: the same text without the '+' of a positive
		// exponent, which also reads back to the same value.
		var w Writer
		w.SetEra(Ryu)
		w.Float64(x)
		w.Float32(x32)
		w.Reset()
		w.Float64(x)
		zmij := FormatFloat(x)
		if ryu := string(w.Bytes()); ryu != strings.Replace(zmij, "e+", "e", 1) || (ryu != zmij) != EraSensitive(x) {
			t.Fatalf("%v: ryu %s, zmij %s, sensitive %v", x, ryu, zmij, EraSensitive(x))
		}
		check(string(w.Bytes()), 64, x)
		w.Reset()
		w.Float32(x32)
		zmij = FormatFloat32(x32)
		if ryu := string(w.Bytes()); ryu != strings.Replace(zmij, "e+", "e", 1) || (ryu != zmij) != EraSensitive32(x32) {
			t.Fatalf("%v: ryu %s, zmij %s, sensitive %v", x32, ryu, zmij, EraSensitive32(x32))
		}
	})
}

// FuzzQuoteString: the output is valid JSON that decodes back to the input
// when the input is valid UTF-8, and never contains HTML escapes.
// fuzz-smoke: 5000x
func FuzzQuoteString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "<>&\u2028\u2029", "🚀", "\xff\xfe", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := QuoteString(s)
		if !json.Valid([]byte(q)) || !utf8.ValidString(q) {
			t.Fatalf("%q -> invalid JSON %q", s, q)
		}
		var back string
		if err := json.Unmarshal([]byte(q), &back); err != nil {
			t.Fatal(err)
		}
		v, err := Parse([]byte(q))
		got, _ := v.Text()
		if err != nil || got != back {
			t.Fatalf("%q: Parse %q %v, encoding/json %q", q, got, err, back)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q -> %q -> %q", s, q, back)
		}
		if bytes.Contains([]byte(q), []byte(`\u00`)) {
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`, `\u007f`} {
				if bytes.Contains([]byte(q), []byte(esc)) {
					t.Fatalf("%q: serde_json does not write %s", q, esc)
				}
			}
		}
	})
}

// FuzzParse: no panic; Parse accepts exactly what encoding/json accepts,
// except for invalid UTF-8, lone surrogate escapes and deep nesting, which
// only Parse refuses; re-encoding through the Writer then parsing is stable,
// and Pretty agrees with json.Indent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0,0.5,1e2,true,false,null],"b":"\u00e9"}`, `[]`, `"\ud83d\ude80"`, `{"a":{"b":[{}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			if json.Valid(data) && utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) && len(data) <= MaxDepth {
				t.Fatalf("Parse refused valid JSON %q: %v", data, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted what encoding/json refuses: %q", data)
		}
		var w Writer
		writeValue(&w, v)
		again, err := Parse(w.Bytes())
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", w.Bytes(), err)
		}
		var w2 Writer
		writeValue(&w2, again)
		if !bytes.Equal(w.Bytes(), w2.Bytes()) {
			t.Fatalf("unstable: %q vs %q", w.Bytes(), w2.Bytes())
		}
		p := Pretty(w.Bytes())
		var ind bytes.Buffer
		if err := json.Indent(&ind, w.Bytes(), "", "  "); err != nil || !bytes.Equal(p, ind.Bytes()) {
			t.Fatalf("Pretty differs from json.Indent:\n%s\n%s", p, ind.Bytes())
		}
	})
}

// writeValue re-encodes a parsed value, numbers verbatim.
func writeValue(w *Writer, v Value) {
	switch v.Kind() {
	case KindNull:
		w.Null()
	case KindBool:
		b, _ := v.Boolean()
		w.Bool(b)
	case KindNumber:
		w.Raw(v.Raw())
	case KindString:
		s, _ := v.Text()
		w.String(s)
	case KindArray:
		w.BeginArray()
		_ = v.Elems(func(e Value) error { writeValue(w, e); return nil })
		w.EndArray()
	case KindObject:
		w.BeginObject()
		_ = v.Members(func(k string, e Value) error { w.Key(k); writeValue(w, e); return nil })
		w.EndObject()
	}
}
