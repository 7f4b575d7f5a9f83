package serdejson

import (
	"math"
	"strconv"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
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
	var out []floatVector
	for _, v := range vectorfile.Load[[]floatVector](t, "snapshot.json") {
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

// TestFloatEras: the Ryu era (serde_json before zmij) writes the same text
// without the '+' of a positive exponent, and EraSensitive says exactly
// when the two eras differ.
func TestFloatEras(t *testing.T) {
	// render writes f (an f32 when bits is 32) as the Writer of era does.
	render := func(f float64, bits int, era Era) string {
		var w Writer
		w.SetEra(era)
		if bits == 32 {
			w.Float32(float32(f))
		} else {
			w.Float64(f)
		}
		return string(w.Bytes())
	}
	for _, c := range []struct {
		f         float64
		bits      int
		zmij, ryu string
		sensitive bool
	}{
		{1e16, 64, "1e+16", "1e16", true},
		{-3.439070283483335e35, 64, "-3.439070283483335e+35", "-3.439070283483335e35", true},
		{1.7976931348623157e308, 64, "1.7976931348623157e+308", "1.7976931348623157e308", true},
		{1e15, 64, "1000000000000000.0", "1000000000000000.0", false},
		{9999999999999998, 64, "9999999999999998.0", "9999999999999998.0", false},
		{1e-6, 64, "1e-6", "1e-6", false},
		{0.5, 64, "0.5", "0.5", false},
		{math.Inf(1), 64, "null", "null", false},
		{math.NaN(), 64, "null", "null", false},
		{1e13, 32, "1e+13", "1e13", true},
		{3.4028235e38, 32, "3.4028235e+38", "3.4028235e38", true},
		{1e12, 32, "1000000000000.0", "1000000000000.0", false},
		{1e-7, 32, "1e-7", "1e-7", false},
	} {
		zmij, sensitive := FormatFloat(c.f), EraSensitive(c.f)
		if c.bits == 32 {
			zmij, sensitive = FormatFloat32(float32(c.f)), EraSensitive32(float32(c.f))
		}
		if zmij != c.zmij || render(c.f, c.bits, Zmij) != c.zmij {
			t.Errorf("f%d %v: zmij %s / %s, want %s", c.bits, c.f, zmij, render(c.f, c.bits, Zmij), c.zmij)
		}
		if got := render(c.f, c.bits, Ryu); got != c.ryu {
			t.Errorf("f%d %v: ryu %s, want %s", c.bits, c.f, got, c.ryu)
		}
		if sensitive != c.sensitive {
			t.Errorf("f%d %v: EraSensitive %v", c.bits, c.f, sensitive)
		}
	}
	if Zmij.String() != "zmij" || Ryu.String() != "ryu" {
		t.Errorf("names %s %s", Zmij, Ryu)
	}
	// Reset keeps the era.
	var w Writer
	w.SetEra(Ryu)
	w.Reset()
	w.Float64(2e20)
	if got := string(w.Bytes()); got != "2e20" {
		t.Errorf("after Reset: %s", got)
	}
}
