package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPayloadPassRoundTrip: the payload floor's two passes are a real
// encryption and its decryption (the floor is not an empty loop).
func TestPayloadPassRoundTrip(t *testing.T) {
	dir := t.TempDir()
	plain := make([]byte, 300<<10) // several 64 KiB chunks and a short last one
	rand.Read(plain)
	in, enc, out := filepath.Join(dir, "in"), filepath.Join(dir, "in.age"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, plain, 0o600); err != nil {
		t.Fatal(err)
	}
	payloadPass(in, enc, "", false)
	payloadPass(enc, out, "", true)
	c, err := os.ReadFile(enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) <= len(plain) || bytes.Contains(c, plain[:64]) {
		t.Fatalf("ciphertext of %d bytes for %d bytes of plaintext, or the plaintext in it", len(c), len(plain))
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Fatal("the decrypting pass did not give back the plaintext")
	}
}

// TestPayloadPassRewritesPaths: with a root, the floor's passes run the
// session's path rewrite: the encrypted session holds the project's token,
// not its path, and the decrypting pass gives the original back.
func TestPayloadPassRewritesPaths(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	line := `{"type":"user","cwd":"` + root + `","message":{"content":[{"type":"tool_use","input":{"file_path":"` + root + `/a.go"}}]}}` + "\n"
	in, enc, out := filepath.Join(dir, "in"), filepath.Join(dir, "in.age"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, []byte(strings.Repeat(line, 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	payloadPass(in, enc, root, false)
	mid := filepath.Join(dir, "mid")
	payloadPass(enc, mid, "", true) // decrypted, not expanded
	m, err := os.ReadFile(mid)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(m, []byte(root)) || !bytes.Contains(m, []byte("${REPO:bench}/a.go")) {
		t.Fatalf("the encrypting pass did not normalise the paths: %.200s", m)
	}
	payloadPass(enc, out, root, true)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.Repeat(line, 100) {
		t.Fatalf("the decrypting pass did not expand the paths back: %.200s", got)
	}
}
