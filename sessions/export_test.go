package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/sessions/agents"
)

// TestExportMatchesWriteTAR: the one-pass export (normalised straight into
// the TAR behind a reserved header) produces byte for byte session.WriteTAR
// of the normalised session, with its size and SHA-256, the raw file's
// SHA-256, and no temporary file besides the TAR it returns.
func TestExportMatchesWriteTAR(t *testing.T) {
	dir := t.TempDir()
	wt := filepath.Join(dir, "work")
	c := &Client{ProjectID: "proj", WorkTree: wt, Home: filepath.Join(dir, "home"), StateDir: filepath.Join(dir, "state")}
	var raw strings.Builder
	for i := 0; i < 3000; i++ {
		raw.WriteString(`{"type":"user","cwd":"` + wt + `","message":{"content":[{"input":{"file_path":"` + wt + `/a.go"}}]},"n":` + strings.Repeat("7", i%40+1) + "}\n")
		if i%500 == 0 {
			raw.WriteString("not json " + wt + "\r\n")
		}
	}
	raw.WriteString(`{"cwd":"` + wt + `"}`) // no final newline
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, []byte(raw.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s := agents.Session{Agent: session.AgentClaude, ID: "s", Path: p, Rel: "projects/-work/s.jsonl"}
	tf, size, sum, localHash, err := c.export(s)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { tf.Close(); os.Remove(tf.Name()) }()
	got, err := io.ReadAll(tf)
	if err != nil {
		t.Fatal(err)
	}
	var norm bytes.Buffer
	if err := session.TransformRecords(&norm, strings.NewReader(raw.String()), func(r []byte) ([]byte, error) {
		return session.NormalizeLine(s.Agent, c.pathMap(), r)
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(norm.String(), "${REPO:proj}/a.go") {
		t.Fatal("nothing was normalised")
	}
	var want bytes.Buffer
	if err := session.WriteTAR(&want, s.Rel, bytes.NewReader(norm.Bytes()), int64(norm.Len()), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || size != int64(want.Len()) || sum != sha256Hex(want.Bytes()) {
		t.Fatalf("export: %d bytes (size %d), want WriteTAR's %d", len(got), size, want.Len())
	}
	if localHash != sha256Hex([]byte(raw.String())) {
		t.Fatal("raw hash")
	}
	left, _ := filepath.Glob(filepath.Join(c.StateDir, "tmp", "*"))
	if len(left) != 1 || left[0] != tf.Name() {
		t.Fatalf("temporary files: %v", left)
	}
}

// TestReheader: when the final header is longer than the one reserved (a
// body of 8 GiB or more takes a PAX size record), the body and trailer move
// behind the new header and the old file goes.
func TestReheader(t *testing.T) {
	dir := t.TempDir()
	old, err := os.CreateTemp(dir, "export-*.tar")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("b"), 700)
	trailer := session.TARTrailer(int64(len(body)))
	old.Write(append(append([]byte("RESERVED"), body...), trailer...))
	nf, err := (&Client{}).reheader(old, []byte("LONGER-HEADER"), 8, int64(len(body)), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer nf.Close()
	nf.Seek(0, io.SeekStart)
	got, _ := io.ReadAll(nf)
	if want := append(append([]byte("LONGER-HEADER"), body...), trailer...); !bytes.Equal(got, want) {
		t.Fatalf("%q", got)
	}
	if _, err := os.Stat(old.Name()); !os.IsNotExist(err) {
		t.Fatal("old file left behind")
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
