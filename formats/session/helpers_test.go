package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testWF is the scrypt work factor of tests (2^10: 1 MiB, milliseconds).
const testWF = 10

var testPass = []byte("correct horse battery staple")

func sha256hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// jsonl returns n bytes of JSONL records.
func jsonl(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString(`{"type":"user","cwd":"/home/alice/code/demo","n":12345678901234567890,"i":`)
		b.WriteString(strings.Repeat("7", i%13+1))
		b.WriteString("}\n")
	}
	return b.Bytes()[:n]
}

func mustTAR(t testing.TB, name string, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTAR(&b, name, bytes.NewReader(body), int64(len(body)), StableModTime); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testEnvelope(path string, tarBytes []byte) Envelope {
	return Envelope{
		SchemaVersion:  1,
		Kind:           Kind,
		SnapshotID:     "11111111-2222-4333-8444-555555555555",
		Agent:          AgentClaude,
		AdapterSchema:  1,
		SourcePlatform: "linux-amd64",
		ProjectID:      "local/demo",
		SessionID:      "abc",
		CreatedAt:      "2026-07-29T10:00:00Z",
		Files:          []FileDescriptor{NewFileDescriptor(path, int64(len(tarBytes)), sha256hex(tarBytes))},
	}
}

// plaintext frames env and payload exactly as WriteSnapshot would, without
// its checks (so tests can build hostile objects).
func plaintext(t testing.TB, env Envelope, payload []byte) []byte {
	t.Helper()
	line, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(append(line, '\n'), payload...)
}

func encrypt(t testing.TB, plain []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := Encrypt(&b, testPass, testWF, AllowWeak())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// restore is the caller contract from the package comment: decrypt, read
// the snapshot, check the TAR, stream the entry into a temp file, and rename
// it to dir/out only after a clean io.EOF. It returns the envelope.
func restore(dir string, ciphertext []byte, pass []byte) (*Envelope, error) {
	plain, err := Decrypt(bytes.NewReader(ciphertext), pass)
	if err != nil {
		return nil, err
	}
	env, payload, err := ReadSnapshot(plain)
	if err != nil {
		return nil, err
	}
	entry, err := ReadTAR(payload, env.Files[0].Path)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".restore-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, entry); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return env, os.Rename(tmp.Name(), filepath.Join(dir, "out"))
}

// assertNothingCommitted checks that restore left no file behind.
func assertNothingCommitted(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// countingSource yields b forever and counts what it gave.
type countingSource struct {
	b byte
	n int64
}

func (c *countingSource) Read(p []byte) (int, error) {
	if len(p) > 0 {
		p[0] = c.b
		for filled := 1; filled < len(p); filled *= 2 {
			copy(p[filled:], p[:filled])
		}
	}
	c.n += int64(len(p))
	return len(p), nil
}

// wantNilOr fails t unless err is nil when want is, and matches want
// (wantErr) when it is not.
func wantNilOr(t *testing.T, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	wantErr(t, err, want)
}

func wantErr(t *testing.T, err error, targets ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", targets)
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Fatalf("error %q is not %q", err, target)
		}
	}
}
