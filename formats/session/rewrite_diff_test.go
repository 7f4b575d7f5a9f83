package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validJSON is the one-pass scanner's verdict alone.
func validJSON(b []byte) bool {
	s := lineScanner{b: b}
	return s.scan()
}

// rewriteCall is one call of a rewrite callback, as the differential tests
// log them.
type rewriteCall struct{ key, value string }

// loggingRewrite returns a callback that logs its calls and rewrites every
// third value it is offered (and, for the rest, returns the value itself
// with changed true, which must not be an edit).
func loggingRewrite(log *[]rewriteCall) func(k, v string) (string, bool) {
	return func(k, v string) (string, bool) {
		*log = append(*log, rewriteCall{k, v})
		switch len(*log) % 3 {
		case 0:
			return v + "\x00\"é/" + k, true
		case 1:
			return v, true
		}
		return "ignored", false
	}
}

// compareWithReference checks the one-pass RewriteLine, NormalizeLine and
// ExpandLine against the reference (json.Valid then a second scan) on line:
// the same validity verdict as json.Valid, the same output bytes, the same
// callback calls in the same order.
func compareWithReference(t *testing.T, line []byte) {
	t.Helper()
	if got, want := validJSON(line), json.Valid(line); got != want {
		t.Fatalf("valid %v, json.Valid %v: %q", got, want, truncateForError(string(line)))
	}
	var gotLog, wantLog []rewriteCall
	got, gerr := RewriteLine(line, loggingRewrite(&gotLog))
	want, werr := refRewriteLine(line, loggingRewrite(&wantLog))
	if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
		t.Fatalf("RewriteLine %q (%v), reference %q (%v)", truncateForError(string(got)), gerr, truncateForError(string(want)), werr)
	}
	if fmt.Sprint(gotLog) != fmt.Sprint(wantLog) {
		t.Fatalf("callback calls %q, reference %q", gotLog, wantLog)
	}
	for _, agent := range []string{AgentClaude, AgentCodex} {
		for _, m := range []*PathMap{posixMap, winMap, nil} {
			ref := func(f func(string) string) func(k, v string) (string, bool) {
				return func(k, v string) (string, bool) {
					if !IsPathKey(agent, k) || !LooksLikePath(agent, v) {
						return "", false
					}
					return f(v), true
				}
			}
			n, _ := NormalizeLine(agent, m, line)
			rn, _ := refRewriteLine(line, ref(m.NormalizePath))
			e, _ := ExpandLine(agent, m, line)
			re, _ := refRewriteLine(line, ref(m.ExpandPath))
			if !bytes.Equal(n, rn) || !bytes.Equal(e, re) {
				t.Fatalf("%s: normalise %q (reference %q), expand %q (reference %q)", agent, n, rn, e, re)
			}
		}
	}
}

// trickyLines are inputs where a validator and a scanner are likely to
// disagree: every JSON token type and its near misses.
func trickyLines() [][]byte {
	lines := []string{
		"", " ", "\n", "\r\n", "\t", "\x00", "\ufeff{}", "{}\x00", "{} ", " {} \r\n", "{}{}", "{},",
		"true", "false", "null", "tru", "truex", "nul", "nulll", "True", "NaN", "Infinity", "-Infinity",
		"0", "-0", "00", "-00", "01", "-", "+1", "1.", ".1", "1.0", "1.e1", "1e", "1e+", "1e-1", "1E+10", "-1.5e-07",
		"0x10", "1_000", "123abc", "1 2", "[1 2]", "[1,]", "[,1]", "[]", "[ ]", "[[]]", "[{}]", "{,}", "{\"a\"}",
		"{\"a\":}", "{\"a\":1,}", "{\"a\" : 1 , \"b\" :2}", "{'a':1}", "{a:1}", "{\"a\":1]", "[1}", "{\"a\":[}",
		`""`, `"\u"`, `"\u12"`, `"\u12G4"`, `"\uD800"`, `"\uD800\u"`, `"\x"`, `"\'"`, `"\/"`, `"a` + "\t" + `b"`,
		"\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"\xc3\"", "\"é\"", `"\\"`, `"\\\""`, `"\"`,
		`{"cwd":"/home/alice","cwd":"/home/alice/code/demo"}`,
		`{"c\u0077d":"\/home\/alice","path":"${HOME}/../x","file":"C:\\Users\\Alice\\x"}`,
		`{"cwd":"\uD83D\uDE00/home/alice","path":"/home/alice\uDE00\uD83D","file":"\uD800\uD800/x"}`,
		`{"a":{"b":[{"cwd":"/home/alice/code/demo/vendor/app/x"},"/home/alice",{"file_path":"/srv/scratch"}]}}`,
		"{\"cwd\":\"/home/alice\"}\n", "{\"cwd\":\"/home/alice\"}\r\n", "{\"cwd\":\"/home/alice\"}\n\n",
		`{"filePath":"/home/alice/a\nb","workdir":"/home/alice/a\nb"}`,
		`{"":"/home/alice","cwd":""}`, `{"cwd":"\u0000/x"}`, `{"cwd":"/x\u2028"}`,
	}
	var out [][]byte
	for _, l := range lines {
		out = append(out, []byte(l))
	}
	for _, d := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		out = append(out,
			[]byte(strings.Repeat("[", d)+strings.Repeat("]", d)),
			[]byte(strings.Repeat(`{"a":`, d-1)+`{"cwd":"/home/alice"}`+strings.Repeat("}", d-1)),
			[]byte(strings.Repeat(`[{"p":`, d/2)+`"/x"`+strings.Repeat("}]", d/2)),
			[]byte(strings.Repeat("[", d)),
		)
	}
	return out
}

// corpusLines reads the checked-in fuzz corpora of the line rewrite.
func corpusLines(t *testing.T) [][]byte {
	var out [][]byte
	for _, dir := range []string{"FuzzNormalizeLine", "FuzzRewriteLineReference"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n")[1:] {
				var v []byte
				if _, err := fmt.Sscanf(strings.TrimPrefix(l, "[]byte("), "%q", &v); err == nil {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// TestRewriteLineMatchesReference: the one-pass scanner decides validity as
// json.Valid does and rewrites exactly as the two-pass reference, on the
// tricky inputs, the fuzz corpora, and every prefix and every single-byte
// change of the valid ones.
func TestRewriteLineMatchesReference(t *testing.T) {
	lines := append(trickyLines(), corpusLines(t)...)
	for _, l := range lines {
		compareWithReference(t, l)
		if !json.Valid(l) || len(l) > 200 {
			continue
		}
		for i := range l {
			compareWithReference(t, l[:i])
			for _, c := range []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', 'e', '-', 'u', 0x1f, 0xff} {
				m := bytes.Clone(l)
				m[i] = c
				compareWithReference(t, m)
			}
		}
	}
}

// TestLineRewriterNoAllocs: a record whose members need no rewrite costs no
// allocation (the two-pass scanner made a string of every key and value).
func TestLineRewriterNoAllocs(t *testing.T) {
	r, err := NewNormalizer(AgentClaude, posixMap)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello \"world\"\n"}]},"uuid":"0b5e2c1a","n":1.5e3,"ok":true,"cwd":42,"filePath":null}` + "\n")
	if n := testing.AllocsPerRun(100, func() {
		if out, err := r.Line(line); err != nil || !bytes.Equal(out, line) {
			t.Fatal(out, err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per record, want 0", n)
	}
}

// FuzzRewriteLineReference compares the one-pass RewriteLine with the
// two-pass reference kept in reference_test.go: validity, output bytes and
// callback calls must agree on every input.
func FuzzRewriteLineReference(f *testing.F) {
	for _, l := range trickyLines() {
		if len(l) < 4096 {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		compareWithReference(t, line)
	})
}

// BenchmarkRewriteRecords measures the export rewrite of a transcript-like
// record (a path to normalise, a nested one, 800 bytes of text), one pass
// against the two-pass reference.
func BenchmarkRewriteRecords(b *testing.B) {
	line := []byte(`{"type":"user","cwd":"/home/alice/code/demo","message":{"content":[{"type":"tool_use","input":{"file_path":"/home/alice/code/demo/a.go"}}]},"text":"` + strings.Repeat("x", 800) + `"}` + "\n")
	keys := pathKeys[AgentClaude]
	b.Run("one-pass", func(b *testing.B) {
		r, _ := NewNormalizer(AgentClaude, posixMap)
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			r.Line(line)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			refRewriteLine(line, func(k, v string) (string, bool) {
				if !keys[k] || !LooksLikePath(AgentClaude, v) {
					return "", false
				}
				return posixMap.NormalizePath(v), true
			})
		}
	})
}
