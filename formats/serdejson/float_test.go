package serdejson

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

type floatVector struct {
	Kind   string `json:"kind"`
	Value  string `json:"value"`
	Type   string `json:"type"`
	JSON   string `json:"json"`
	Source string `json:"source"`
}

func loadFloatVectors(t testing.TB) []floatVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []floatVector
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	var out []floatVector
	for _, v := range all {
		if v.Kind == "float" {
			out = append(out, v)
		}
	}
	return out
}

func TestFloatVectors(t *testing.T) {
	vs := loadFloatVectors(t)
	if len(vs) != 28 {
		t.Fatalf("found %d float vectors, want 28", len(vs))
	}
	for _, v := range vs {
		var got string
		switch v.Type {
		case "f64":
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				t.Fatalf("%s: %v", v.Value, err)
			}
			got = FormatFloat(f)
		case "f32":
			f, err := strconv.ParseFloat(v.Value, 32)
			if err != nil {
				t.Fatalf("%s: %v", v.Value, err)
			}
			got = FormatFloat32(float32(f))
		default:
			t.Fatalf("unknown type %q", v.Type)
		}
		if got != v.JSON {
			t.Errorf("%s %s (%s): got %s, want %s", v.Type, v.Value, v.Source, got, v.JSON)
		}
	}
}

func TestFloatFormatRules(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0.5, "0.5"},
		{-1, "-1.0"},
		{100, "100.0"},
		{123456789012345.6, "123456789012345.6"},
		{1.5e15, "1500000000000000.0"},
		{9.007199254740992e15, "9007199254740992.0"},
		{1e-5 * 1.25, "0.0000125"},
		{0.000099, "0.000099"},
		{9.9e-6, "9.9e-6"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{-2.5e-300, "-2.5e-300"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{0.44444, "0.44444"},
		{0.91, "0.91"},
		{math.Copysign(0, -1), "-0.0"},
	} {
		if got := FormatFloat(c.f); got != c.want {
			t.Errorf("FormatFloat(%v) = %s, want %s", c.f, got, c.want)
		}
	}
	for _, c := range []struct {
		f    float32
		want string
	}{
		{0.1, "0.1"},
		{1.0 / 3, "0.33333334"},
		{3.4028235e38, "3.4028235e+38"},
		{123456789, "123456790.0"},
		{float32(math.Inf(-1)), "null"},
	} {
		if got := FormatFloat32(c.f); got != c.want {
			t.Errorf("FormatFloat32(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}
