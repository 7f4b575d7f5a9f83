package snapshot

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

const canonA = `{"schema_version":1,"snapshot_id":"","parent_id":null,"created_at":"2026-01-01T00:00:00Z","lean_ctx_version":"9.9.9","git":{"commit":null,"branch":null,"dirty":false},"project":{"root_hash":null,"identity_hash":null},"roi":{"input_tokens":0,"output_tokens":0,"tokens_saved":0,"compression_rate":0.0},"lineage":{"items_recorded":0,"items":[]},"ledger":{"window_size":0,"total_tokens_sent":0,"total_tokens_saved":0,"items":[]},"session":null,"signature":null}`

func canonB(t *testing.T) string {
	b, err := exampleB().CanonicalBody()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseLeniency(t *testing.T) {
	b := canonB(t)
	for _, c := range []struct {
		name, in string
		want     string // re-serialised compact; "" = same as canonA
	}{
		{"unknown fields dropped", strings.Replace(canonA, `"git":{`, `"extra":[1,{"a":null}],"git":{"x":true,`, 1), ""},
		{"duplicate unknown fields ignored", strings.Replace(canonA, `"git":`, `"zz":1,"zz":2,"git":`, 1), ""},
		{"case-mismatched key is unknown", strings.Replace(canonA, `"session":null`, `"session":null,"Session":{}`, 1), ""},
		{"missing Option fields are None", strings.NewReplacer(`"parent_id":null,`, "", `,"session":null,"signature":null`, "", `"commit":null,`, "").Replace(canonA), ""},
		{"integer in f64", strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":0`, 1), ""},
		{"exponent in f64", strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":0e5`, 1), ""},
		{"negative zero in f64", strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":-0`, 1),
			strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":-0.0`, 1)},
		{"whitespace", " \n" + strings.ReplaceAll(canonA, ",", " ,\r\n\t") + "\n", ""},
		{"escapes decoded", strings.Replace(canonA, `"9.9.9"`, `"\u0039.9.9"`, 1), ""},
		{"progress 101..255 accepted", strings.Replace(b, `"progress_pct":20`, `"progress_pct":255`, 1),
			strings.Replace(b, `"progress_pct":20`, `"progress_pct":255`, 1)},
		{"struct as array", `[1,"",null,"2026-01-01T00:00:00Z","9.9.9",[null,null,false],[null,null],[0,0,0,0.0],[0,[]],[0,0,0,[]],null,null]`, ""},
		{"schema_version not checked", strings.Replace(canonA, `"schema_version":1`, `"schema_version":4294967295`, 1),
			strings.Replace(canonA, `"schema_version":1`, `"schema_version":4294967295`, 1)},
	} {
		s, err := ParseFile([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, err := s.MarshalCompact()
		want := c.want
		if want == "" {
			want = canonA
		}
		if err != nil || string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	b := canonB(t)
	for _, c := range []struct {
		name, in, msg string
	}{
		{"missing required", strings.Replace(canonA, `"created_at":"2026-01-01T00:00:00Z",`, "", 1), "missing field `created_at`"},
		{"missing nested required", strings.Replace(canonA, `,"dirty":false`, "", 1), "missing field `dirty`"},
		{"missing vec", strings.Replace(canonA, `,"items":[]}`, `}`, 1), "missing field `items`"},
		{"case-mismatched required", strings.Replace(canonA, `"created_at"`, `"Created_At"`, 1), "missing field `created_at`"},
		{"duplicate field", strings.Replace(canonA, `"parent_id":null`, `"parent_id":null,"parent_id":"x"`, 1), "duplicate field `parent_id`"},
		{"duplicate nested", strings.Replace(canonA, `"dirty":false`, `"dirty":false,"dirty":false`, 1), "duplicate field `dirty`"},
		{"float in integer", strings.Replace(canonA, `"input_tokens":0`, `"input_tokens":0.0`, 1), "floating point"},
		{"negative integer", strings.Replace(canonA, `"input_tokens":0`, `"input_tokens":-1`, 1), "invalid value"},
		{"integer overflow", strings.Replace(canonA, `"input_tokens":0`, `"input_tokens":18446744073709551616`, 1), "floating point"},
		{"u32 overflow", strings.Replace(canonA, `"schema_version":1`, `"schema_version":4294967296`, 1), "expected u32"},
		{"u8 overflow", strings.Replace(b, `"progress_pct":20`, `"progress_pct":256`, 1), "expected u8"},
		{"null in vec", strings.Replace(canonA, `"items":[]`, `"items":null`, 1), "expected a sequence"},
		{"null in list element", strings.Replace(b, `"decisions":["Use`, `"decisions":[null,"Use`, 1), "invalid type: null"},
		{"null in f64", strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":null`, 1), "invalid type: null"},
		{"null in string", strings.Replace(canonA, `"created_at":"2026-01-01T00:00:00Z"`, `"created_at":null`, 1), "invalid type: null"},
		{"null in bool", strings.Replace(canonA, `"dirty":false`, `"dirty":null`, 1), "invalid type: null"},
		{"string in number", strings.Replace(canonA, `"input_tokens":0`, `"input_tokens":"0"`, 1), "invalid type"},
		{"f64 out of range", strings.Replace(canonA, `"compression_rate":0.0`, `"compression_rate":1e999`, 1), "out of range"},
		{"bad nested type", strings.Replace(canonA, `"git":{"commit":null,"branch":null,"dirty":false}`, `"git":"x"`, 1), "expected struct GitAnchorV1"},
		{"array too short", `[1,"",null]`, "invalid length 3"},
		{"trailing data", canonA + "x", "trailing characters"},
		{"two values", canonA + canonA, "trailing characters"},
		{"trailing comma", strings.Replace(canonA, `"signature":null}`, `"signature":null,}`, 1), "trailing comma"},
		{"control char", strings.Replace(canonA, `"9.9.9"`, "\"9.9\x01.9\"", 1), "control character"},
		{"invalid utf-8", strings.Replace(canonA, `"9.9.9"`, "\"9.9\xff.9\"", 1), "invalid unicode"},
		{"lone surrogate", strings.Replace(canonA, `"9.9.9"`, `"\ud800"`, 1), "surrogate"},
		{"BOM", "\ufeff" + canonA, "expected value"},
		{"empty", "", "EOF"},
		{"not an object", `"x"`, "expected struct ContextSnapshotV1"},
	} {
		_, err := ParseFile([]byte(c.in))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrParse) || !strings.HasPrefix(err.Error(), "parse snapshot: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want it to contain %q", c.name, err, c.msg)
		}
	}
}

func TestParseErrorText(t *testing.T) {
	for in, want := range map[string]string{
		strings.Replace(canonA, `"created_at":"2026-01-01T00:00:00Z",`, "", 1):   "parse snapshot: missing field `created_at`",
		strings.Replace(canonA, `"schema_version":1`, `"schema_version":1.5`, 1): "parse snapshot: invalid type: floating point `1.5`, expected u32",
		`[1]`:         "parse snapshot: invalid length 1, expected struct ContextSnapshotV1 with 12 elements",
		"{\n\"a\":,}": "parse snapshot: expected value at line 2 column 5",
	} {
		if _, err := ParseFile([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

func TestParseErrorsWrapSerdejson(t *testing.T) {
	if _, err := ParseFile([]byte("{")); !errors.Is(err, serdejson.ErrSyntax) {
		t.Errorf("syntax: %v", err)
	}
	if _, err := ParseFile([]byte("{}")); !errors.Is(err, serdejson.ErrType) {
		t.Errorf("type: %v", err)
	}
}

func TestMaxFileSize(t *testing.T) {
	big := []byte(canonA[:len(canonA)-1] + `,"pad":"` + strings.Repeat("x", MaxFileSize) + `"}`)
	if _, err := ParseFile(big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	pad := MaxFileSize - len(canonA) - len(`,"pad":""`)
	atLimit := []byte(canonA[:len(canonA)-1] + `,"pad":"` + strings.Repeat("x", pad) + `"}`)
	if len(atLimit) != MaxFileSize {
		t.Fatalf("test input is %d bytes", len(atLimit))
	}
	if _, err := ParseFile(atLimit); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestEncodeRules(t *testing.T) {
	s := exampleB()
	s.Session.Decisions = nil
	s.Session.FilesTouched = nil
	s.Lineage.Items[0].CompressionRatio = 1
	s.Ledger.Items[0].Phi = ptr(math.NaN()) // Option<f64>: serde_json writes null, as for None
	*s.Session.Task = "<b>&\u2028\x1b\"\\/\x7f"
	b, err := s.MarshalCompact()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"decisions":[],"files_touched":[]`,
		`"compression_ratio":1.0,`,
		`"phi":null,`,
		"\"task\":\"<b>&\u2028\\u001b\\\"\\\\/\x7f\"",
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("missing %s in\n%s", want, b)
		}
	}
	back, err := ParseFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if *back.Session.Task != *s.Session.Task || back.Ledger.Items[0].Phi != nil {
		t.Fatalf("round trip: %+v", back.Session)
	}
	id1, _ := s.ComputeID()
	id2, _ := back.ComputeID()
	if id1 != id2 {
		t.Fatal("NaN phi and None phi hash differently")
	}
	for name, edit := range map[string]func(s *Snapshot){
		"rate NaN":          func(s *Snapshot) { s.ROI.CompressionRate = math.NaN() },
		"ratio +Inf":        func(s *Snapshot) { s.Lineage.Items[0].CompressionRatio = math.Inf(1) },
		"invalid utf-8":     func(s *Snapshot) { s.CreatedAt = "\xff" },
		"invalid utf-8 vec": func(s *Snapshot) { s.Session.Decisions = []string{"ok", "\xc3"} },
		"invalid utf-8 sig": func(s *Snapshot) { s.Signature = &Signature{Value: "\x80"} },
	} {
		s := exampleB()
		edit(s)
		if _, err := s.MarshalCompact(); !errors.Is(err, ErrUnencodable) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := s.ComputeID(); !errors.Is(err, ErrUnencodable) && name != "invalid utf-8 sig" {
			t.Errorf("%s: ComputeID %v", name, err)
		}
	}
	if _, err := (TimelineEntry{CreatedAt: "\xff"}).MarshalLine(); !errors.Is(err, ErrUnencodable) {
		t.Errorf("timeline entry: %v", err)
	}
}

func TestFinalize(t *testing.T) {
	s := exampleA()
	if err := s.CheckStorable(); !errors.Is(err, ErrNotFinalized) || err.Error() != "snapshot id is empty — finalize or sign before storing" {
		t.Fatalf("%v", err)
	}
	if err := s.Finalize(); err != nil {
		t.Fatal(err)
	}
	if s.SnapshotID != "d0334b6e0e0da614163cfe623ffb6e4534e2086432263c498a40bbd33fd70f30" || s.Signature != nil {
		t.Fatalf("%+v", s)
	}
	if err := s.CheckStorable(); err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyIntegrity(); err != nil {
		t.Fatal(err)
	}
	s.CreatedAt = "2026-01-01T00:00:00.000Z"
	if err := s.VerifyIntegrity(); err != ErrIntegrity {
		t.Fatal(err)
	}
}
