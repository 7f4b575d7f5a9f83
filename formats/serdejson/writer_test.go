package serdejson

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestWriterCompact(t *testing.T) {
	var w Writer
	w.BeginObject()
	w.Key("a")
	w.Uint64(1)
	w.Key("b")
	w.BeginArray()
	w.EndArray()
	w.Key("c")
	w.BeginObject()
	w.EndObject()
	w.Key("d")
	w.Strings(nil)
	w.Key("e")
	w.Strings([]string{"x", "y"})
	w.Key("f")
	w.Float64(1)
	w.Key("g")
	w.Float64(math.NaN())
	w.Key("h")
	w.OptString(nil)
	w.Key("i")
	s := "s"
	w.OptString(&s)
	w.Key("j")
	w.Int64(-3)
	w.Key("k")
	w.Bool(true)
	w.Key("l")
	w.BeginArray()
	w.BeginObject()
	w.Key("m")
	w.Null()
	w.EndObject()
	w.Raw([]byte(`{"raw":[1]}`))
	w.Float32(0.8)
	w.EndArray()
	w.Key("n")
	f := 0.5
	w.OptFloat64(&f)
	w.Key("o")
	w.OptFloat64(nil)
	w.Key("p")
	u := uint64(7)
	w.OptUint64(&u)
	w.Key("q")
	w.OptUint64(nil)
	w.EndObject()
	want := `{"a":1,"b":[],"c":{},"d":[],"e":["x","y"],"f":1.0,"g":null,"h":null,"i":"s","j":-3,"k":true,"l":[{"m":null},{"raw":[1]},0.8],"n":0.5,"o":null,"p":7,"q":null}`
	if got := string(w.Bytes()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	w.Reset()
	w.String("again")
	if got := string(w.Bytes()); got != `"again"` {
		t.Fatalf("after Reset: %s", got)
	}
	w2 := NewWriter([]byte("prefix:"))
	w2.Uint64(18446744073709551615)
	if got := string(w2.Bytes()); got != "prefix:18446744073709551615" {
		t.Fatal(got)
	}
}

func TestPretty(t *testing.T) {
	compact := `{"a":1,"b":[],"c":{},"d":["x",{"e":null,"f":[1,2]}],"g":"a,b:{c}[d] \"q\" \\","h":{"i":0.0}}`
	want := "{\n" +
		"  \"a\": 1,\n" +
		"  \"b\": [],\n" +
		"  \"c\": {},\n" +
		"  \"d\": [\n" +
		"    \"x\",\n" +
		"    {\n" +
		"      \"e\": null,\n" +
		"      \"f\": [\n" +
		"        1,\n" +
		"        2\n" +
		"      ]\n" +
		"    }\n" +
		"  ],\n" +
		"  \"g\": \"a,b:{c}[d] \\\"q\\\" \\\\\",\n" +
		"  \"h\": {\n" +
		"    \"i\": 0.0\n" +
		"  }\n" +
		"}"
	got := Pretty([]byte(compact))
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// json.Indent agrees on serde-compatible input, as the reference says.
	var ind bytes.Buffer
	if err := json.Indent(&ind, []byte(compact), "", "  "); err != nil {
		t.Fatal(err)
	}
	if ind.String() != want {
		t.Fatalf("json.Indent differs:\n%s", ind.String())
	}
	// Already-pretty or spaced input re-indents to the same layout.
	if again := Pretty(got); !bytes.Equal(again, got) {
		t.Fatalf("not idempotent:\n%s", again)
	}
	if got := string(Pretty([]byte(" [ ] "))); got != "[]" {
		t.Fatalf("empty array: %q", got)
	}
	if got := string(Pretty([]byte(`"\u2028<&>"`))); got != `"\u2028<&>"` {
		t.Fatalf("string changed: %q", got)
	}
	for _, bad := range []string{`"unterminated`, `"\`, `}}]]`, `{"a":`} {
		_ = Pretty([]byte(bad)) // must not panic
	}
}

func TestFormatTime(t *testing.T) {
	base := time.Date(2026, 8, 8, 16, 34, 20, 0, time.UTC)
	for _, c := range []struct {
		ns         int
		serde, rfc string
	}{
		{0, "2026-08-08T16:34:20Z", "2026-08-08T16:34:20+00:00"},
		{100_000_000, "2026-08-08T16:34:20.100Z", "2026-08-08T16:34:20.100+00:00"},
		{123_000_000, "2026-08-08T16:34:20.123Z", "2026-08-08T16:34:20.123+00:00"},
		{123_456_000, "2026-08-08T16:34:20.123456Z", "2026-08-08T16:34:20.123456+00:00"},
		{123_456_789, "2026-08-08T16:34:20.123456789Z", "2026-08-08T16:34:20.123456789+00:00"},
		{1_000, "2026-08-08T16:34:20.000001Z", "2026-08-08T16:34:20.000001+00:00"},
		{1, "2026-08-08T16:34:20.000000001Z", "2026-08-08T16:34:20.000000001+00:00"},
	} {
		tm := base.Add(time.Duration(c.ns))
		if got := FormatTime(tm); got != c.serde {
			t.Errorf("FormatTime: %s, want %s", got, c.serde)
		}
		if got := FormatRFC3339(tm); got != c.rfc {
			t.Errorf("FormatRFC3339: %s, want %s", got, c.rfc)
		}
	}
	// Converted to UTC.
	zone := time.FixedZone("x", 2*3600)
	if got := FormatTime(time.Date(2026, 1, 1, 2, 0, 0, 0, zone)); got != "2026-01-01T00:00:00Z" {
		t.Errorf("zone: %s", got)
	}
	// Years outside 0..=9999: Rust {:+05}.
	for y, want := range map[int]string{-1: "-0001", 10000: "+10000", 0: "0000", 999: "0999"} {
		got := FormatTime(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC))
		if got[:len(want)] != want || got[len(want)] != '-' {
			t.Errorf("year %d: %s", y, got)
		}
	}
}

// TestWriterNestedMembers: ObjectMember, ObjectsMember and the time and
// Option members write what their Key + value sequence writes.
func TestWriterNestedMembers(t *testing.T) {
	at := time.Date(2026, 8, 8, 16, 34, 20, 123_000_000, time.UTC)
	phi := 0.5
	type item struct{ n uint64 }
	var w Writer
	w.BeginObject()
	w.ObjectMember("o", func() {
		w.TimeMember("t", at)
		w.OptTimeMember("none", nil)
		w.OptTimeMember("some", &at)
	})
	ObjectsMember(&w, "empty", []item(nil), func(*item) { t.Fatal("element of an empty list") })
	ObjectsMember(&w, "items", []item{{1}, {2}}, func(it *item) { w.Uint64Member("n", it.n) })
	w.ObjectMember("e", func() {})
	w.OptFloat64Member("phi", &phi)
	w.OptFloat64Member("nophi", nil)
	w.EndObject()
	want := `{"o":{"t":"2026-08-08T16:34:20.123Z","none":null,"some":"2026-08-08T16:34:20.123Z"},"empty":[],"items":[{"n":1},{"n":2}],"e":{},"phi":0.5,"nophi":null}`
	if got := string(w.Bytes()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
