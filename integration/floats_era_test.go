package integration

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	snapfmt "github.com/git-ctx/git-ctx/formats/snapshot"
)

// floatsLegacySnapshot is a snapshot file as a lean-ctx built with
// serde_json before zmij writes it: roi.compression_rate 1e16 written
// "1e16" (zmij: "1e+16"), the id the BLAKE3 of that rendering, signed by
// priv when it is not nil. It returns the file and the id.
func floatsLegacySnapshot(t *testing.T, priv ed25519.PrivateKey) ([]byte, string) {
	t.Helper()
	s := snapfmt.New("2026-03-01T10:00:00Z", "3.1.0")
	s.ROI = snapfmt.ROI{InputTokens: 10, OutputTokens: 2, TokensSaved: 8, CompressionRate: 1e16}
	body, err := s.CanonicalBody()
	if err != nil {
		t.Fatal(err)
	}
	legacy := bytes.Replace(body, []byte(`"compression_rate":1e+16`), []byte(`"compression_rate":1e16`), 1)
	if bytes.Equal(legacy, body) {
		t.Fatalf("no 1e+16 in %s", body)
	}
	s.SnapshotID = snapfmt.Blake3Hex(legacy)
	if priv != nil {
		s.Signature = &snapfmt.Signature{
			Algorithm: snapfmt.SignatureAlgorithm,
			PublicKey: hex.EncodeToString(priv.Public().(ed25519.PublicKey)),
			Value:     hex.EncodeToString(ed25519.Sign(priv, []byte(snapfmt.SigningMessage(s.SnapshotID)))),
		}
	}
	file, err := s.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(file, []byte(`"compression_rate": 1e+16`), []byte(`"compression_rate": 1e16`), 1), s.SnapshotID
}

// TestSnapshotFloatEras: snapshot files from a lean-ctx whose serde_json
// predates zmij (a positive exponent written 1e16) import, signed and
// unsigned (the id is kept when git-ctx signs it), verify on the branch,
// push and merge on a clone's pull; the same file with a changed value is
// refused.
func TestSnapshotFloatEras(t *testing.T) {
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")

	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x5a}, 32))
	signed, signedID := floatsLegacySnapshot(t, priv)
	unsigned, unsignedID := floatsLegacySnapshot(t, nil)
	if signedID != unsignedID {
		t.Fatal("the signature changed the id")
	}
	// Two files with one id: the unsigned one is imported first, signed
	// by A with the id kept; the signed file is then the same snapshot.
	file := filepath.Join(s.root, "legacy-unsigned.json")
	writeFile(t, file, string(unsigned))
	out := a.must(t, "snapshot", "import", file)
	if !strings.Contains(out, "imported snapshot "+unsignedID[:12]) {
		t.Fatalf("import of the unsigned legacy file:\n%s", out)
	}
	file = filepath.Join(s.root, "legacy-signed.json")
	writeFile(t, file, string(signed))
	if out = a.must(t, "snapshot", "import", file); !strings.Contains(out, "already imported") {
		t.Fatalf("import of the signed legacy file:\n%s", out)
	}
	if out = a.must(t, "snapshot", "verify", unsignedID[:12]); !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("snapshot verify: %q", out)
	}
	a.wantVerifies(t)

	bad := filepath.Join(s.root, "legacy-tampered.json")
	writeFile(t, bad, strings.Replace(string(signed), `"input_tokens": 10`, `"input_tokens": 11`, 1))
	r := a.ctx(t, "snapshot", "import", bad)
	wantCode(t, "import of a changed legacy snapshot", r, 1)
	if !strings.Contains(r.stderr, "integrity check failed") {
		t.Fatalf("import of a changed legacy snapshot: %s", r)
	}

	a.must(t, "push")
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.wantVerifies(t)
	if out := b.must(t, "snapshot", "verify", unsignedID[:12]); !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("snapshot verify on B: %q", out)
	}
}
