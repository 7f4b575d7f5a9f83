package checkpoint

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// checkSameAsGeneric fails t unless Parse and Canonical agree with their
// reference implementations (parseGeneric, canonicalGeneric) on data: the
// same error text or none, the same record, and the same canonical bytes
// (or the same error) under both rules.
func checkSameAsGeneric(t *testing.T, data []byte) {
	t.Helper()
	got, err := Parse(data)
	want, wantErr := parseGeneric(data)
	if len(data) > MaxFileSize {
		want, wantErr = nil, err // the size limit is checked before either
	}
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("Parse(%q): error %v, reference %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse(%q):\n got %#v\nwant %#v", data, got, want)
	}
	for _, r := range []Rule{RuleSeedV1, RuleGhyllV2, Rule("other")} {
		c, err := got.Canonical(r)
		wc, wErr := want.canonicalGeneric(r)
		if (err == nil) != (wErr == nil) || err != nil && err.Error() != wErr.Error() || !bytes.Equal(c, wc) {
			t.Fatalf("Canonical(%s) of %q:\n got %s (%v)\nwant %s (%v)", r, data, c, err, wc, wErr)
		}
	}
}

// FuzzParseDifferential: the one-pass parser and the direct canonical
// encoding agree with the encoding/json reference on every input.
// fuzz-smoke: 2000x
func FuzzParseDifferential(f *testing.F) {
	for _, in := range differentialInputs(f) {
		f.Add(in)
	}
	f.Fuzz(checkSameAsGeneric)
}

// TestParseDifferential runs the tricky inputs through the differential
// check, and checks that the common shape really takes the one-pass path.
func TestParseDifferential(t *testing.T) {
	for _, in := range differentialInputs(t) {
		checkSameAsGeneric(t, in)
	}
	file, _ := benchRecord(t)
	if _, ok := fastParse(file); !ok {
		t.Fatalf("a sealed record does not take the one-pass path:\n%s", file)
	}
}

// TestCanonicalDifferential: records built in code (strings with invalid
// UTF-8, HTML characters, separators, control bytes; floats at the format
// cut-offs) encode as the reference encodes them.
func TestCanonicalDifferential(t *testing.T) {
	strs := []string{"", "plain", "<a&b>", "\u2028\u2029", "\x00\x01\x1f\x7f", "\b\f\n\r\t\"\\/",
		"bad\xffutf8\xc3", "\xed\xa0\x80", "é中😀", strings.Repeat("x", 70000)}
	floats := []float32{0, float32(negZero()), 1, -1, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, -1e21, 1e-45,
		3.4028235e38, 0.1, 100, 1.5e-10, 123456789}
	for i, s := range strs {
		cp := &Checkpoint{Version: i, Timestamp: -1 << 63, Turn: 1<<63 - 1, DeviceID: s, AuthorID: s,
			Summary: s, Branch: s, RepoRemote: s, SessionID: s, ActiveModel: s, ParentHash: s,
			FilesTouched: []string{s, s}, ToolsUsed: []string{}, Embedding: floats,
			PlanMode: i%2 == 0, InjectionSig: []string{s}}
		if i%3 == 0 {
			cp.ResumedFrom = &ResumedFrom{Session: s, Hash: s}
			cp.ToolsUsed = nil
			cp.Embedding = []float32{}
		}
		for _, r := range []Rule{RuleSeedV1, RuleGhyllV2} {
			c, err := cp.Canonical(r)
			wc, wErr := cp.canonicalGeneric(r)
			if err != nil || wErr != nil || !bytes.Equal(c, wc) {
				t.Fatalf("Canonical(%s) of %q:\n got %s (%v)\nwant %s (%v)", r, s, c, err, wc, wErr)
			}
		}
	}
	cp := &Checkpoint{Embedding: []float32{float32(nan())}}
	_, err := cp.Canonical(RuleSeedV1)
	_, wErr := cp.canonicalGeneric(RuleSeedV1)
	if err == nil || wErr == nil || err.Error() != wErr.Error() {
		t.Fatalf("NaN: %v, reference %v", err, wErr)
	}
}

func negZero() float64 { z := 0.0; return -z }

// differentialInputs are the seeds of FuzzParseDifferential: the shared
// vectors, sealed records under both rules, and hand-written edge cases.
func differentialInputs(t testing.TB) [][]byte {
	var out [][]byte
	for _, v := range loadVectors(t) {
		for _, b := range [][]byte{v.RecordJSON, v.Input} {
			if b != nil {
				out = append(out, b)
			}
		}
		if v.File != nil {
			out = append(out, []byte(*v.File))
		}
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	for _, r := range []Rule{RuleSeedV1, RuleGhyllV2} {
		cp := &Checkpoint{ParentHash: ZeroHash, DeviceID: "d1", AuthorID: "a <x&y>", Timestamp: 1712345678123456789,
			Summary: "line\nnext \"q\" \\ é \u2028", FilesTouched: []string{"a.go"}, ToolsUsed: []string{},
			Embedding: []float32{0.5, -1e-7, 3e21}, ResumedFrom: &ResumedFrom{Session: "s", Hash: ZeroHash},
			PlanMode: true, InjectionSig: []string{"i"}}
		if err := cp.SealRule(priv, r); err != nil {
			t.Fatal(err)
		}
		file, _ := cp.MarshalFile()
		compact, _ := cp.MarshalCompact()
		out = append(out, file, compact)
	}
	const base = `"v":1,"hash":"h","parent":"p","device":"d","ts":5`
	cases := []string{
		`{}`, ` {} `, `{`, `}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{}x`, `{} {}`, `{},`,
		`{` + base + `}`,
		`{` + base + `}` + "\n\t\r ",
		`{` + base + `,"v":2}`,                // duplicate
		`{` + base + `,"V":2}`,                // case-folded duplicate
		`{"pArent":"p"}`,                      // case-folded known key
		`{` + base + `,"future":{"x":[1,2]}}`, // unknown member
		`{` + base + `,"future":"<&>\u2028"}`, // unknown member needing HTML escapes
		`{"v":1,"hash":"h","sig":"s","zz":1,"a":{}}`,
		`{"\u0076":1}`, `{"v\u0000":1}`, `{"v` + "\xff" + `":1}`, `{"\ud800":1}`,
		`{"summary":"\u00e9\u2028\ud83d\ude00\ud800x\udc00"}`, // \u escapes, pairs, lone surrogates
		`{"summary":"a\/b\"c\\d\be\ff\ng\rh\ti"}`,
		`{"summary":"bad` + "\xff\xfe" + `utf8"}`, `{"summary":"` + "\xed\xa0\x80" + `"}`,
		`{"summary":"é中😀` + "\x7f" + `"}`, `{"summary":"tab` + "\t" + `raw"}`, `{"summary":"a\x"}`,
		`{"summary":"unterminated}`, `{"summary":"a\`, `{"summary":null}`, `{"summary":1}`,
		`{"v":1e2}`, `{"v":-0}`, `{"v":1.0}`, `{"v":01}`, `{"v":-}`, `{"v":+1}`, `{"v":1.}`, `{"v":.5}`,
		`{"v":1E+2}`, `{"v":null}`, `{"v":"1"}`, `{"v":true}`,
		`{"ts":9223372036854775807}`, `{"ts":9223372036854775808}`, `{"ts":-9223372036854775808}`,
		`{"ts":-9223372036854775809}`, `{"ts":99999999999999999999999}`, `{"turn":-0}`,
		`{"emb":[1e2,-0,1.0,0.1,1e-7,3.4028235e38,3.5e38,1e-50,-1E+5]}`, `{"emb":[]}`, `{"emb":null}`,
		`{"emb":[null]}`, `{"emb":[1,]}`, `{"emb":[,1]}`, `{"emb":["1"]}`, `{"emb":[1 2]}`, `{"emb":{}}`,
		`{"files":[]}`, `{"files":null}`, `{"files":["a",null]}`, `{"files":[ "a" , "b" ]}`, `{"files":"a"}`,
		`{"tools":[1]}`, `{"injections":[]}`, `{"injections":["x"]}`,
		`{"plan_mode":true}`, `{"plan_mode":false}`, `{"plan_mode":null}`, `{"plan_mode":1}`, `{"plan_mode":tru}`,
		`{"resumed_from":null}`, `{"resumed_from":{}}`, `{"resumed_from":{"session":"s","hash":"h"}}`,
		`{"resumed_from":{"Session":"s"}}`, `{"resumed_from":{"session":"a","session":"b"}}`,
		`{"resumed_from":{"x":1,"hash":"h"}}`, `{"resumed_from":[]}`, `{"resumed_from":{"hash":null}}`,
		`{"v":1 , "hash" : "h" }`, `{"v":1,}`, `{,"v":1}`, `{"v" 1}`, `{"v":1 "hash":"h"}`,
		`{"hash":"` + strings.Repeat("a", 1<<20) + `"}`, // over MaxFileSize
		`{"summary":"` + strings.Repeat("\\n", 200000) + `"}`,
		strings.Repeat(`{"future":`, 10000) + `1` + strings.Repeat(`}`, 10000), // deep nesting
		`{"emb":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
	}
	for _, c := range cases {
		out = append(out, []byte(c))
	}
	return out
}

// checkChainLineSameAsGeneric fails t unless ParseChainLine agrees with
// parseChainLineGeneric on line: same entry, same error text or none.
func checkChainLineSameAsGeneric(t *testing.T, line []byte) {
	t.Helper()
	got, err := ParseChainLine(line)
	trimmed := bytes.TrimSuffix(line, []byte("\n"))
	if len(trimmed) > MaxChainLine {
		return // refused by length before either decoder runs
	}
	want, wantErr := parseChainLineGeneric(trimmed)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() ||
		err == nil && got != want {
		t.Fatalf("ParseChainLine(%q): %+v, %v; reference %+v, %v", line, got, err, want, wantErr)
	}
}

// FuzzChainLineDifferential: the fixed-form chain line decoder agrees with
// the encoding/json reference on every input.
// fuzz-smoke: 2000x
func FuzzChainLineDifferential(f *testing.F) {
	for _, l := range chainLineInputs() {
		f.Add(l)
	}
	f.Fuzz(checkChainLineSameAsGeneric)
}

// TestChainLineDifferential runs the tricky lines through the differential
// check and checks that a canonical line takes the fixed-form path.
func TestChainLineDifferential(t *testing.T) {
	for _, l := range chainLineInputs() {
		checkChainLineSameAsGeneric(t, l)
	}
	line := ChainEntry{Hash: ZeroHash, Parent: ZeroHash, TS: -5}.MarshalLine()
	if _, ok := fastChainLine(bytes.TrimSuffix(line, []byte("\n"))); !ok {
		t.Fatalf("canonical line %q does not take the fixed-form path", line)
	}
}

func chainLineInputs() [][]byte {
	h := "cadfdb7594b1ad5ab315fdb5c912328cdf4262a329cd8e74bef4ea83b37204aa"
	line := func(hash, parent, ts string) []byte {
		return []byte(`{"hash":"` + hash + `","parent":"` + parent + `","ts":` + ts + "}\n")
	}
	out := [][]byte{
		line(h, ZeroHash, "1712345678123456789"), line(h, h, "0"), line(h, h, "-0"), line(h, h, "-1"),
		line(h, h, "01"), line(h, h, "1e3"), line(h, h, "1.0"), line(h, h, "9223372036854775807"),
		line(h, h, "9223372036854775808"), line(h, h, "-9223372036854775808"), line(h, h, "-9223372036854775809"),
		line(h, h, ""), line(h, h, "-"), line(h, h, `"1"`), line(h, h, "1 "), line(h, h, "null"),
		line(strings.ToUpper(h), h, "1"), line(h[:63]+"g", h, "1"), line(h[:63], h, "1"), line(h+"0", h, "1"),
		line(h, `\u0030`+h[6:], "1"), line(h, h, "1")[:10],
		[]byte(`{"parent":"` + h + `","hash":"` + h + `","ts":1}`), []byte(`{"hash":"` + h + `","parent":"` + h + `","ts":1,"ts":1}`),
		[]byte(`{"hash":"` + h + `","parent":"` + h + `","ts":1} `), []byte(` {"hash":"` + h + `","parent":"` + h + `","ts":1}`),
		[]byte(`{"hash":"` + h + `","parent":"` + h + `","ts":1}` + "\n\n"), []byte(""), []byte("\n"), []byte("{}"),
		[]byte(`{"hash":"` + h + `","parent":"` + h + `","ts":1` + strings.Repeat(" ", 600) + `}`),
	}
	return out
}

// TestDecodeLowerHexSameAsHex: decodeLowerHex accepts exactly what
// VerifySignature's old check accepted (hex.DecodeString to n bytes whose
// hex.EncodeToString is the input again), with the same bytes.
func TestDecodeLowerHexSameAsHex(t *testing.T) {
	inputs := []string{"", "0", "00", "0g", "ab", "AB", "aB", "zz", "0a1b2c3d4e5f6789", "0A1b2c3d4e5f6789",
		"0a1b2c3d4e5f678", " 0a1b2c3d4e5f678", "0a1b2c3d4e5f67\x00", "\xff\xfe", "0a1b2c3d4e5f6789ff"}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string([]byte{byte(c), 'a'}), string([]byte{'0', byte(c)}))
	}
	for _, s := range inputs {
		for _, n := range []int{0, 1, 8, 9} {
			checkDecodeLowerHex(t, s, n)
		}
	}
}

// checkDecodeLowerHex fails t unless decodeLowerHex of s into n bytes
// accepts what the old check accepted, with the same bytes.
func checkDecodeLowerHex(t *testing.T, s string, n int) {
	t.Helper()
	old, err := hex.DecodeString(s)
	want := err == nil && len(old) == n && hex.EncodeToString(old) == s
	got := make([]byte, n)
	ok := decodeLowerHex(got, s)
	if ok != want || ok && !bytes.Equal(got, old) {
		t.Fatalf("decodeLowerHex(%d, %q) = %v %x, hex %v %x", n, s, ok, got, want, old)
	}
}

// FuzzDecodeLowerHex compares decodeLowerHex with the hex package's check.
func FuzzDecodeLowerHex(f *testing.F) {
	f.Add("0a1b", 2)
	f.Add("0A1b", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 128 {
			return
		}
		checkDecodeLowerHex(t, s, n)
	})
}
