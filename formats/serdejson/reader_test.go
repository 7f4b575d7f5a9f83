package serdejson

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	checkParseStrings(t)
	vals := checkParseObject(t)
	checkParseElems(t, vals)
	stop := errors.New("stop")
	if err := vals[0].Elems(func(Value) error { return stop }); err != stop {
		t.Fatal(err)
	}
	if err := vals[0].Members(func(string, Value) error { return nil }); err == nil {
		t.Fatal("Members of an array")
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(deep)); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	var zero Value
	if !zero.IsNull() || zero.Elems(func(Value) error { return nil }) == nil {
		t.Fatal("zero Value")
	}
}

// checkParseStrings: string escapes, surrogate pairs and surrounding white
// space decode to the expected text.
func checkParseStrings(t *testing.T) {
	t.Helper()
	for _, c := range []struct{ in, str string }{
		{`"a\u00e9\ud83d\ude80\/\b"`, "aé🚀/\b"},
		{` "x" `, "x"},
		{"\t\r\n\"\u2028\"", "\u2028"},
		{`"\uD83D\uDE80"`, "🚀"},
		{`"\"\\\n\u0000"`, "\"\\\n\x00"},
	} {
		v, err := Parse([]byte(c.in))
		if err != nil || v.Kind() != KindString {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s, _ := v.Text(); s != c.str {
			t.Errorf("%s: %q", c.in, s)
		}
	}
}

// checkParseObject parses an object with a repeated key and checks its raw
// bytes and members; returns the member values in order.
func checkParseObject(t *testing.T) []Value {
	t.Helper()
	v, err := Parse([]byte(` {"a" : [1,-0,0.5,1e2,true,false,null] , "a":{}, "b\u0000":"x"} `))
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Raw()) != `{"a" : [1,-0,0.5,1e2,true,false,null] , "a":{}, "b\u0000":"x"}` {
		t.Fatalf("raw %q", v.Raw())
	}
	var keys []string
	var vals []Value
	if err := v.Members(func(k string, e Value) error { keys = append(keys, k); vals = append(vals, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "a,a,b\x00" || vals[1].Kind() != KindObject || vals[2].Kind() != KindString {
		t.Fatalf("members %q", keys)
	}
	if v.Len() != 3 {
		t.Fatal("Len")
	}
	return vals
}

// checkParseElems: the elements of the array member, their kinds, lengths
// and values, and empty objects and arrays.
func checkParseElems(t *testing.T, vals []Value) {
	t.Helper()
	var el []Value
	if err := vals[0].Elems(func(e Value) error { el = append(el, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if vals[0].Len() != 7 || vals[1].Len() != 0 || el[0].Len() != 0 {
		t.Fatal("Len")
	}
	if len(el) != 7 || el[0].IsFloat() || !el[2].IsFloat() || !el[3].IsFloat() || string(el[1].Raw()) != "-0" || el[6].Kind() != KindNull {
		t.Fatalf("elems %v", el)
	}
	if b, _ := el[4].Boolean(); !b {
		t.Fatal("true")
	}
	if b, err := el[5].Boolean(); b || err != nil {
		t.Fatal("false")
	}
	n := 0
	if err := vals[1].Members(func(string, Value) error { n++; return nil }); err != nil || n != 0 {
		t.Fatal("empty object", n, err)
	}
	empty, _ := Parse([]byte("[ \n ]"))
	if err := empty.Elems(func(Value) error { n++; return nil }); err != nil || n != 0 {
		t.Fatal("empty array", n, err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `nul`, `nullx`, `True`, `NaN`, `Infinity`, `+1`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `0x10`,
		`[1,]`, `{"a":1,}`, `{a:1}`, `{"a" 1}`, `[1 2]`, `{"a":1}{}`, `"a" "b"`, `// c` + "\n1",
		"\"\x01\"", "\"a\tb\"", "\"\xff\"", "\"\xed\xa0\x80\"", `"\x"`, `"\u12"`, `"\u12g4"`,
		`"\ud800"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00"`, `"abc`, "\ufeff1", "\x0b1",
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
		strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
	} {
		if v, err := Parse([]byte(in)); err == nil {
			t.Errorf("%q accepted: %+v", in, v)
		} else if !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v does not wrap ErrSyntax", in, err)
		}
	}
}

func num(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
		want uint64
		ok   bool
	}{
		{"0", 64, 0, true},
		{"18446744073709551615", 64, math.MaxUint64, true},
		{"18446744073709551616", 64, 0, false}, // a float to serde_json
		{"1.0", 64, 0, false},
		{"1e2", 64, 0, false},
		{"-0", 64, 0, false},
		{"-1", 64, 0, false},
		{"255", 8, 255, true},
		{"256", 8, 0, false},
		{"4294967295", 32, math.MaxUint32, true},
		{"4294967296", 32, 0, false},
		{`"1"`, 64, 0, false},
		{"null", 64, 0, false},
	} {
		got, err := num(t, c.in).Uint(c.bits)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Uint(%s, %d) = %d, %v", c.in, c.bits, got, err)
		}
		if err != nil && !errors.Is(err, ErrType) {
			t.Errorf("%s: %v does not wrap ErrType", c.in, err)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"-0", 0, false},
		{"2.0", 0, false},
	} {
		got, err := num(t, c.in).Int64()
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Int64(%s) = %d, %v", c.in, got, err)
		}
	}
	for _, c := range []struct {
		in   string
		want string // FormatFloat of the parsed value
		ok   bool
	}{
		{"0", "0.0", true},
		{"-0", "-0.0", true},
		{"1", "1.0", true},
		{"0.974", "0.974", true},
		{"1E-7", "1e-7", true},
		{"18446744073709551617", "1.8446744073709552e+19", true},
		{"1e-400", "0.0", true},
		{"1e400", "", false},
		{"-1e400", "", false},
		{"null", "", false},
		{`"0.5"`, "", false},
	} {
		f, err := num(t, c.in).Float64()
		if (err == nil) != c.ok || (c.ok && FormatFloat(f) != c.want) {
			t.Errorf("Float64(%s) = %v, %v", c.in, f, err)
		}
	}
	if f, err := num(t, "0.8").Float32(); err != nil || FormatFloat32(f) != "0.8" {
		t.Errorf("Float32(0.8) = %v %v", f, err)
	}
	if f, err := num(t, "1e39").Float32(); err != nil || !math.IsInf(float64(f), 1) {
		t.Errorf("Float32(1e39) = %v %v (serde casts f64 to f32)", f, err)
	}
	if _, err := num(t, "true").Float32(); err == nil {
		t.Error("Float32(true) accepted")
	}
}

func TestScalars(t *testing.T) {
	if s, err := num(t, `"x"`).Text(); err != nil || s != "x" {
		t.Error(s, err)
	}
	if _, err := num(t, `1`).Text(); err == nil {
		t.Error("Text(1)")
	}
	if b, err := num(t, `true`).Boolean(); err != nil || !b {
		t.Error(b, err)
	}
	if _, err := num(t, `0`).Boolean(); err == nil {
		t.Error("Boolean(0)")
	}
	if err := num(t, `null`).Elems(func(Value) error { return nil }); err == nil || !strings.Contains(err.Error(), "invalid type: null, expected a sequence") {
		t.Error("Elems(null)", err)
	}
	if !num(t, "null").IsNull() || num(t, "0").IsNull() {
		t.Error("IsNull")
	}
}

type pair struct {
	A uint64
	B *string
}

func decodePair(v Value) (pair, error) {
	var p pair
	err := DecodeStruct(v, "Pair", []Field{
		{Name: "a", Decode: func(v Value) (err error) { p.A, err = v.Uint64(); return }},
		{Name: "b", Optional: true, Decode: func(v Value) error {
			if v.IsNull() {
				return nil
			}
			s, err := v.Text()
			p.B = &s
			return err
		}},
	})
	return p, err
}

func TestDecodeStruct(t *testing.T) {
	for _, c := range []struct {
		in  string
		a   uint64
		b   string // "" = nil
		err string
	}{
		{`{"a":1,"b":"x"}`, 1, "x", ""},
		{`{"b":"x","a":1}`, 1, "x", ""},
		{`{"a":1}`, 1, "", ""},
		{`{"a":1,"b":null}`, 1, "", ""},
		{`{"a":1,"A":2,"c":[{}],"c":3}`, 1, "", ""},
		{`[2,"y"]`, 2, "y", ""},
		{`[2,null]`, 2, "", ""},
		{`{"b":"x"}`, 0, "", "missing field `a`"},
		{`{"a":1,"a":2}`, 0, "", "duplicate field `a`"},
		{`{"a":1.0}`, 0, "", "floating point"},
		{`{"a":1,"b":5}`, 0, "", "invalid type"},
		{`[2]`, 0, "", "invalid length 1"},
		{`[2,null,3]`, 0, "", "trailing"},
		{`"x"`, 0, "", "expected struct Pair"},
		{`null`, 0, "", "expected struct Pair"},
	} {
		p, err := decodePair(num(t, c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrType) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		b := ""
		if p.B != nil {
			b = *p.B
		}
		if p.A != c.a || b != c.b {
			t.Errorf("%s: %+v", c.in, p)
		}
	}
}
