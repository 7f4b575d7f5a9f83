package serdejson

import (
	"strings"
	"testing"
)

// TestMembers: each ...Member method writes what Key and the value's own
// method write.
func TestMembers(t *testing.T) {
	s := "x\"\n"
	var a, b Writer
	a.BeginObject()
	a.StringMember("s", s)
	a.OptStringMember("o", nil)
	a.OptStringMember("p", &s)
	a.Uint64Member("u", 7)
	a.Float64Member("f", 1)
	a.BoolMember("b", true)
	a.StringsMember("l", nil)
	a.EndObject()
	b.BeginObject()
	b.Key("s")
	b.String(s)
	b.Key("o")
	b.OptString(nil)
	b.Key("p")
	b.OptString(&s)
	b.Key("u")
	b.Uint64(7)
	b.Key("f")
	b.Float64(1)
	b.Key("b")
	b.Bool(true)
	b.Key("l")
	b.Strings(nil)
	b.EndObject()
	const want = `{"s":"x\"\n","o":null,"p":"x\"\n","u":7,"f":1.0,"b":true,"l":[]}`
	if string(a.Bytes()) != want || string(b.Bytes()) != want {
		t.Fatalf("members %s, Key and value %s, want %s", a.Bytes(), b.Bytes(), want)
	}
}

// TestFieldKinds: Required refuses a missing key, Option leaves a missing
// key or null as None, Defaulted keeps the default when missing but decodes
// null (and so refuses it for a string), ListField decodes every element.
func TestFieldKinds(t *testing.T) {
	type rec struct {
		req  string
		opt  *string
		def  string
		list []string
	}
	decode := func(text string) (rec, error) {
		r := rec{def: "d"}
		v, err := Parse([]byte(text))
		if err != nil {
			return r, err
		}
		err = DecodeStruct(v, "Rec", []Field{
			Required("req", StringField(&r.req)),
			Option("opt", OptStringField(&r.opt)),
			Defaulted("def", StringField(&r.def)),
			Defaulted("list", ListField(&r.list, func(s *string, v Value) (err error) { *s, err = v.Text(); return })),
		})
		return r, err
	}
	r, err := decode(`{"req":"a","opt":null,"list":["x","y"]}`)
	if err != nil || r.req != "a" || r.opt != nil || r.def != "d" || strings.Join(r.list, ",") != "x,y" {
		t.Fatalf("decode: %+v, %v", r, err)
	}
	if r, err = decode(`{"req":"a","opt":"o","def":"e"}`); err != nil || r.opt == nil || *r.opt != "o" || r.def != "e" || r.list != nil {
		t.Fatalf("decode with opt and def: %+v, %v", r, err)
	}
	if _, err := decode(`{"opt":"o"}`); err == nil || !strings.Contains(err.Error(), "missing field `req`") {
		t.Fatalf("missing required field: %v", err)
	}
	if _, err := decode(`{"req":"a","def":null}`); err == nil {
		t.Fatal("a null #[serde(default)] String decoded")
	}
	if _, err := decode(`{"req":"a","list":["x",1]}`); err == nil {
		t.Fatal("a list with a number decoded as strings")
	}
}

// TestNumberFields: the number field decoders store what the typed
// accessors return; an Option is set only when its value decodes.
func TestNumberFields(t *testing.T) {
	var (
		u32  uint32
		ou32 *uint32
		ou64 *uint64
		f32  float32
		of32 *float32
		of64 *float64
		b    bool
	)
	err := DecodeStruct(num(t, `{"a":7,"b":8,"c":9,"d":0.8,"e":1e13,"f":1e16,"g":true}`), "T", []Field{
		Required("a", Uint32Field(&u32)),
		Option("b", OptUint32Field(&ou32)),
		Option("c", OptUint64Field(&ou64)),
		Required("d", Float32Field(&f32)),
		Option("e", OptFloat32Field(&of32)),
		Option("f", OptFloat64Field(&of64)),
		Required("g", BoolField(&b)),
	})
	if err != nil || u32 != 7 || *ou32 != 8 || *ou64 != 9 || f32 != 0.8 || *of32 != 1e13 || *of64 != 1e16 || !b {
		t.Fatalf("%v: %v %v %v %v %v %v %v", err, u32, ou32, ou64, f32, of32, of64, b)
	}
	var none *uint32
	if err := OptUint32Field(&none)(num(t, `4294967296`)); err == nil || none != nil {
		t.Fatalf("u32 overflow: %v %v", err, none)
	}
	var nf *float64
	if err := OptFloat64Field(&nf)(num(t, `"x"`)); err == nil || nf != nil {
		t.Fatalf("string as f64: %v %v", err, nf)
	}
}
