package ctxpkg

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// TestGolden pins the exact bytes of a sealed and signed package with every
// v1 layer (testdata/full.ctxpkg) and of its transport envelope signed with
// secret "k" (testdata/full.ctxpkg.envelope.json).
func TestGolden(t *testing.T) {
	file := sealedFile(t, fullPackage(), testKey(9))
	env := NewPackageEnvelope(string(file), time.Date(2026, 1, 1, 0, 0, 0, 123_000_000, time.UTC), nil,
		DaemonFingerprint("3.9.18", "/usr/bin/lean-ctx"), map[string]string{"source_file": "full.ctxpkg", "project_root_hash": "0123456789abcdef"})
	env.Sign([]byte("k"))
	envText, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string][]byte{"testdata/full.ctxpkg": file, "testdata/full.ctxpkg.envelope.json": envText}
	for path, got := range golden {
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\n%s", path, got)
		}
	}
	// The golden files parse, verify and round-trip.
	data, _ := os.ReadFile("testdata/full.ctxpkg.envelope.json")
	e, err := ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := e.VerifyHMAC([]byte("k")); f != HMACLean || err != nil {
		t.Fatal(f, err)
	}
	q, err := ParseFile([]byte(e.PayloadJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckImport(); err != nil {
		t.Fatal(err)
	}
}
