package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseEnvelope: no panic; a valid envelope re-encodes to a line that
// both parsers accept and that decodes to the same value; whatever the
// strict parser accepts, the lenient one accepts identically.
func FuzzParseEnvelope(f *testing.F) {
	golden, _ := os.ReadFile("testdata/envelope_v1.golden")
	f.Add(golden)
	f.Add([]byte(`{"SCHEMA_VERSION":1,"kind":null,"files":[{}],"x":[1,{"y":2}]}`))
	f.Add([]byte(`{"files":[{"path":"a","size":1e3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, serr := ParseEnvelopeStrict(data)
		e, err := ParseEnvelope(data)
		if serr == nil && (err != nil || !reflect.DeepEqual(strict, e)) {
			t.Fatalf("strict accepted what lenient did not: %v", err)
		}
		if err != nil || e.Validate() != nil {
			return
		}
		line, err := e.MarshalLine()
		if err != nil {
			if errors.Is(err, ErrMetadataTooLarge) {
				return
			}
			t.Fatal(err)
		}
		back, err := ParseEnvelopeStrict(line)
		if err != nil {
			t.Fatalf("own line refused: %v\n%s", err, line)
		}
		if !reflect.DeepEqual(back, e) {
			t.Fatalf("round trip changed the envelope:\n%+v\n%+v", e, back)
		}
		again, _ := back.MarshalLine()
		if !bytes.Equal(again, line) {
			t.Fatal("encoding not stable")
		}
	})
}

// FuzzParseManifest: no panic; an accepted manifest re-encodes, re-parses
// to the same value and encodes identically again.
func FuzzParseManifest(f *testing.F) {
	for _, g := range []string{"testdata/manifest_v1.golden", "testdata/manifest_v1_empty.golden"} {
		b, _ := os.ReadFile(g)
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version":1,"sessions":null,"Revision":"x","sessions":{"a":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		strict, serr := ParseManifestStrict(data)
		m, err := ParseManifest(data)
		if serr == nil && (err != nil || !reflect.DeepEqual(strict, m)) {
			t.Fatalf("strict accepted what lenient did not: %v", err)
		}
		if err != nil {
			return
		}
		b, err := m.Marshal()
		if err != nil {
			return // over the limit after escaping
		}
		back, err := ParseManifest(b)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip: %v", err)
		}
		b2, _ := back.Marshal()
		if !bytes.Equal(b, b2) {
			t.Fatal("encoding not stable")
		}
		if m.Validate() == nil {
			if _, err := ParseManifestStrict(b); err != nil {
				t.Fatalf("valid manifest's encoding refused by the strict parser: %v", err)
			}
		}
	})
}

// FuzzReadTAR: no panic; an archive read to io.EOF has a safe name equal
// to the wanted one and delivered exactly Size bytes.
// fuzz-smoke: 150x
func FuzzReadTAR(f *testing.F) {
	f.Add(mustTAR(f, "projects/k/a.jsonl", []byte("{}\n")), "projects/k/a.jsonl")
	f.Add(mustTAR(f, "projects/é/a.jsonl", jsonl(700)), "")
	f.Add(mustTAR(f, "sessions/"+strings.Repeat("d", 200)+"/x.jsonl", nil), "")
	f.Add(append(mustTAR(f, "a.jsonl", []byte("x")), mustTAR(f, "b.jsonl", []byte("y"))...), "a.jsonl")
	f.Fuzz(func(t *testing.T, data []byte, want string) {
		e, err := ReadTAR(bytes.NewReader(data), want)
		if err != nil {
			return
		}
		out, err := io.ReadAll(io.LimitReader(e, 1<<20))
		if err != nil || int64(len(out)) == 1<<20 {
			return
		}
		if int64(len(out)) != e.Size {
			t.Fatalf("delivered %d of %d", len(out), e.Size)
		}
		if CheckSafePath(e.Name) != nil || (want != "" && e.Name != want) {
			t.Fatalf("accepted name %q", e.Name)
		}
		if n, err := e.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatal("not at EOF after EOF")
		}
	})
}

// FuzzReadSnapshot: no panic; a payload read to io.EOF has exactly the
// declared size and hash.
func FuzzReadSnapshot(f *testing.F) {
	tb := mustTAR(f, testPath, jsonl(100))
	good := plaintext(f, testEnvelope(testPath, tb), tb)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(good[:len(good):len(good)], 0))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, payload, err := ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			if e != nil || payload != nil {
				t.Fatal("returned values with an error")
			}
			return
		}
		out, err := io.ReadAll(payload)
		if err != nil {
			return
		}
		if int64(len(out)) != e.Files[0].Size || !strings.EqualFold(sha256hex(out), e.Files[0].SHA256) {
			t.Fatal("unverified payload reached io.EOF")
		}
		if e.Validate() != nil {
			t.Fatal("invalid envelope returned")
		}
	})
}

// FuzzNormalizeLine: no panic; non-JSON comes back unchanged; JSON stays
// valid and differs from the input exactly in the allow-listed path
// values; an identity rewrite is byte-exact.
func FuzzNormalizeLine(f *testing.F) {
	f.Add([]byte(`{"cwd":"/home/alice/code/demo/x","n":12345678901234567890,"f":1.0,"a":[{"file":"/home/alice"}]}` + "\r\n"))
	f.Add([]byte(`{"path":"\/home\/alice","path":"${HOME}","c\u0077d":"C:\\Users\\Alice","x":"\ud800"}`))
	f.Add([]byte("not json /home/alice\n"))
	f.Add([]byte(`[[[{"workdir":"/srv/scratch/../scratch/y"}]]]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		same, err := RewriteLine(line, func(k, v string) (string, bool) { return v, true })
		if err != nil || !bytes.Equal(same, line) {
			t.Fatal("identity rewrite changed bytes")
		}
		for _, agent := range []string{AgentClaude, AgentCodex} {
			out, err := NormalizeLine(agent, posixMap, line)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(line) {
				if !bytes.Equal(out, line) {
					t.Fatal("non-JSON line changed")
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("output is not JSON: %q", out)
			}
			var a, b any
			decodeNumbers(line, &a)
			decodeNumbers(out, &b)
			if !sameExceptPaths(agent, a, b, "") {
				t.Fatalf("%s: unexpected change:\n%q\n%q", agent, line, out)
			}
			exp, err := ExpandLine(agent, posixMap, out)
			if err != nil || !json.Valid(exp) {
				t.Fatal("expand", err)
			}
		}
	})
}

func decodeNumbers(b []byte, v *any) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.Decode(v)
}

// sameExceptPaths compares decoded input a with decoded output b: equal,
// except that a string under an allow-listed key that looks like a path may
// have been normalised (strings holding U+FFFD may also be left as they
// were, since they may come from bytes that do not decode losslessly).
func sameExceptPaths(agent string, a, b any, key string) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			if !sameExceptPaths(agent, x, bv[k], k) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !sameExceptPaths(agent, av[i], bv[i], "") {
				return false
			}
		}
		return true
	case string:
		bv, ok := b.(string)
		if !ok {
			return false
		}
		if key != "" && IsPathKey(agent, key) && LooksLikePath(agent, av) {
			return bv == posixMap.NormalizePath(av) || (strings.ContainsRune(av, utf8.RuneError) && bv == av)
		}
		return av == bv
	default:
		return reflect.DeepEqual(a, b)
	}
}

// rtMap is posixMap without a symlink-resolved root (a path found through
// Resolved expands to the configured Path, by design).
var rtMap = &PathMap{Home: posixMap.Home, Projects: posixMap.Projects[:2], Work: posixMap.Work}

// FuzzPathRoundTrip: normalise then expand with the same map gives the
// cleaned path back, for values and for whole lines.
// fuzz-smoke: 10000x
func FuzzPathRoundTrip(f *testing.F) {
	for _, s := range []string{"home/alice/code/demo/src/a.go", "home/alice", "etc//x/../y", "srv/scratch", "data/real/${HOME}/x", "home/alice/code/demo/vendor/app"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := "/" + s
		if got := rtMap.ExpandPath(rtMap.NormalizePath(v)); got != path.Clean(v) {
			t.Fatalf("posix %q → %q → %q", v, rtMap.NormalizePath(v), got)
		}
		w := `C:\` + s
		if got := winMap.ExpandPath(winMap.NormalizePath(w)); !strings.EqualFold(got, winClean(w)) {
			t.Fatalf("windows %q → %q → %q", w, winMap.NormalizePath(w), got)
		}
		enc, _ := json.Marshal(map[string]string{"cwd": v})
		var sent map[string]string // what the line holds (json.Marshal fixes invalid UTF-8)
		json.Unmarshal(enc, &sent)
		for _, agent := range []string{AgentClaude, AgentCodex} {
			n, _ := NormalizeLine(agent, rtMap, enc)
			back, _ := ExpandLine(agent, rtMap, n)
			var m map[string]string
			if err := json.Unmarshal(back, &m); err != nil {
				t.Fatal(err)
			}
			want := sent["cwd"]
			if LooksLikePath(agent, want) {
				want = path.Clean(want)
			}
			if m["cwd"] != want {
				t.Fatalf("%s line round trip %q → %q", agent, v, m["cwd"])
			}
		}
	})
}

// FuzzDecrypt: no panic, and every failure is one of the documented
// sentinels (bytes.Reader never fails, so no source errors).
func FuzzDecrypt(f *testing.F) {
	var b bytes.Buffer
	w, err := Encrypt(&b, testPass, 1, AllowWeak()) // logN 1: fuzzing instrumentation makes scrypt slow
	if err != nil {
		f.Fatal(err)
	}
	w.Write(jsonl(200)) // small: the fuzzer minimises whole inputs
	w.Close()
	ct := b.Bytes()
	f.Add(ct)
	f.Add(ct[:len(ct)-5])
	f.Add(ct[:firstChunk(ct)])
	f.Add([]byte("age-encryption.org/v1\n-> scrypt AAAAAAAAAAAAAAAAAAAAAA 23\nAAAA\n--- AAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, logN, err := readAgeHeader(bufio.NewReader(bytes.NewReader(data))); err == nil && logN > 2 {
			return // keep scrypt cheap
		}
		_, err := decryptAll(data, testPass)
		if err == nil {
			return
		}
		for _, s := range []error{ErrWrongPassphrase, ErrNotPassphraseEncrypted, ErrTruncated, ErrTampered, ErrMalformedCiphertext, ErrWorkFactorTooHigh} {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("unmapped error: %v", err)
	})
}
