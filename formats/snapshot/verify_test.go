package snapshot

import (
	"crypto/ed25519"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/dalek"
	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
)

var seedB = strings.Repeat("09", 32)

func signedB(t testing.TB) (*Snapshot, ed25519.PublicKey) {
	t.Helper()
	s := exampleB()
	priv := vectorfile.Key(t, seedB)
	if err := s.Sign(priv); err != nil {
		t.Fatal(err)
	}
	return s, priv.Public().(ed25519.PublicKey)
}

// TestTamperDetected changes every field of example B, one at a time, after
// signing; each change must make Verify report false without an error, in
// memory and after a file round trip.
func TestTamperDetected(t *testing.T) {
	edits := map[string]func(s *Snapshot){
		"schema_version":         func(s *Snapshot) { s.SchemaVersion = 2 },
		"parent_id":              func(s *Snapshot) { *s.ParentID = strings.Repeat("q", 64) },
		"parent_id none":         func(s *Snapshot) { s.ParentID = nil },
		"created_at":             func(s *Snapshot) { s.CreatedAt = "2026-06-28T12:00:00+00:00" },
		"lean_ctx_version":       func(s *Snapshot) { s.LeanCtxVersion = "3.9.1" },
		"git.commit":             func(s *Snapshot) { *s.Git.Commit = "abc1235" },
		"git.commit none":        func(s *Snapshot) { s.Git.Commit = nil },
		"git.branch":             func(s *Snapshot) { *s.Git.Branch = "main" },
		"git.dirty":              func(s *Snapshot) { s.Git.Dirty = false },
		"project.root_hash":      func(s *Snapshot) { s.Project.RootHash = nil },
		"project.identity_hash":  func(s *Snapshot) { *s.Project.IdentityHash = strings.Repeat("I", 64) },
		"roi.input_tokens":       func(s *Snapshot) { s.ROI.InputTokens++ },
		"roi.output_tokens":      func(s *Snapshot) { s.ROI.OutputTokens-- },
		"roi.tokens_saved":       func(s *Snapshot) { s.ROI.TokensSaved = 0 },
		"roi.compression_rate":   func(s *Snapshot) { s.ROI.CompressionRate = math.Nextafter(0.44444, 1) },
		"rate -0.0":              func(s *Snapshot) { s.ROI.CompressionRate = math.Copysign(0, -1) },
		"items_recorded":         func(s *Snapshot) { s.Lineage.ItemsRecorded = 43 },
		"lineage item seq":       func(s *Snapshot) { s.Lineage.Items[0].Seq = 2 },
		"lineage item kind":      func(s *Snapshot) { s.Lineage.Items[0].Kind = KindShell },
		"lineage item tool":      func(s *Snapshot) { s.Lineage.Items[0].Tool = "ctx_shell" },
		"lineage item path":      func(s *Snapshot) { *s.Lineage.Items[0].Path = "src/lib.rs" },
		"lineage item path none": func(s *Snapshot) { s.Lineage.Items[0].Path = nil },
		"lineage item input":     func(s *Snapshot) { s.Lineage.Items[0].InputTokens = 501 },
		"lineage item output":    func(s *Snapshot) { s.Lineage.Items[0].OutputTokens = 14 },
		"lineage item ratio":     func(s *Snapshot) { s.Lineage.Items[0].CompressionRatio = 0.9740000000000001 },
		"lineage item hash":      func(s *Snapshot) { s.Lineage.Items[0].ContentHash = nil },
		"lineage item added":     func(s *Snapshot) { s.Lineage.Items = append(s.Lineage.Items, s.Lineage.Items[0]) },
		"lineage items emptied":  func(s *Snapshot) { s.Lineage.Items = nil },
		"window_size":            func(s *Snapshot) { s.Ledger.WindowSize = 8001 },
		"total_tokens_sent":      func(s *Snapshot) { s.Ledger.TotalTokensSent = 0 },
		"total_tokens_saved":     func(s *Snapshot) { s.Ledger.TotalTokensSaved = 1 },
		"ledger item path":       func(s *Snapshot) { s.Ledger.Items[0].Path = "src/Main.rs" },
		"ledger item state":      func(s *Snapshot) { s.Ledger.Items[0].State = StateStale },
		"ledger item phi":        func(s *Snapshot) { *s.Ledger.Items[0].Phi = 0.9100000000000001 },
		"ledger item phi none":   func(s *Snapshot) { s.Ledger.Items[0].Phi = nil },
		"ledger item sent":       func(s *Snapshot) { s.Ledger.Items[0].SentTokens = 12 },
		"ledger item original":   func(s *Snapshot) { s.Ledger.Items[0].OriginalTokens = 5000 },
		"ledger items emptied":   func(s *Snapshot) { s.Ledger.Items = []LedgerItem{} },
		"session none":           func(s *Snapshot) { s.Session = nil },
		"session id":             func(s *Snapshot) { *s.Session.SessionID = "sess-2" },
		"session task":           func(s *Snapshot) { s.Session.Task = nil },
		"session decision":       func(s *Snapshot) { s.Session.Decisions[0] += "." },
		"session decision added": func(s *Snapshot) { s.Session.Decisions = append(s.Session.Decisions, "") },
		"session file":           func(s *Snapshot) { s.Session.FilesTouched[0] = "x" },
		"session files emptied":  func(s *Snapshot) { s.Session.FilesTouched = nil },
		"session progress":       func(s *Snapshot) { *s.Session.ProgressPct = 21 },
		"session progress none":  func(s *Snapshot) { s.Session.ProgressPct = nil },
		"snapshot_id":            func(s *Snapshot) { s.SnapshotID = strings.ToUpper(s.SnapshotID) },
		"signature value": func(s *Snapshot) {
			b := []byte(s.Signature.Value)
			b[10] ^= 1 // '5'↔'4' etc.: still hex
			s.Signature.Value = string(b)
		},
		"signature other key": func(s *Snapshot) {
			s.Signature.PublicKey = "ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c"
		},
	}
	for name, edit := range edits {
		s, pub := signedB(t)
		edit(s)
		if ok, err := s.Verify(pub); ok || err != nil {
			t.Errorf("%s: Verify = %v, %v; want false", name, ok, err)
		}
		if ok, err := s.Verify(nil); ok || err != nil {
			t.Errorf("%s: Verify(nil) = %v, %v; want false", name, ok, err)
		}
		file, err := s.MarshalFile()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := ParseFile(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok, err := back.Verify(nil); ok || err != nil {
			t.Errorf("%s: after round trip Verify = %v, %v", name, ok, err)
		}
		if _, err := CheckImport(file); err == nil {
			t.Errorf("%s: CheckImport accepted it", name)
		}
	}
}

// TestTamperedText edits the bytes of a signed file.
func TestTamperedText(t *testing.T) {
	s, _ := signedB(t)
	file, _ := s.MarshalFile()
	for _, c := range []struct{ old, new string }{
		{`0.974`, `0.9740000000000001`},
		{`0.44444`, `0.44445`},
		{`"progress_pct": 20`, `"progress_pct": 21`},
		{`"ctx_read"`, `"ctx_reaD"`},
		{`"Use ed25519 for snapshot signing"`, `"Use ed25519 for snapshot signing", "x"`},
	} {
		edited := strings.Replace(string(file), c.old, c.new, 1)
		if edited == string(file) {
			t.Fatalf("%q not found", c.old)
		}
		back, err := ParseFile([]byte(edited))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := back.Verify(nil); ok || err != nil {
			t.Errorf("%s → %s: %v %v", c.old, c.new, ok, err)
		}
		if _, err := CheckImport([]byte(edited)); !errors.Is(err, ErrIntegrity) || err.Error() != "integrity check failed: snapshot body does not match its id" {
			t.Errorf("import: %v", err)
		}
	}
	// Layout, extra fields and an integer spelling of an f64 that
	// re-serialises identically do not matter: the id is over the typed body.
	for _, c := range []struct{ old, new string }{
		{"\n  ", "\n\t"},
		{`"schema_version": 1,`, `"schema_version": 1, "future": {"x": [1, 2.5]},`},
		{`"phi": 0.91`, `"phi": 9.1e-1`},
	} {
		edited := strings.Replace(string(file), c.old, c.new, 1)
		back, err := ParseFile([]byte(edited))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := back.Verify(nil); !ok || err != nil {
			t.Errorf("%q: %v %v", c.new, ok, err)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	pk := "fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618"
	for _, c := range []struct {
		name       string
		edit       func(s *Snapshot)
		want       string // exact error text; "" = false without error
		sentinel   error
		okExpected bool
	}{
		{"unsigned", func(s *Snapshot) { s.Signature = nil }, "", nil, false},
		{"algorithm", func(s *Snapshot) { s.Signature.Algorithm = "Ed25519" }, "unsupported signature algorithm: Ed25519", dalek.ErrUnsupportedAlgorithm, false},
		{"algorithm before integrity", func(s *Snapshot) { s.Signature.Algorithm = "rsa"; s.CreatedAt = "x" }, "unsupported signature algorithm: rsa", dalek.ErrUnsupportedAlgorithm, false},
		{"integrity before hex", func(s *Snapshot) { s.Signature.PublicKey = "zz"; s.CreatedAt = "x" }, "", nil, false},
		{"pk odd", func(s *Snapshot) { s.Signature.PublicKey = "abc" }, "invalid public_key hex: odd-length hex string", dalek.ErrPublicKeyHex, false},
		{"pk digit", func(s *Snapshot) { s.Signature.PublicKey = "00zz" }, "invalid public_key hex: hex decode at 2: invalid digit found in string", dalek.ErrPublicKeyHex, false},
		{"pk plus", func(s *Snapshot) { s.Signature.PublicKey = "+f" }, "invalid public_key hex: hex decode at 0: invalid digit found in string", dalek.ErrPublicKeyHex, false},
		{"pk non-ascii", func(s *Snapshot) { s.Signature.PublicKey = "é" }, "invalid public_key hex: hex decode at 0: invalid digit found in string", dalek.ErrPublicKeyHex, false},
		{"pk before sig", func(s *Snapshot) { s.Signature.PublicKey = "x"; s.Signature.Value = "y" }, "invalid public_key hex: odd-length hex string", dalek.ErrPublicKeyHex, false},
		{"sig odd", func(s *Snapshot) { s.Signature.Value = s.Signature.Value[1:] }, "invalid signature hex: odd-length hex string", dalek.ErrSignatureHex, false},
		{"sig digit", func(s *Snapshot) { s.Signature.Value = "0g" + s.Signature.Value[2:] }, "invalid signature hex: hex decode at 0: invalid digit found in string", dalek.ErrSignatureHex, false},
		{"hex before length", func(s *Snapshot) { s.Signature.PublicKey = "00"; s.Signature.Value = "0" }, "invalid signature hex: odd-length hex string", dalek.ErrSignatureHex, false},
		{"pk length", func(s *Snapshot) { s.Signature.PublicKey = pk[:62]; s.Signature.Value = "00" }, "public_key must be 32 bytes", dalek.ErrPublicKeyLength, false},
		{"pk empty", func(s *Snapshot) { s.Signature.PublicKey = "" }, "public_key must be 32 bytes", dalek.ErrPublicKeyLength, false},
		{"sig length", func(s *Snapshot) { s.Signature.Value += "00" }, "signature must be 64 bytes", dalek.ErrSignatureLength, false},
		{"not a point", func(s *Snapshot) { s.Signature.PublicKey = "02" + strings.Repeat("00", 31) }, "invalid public key: signature error: Cannot decompress Edwards point", dalek.ErrInvalidPublicKey, false},
		{"uppercase hex accepted", func(s *Snapshot) {
			s.Signature.PublicKey = strings.ToUpper(s.Signature.PublicKey)
			s.Signature.Value = strings.ToUpper(s.Signature.Value)
		}, "", nil, true},
	} {
		s, _ := signedB(t)
		c.edit(s)
		ok, err := s.Verify(nil)
		if ok != c.okExpected {
			t.Errorf("%s: ok = %v", c.name, ok)
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, c.sentinel)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestOnCurve(t *testing.T) {
	for i := range 50 {
		seed := make([]byte, 32)
		seed[0] = byte(i)
		seed[5] = byte(i * 7)
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		if !dalek.OnCurve(pub) {
			t.Fatalf("real key %x not on the curve", pub)
		}
	}
	// y = 1 (the identity) and y = 0 are points; so is a non-canonical
	// encoding of y = 1 (y + p), which dalek accepts.
	id := make([]byte, 32)
	id[0] = 1
	zero := make([]byte, 32)
	noncanon := []byte{0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	for _, k := range [][]byte{id, zero, noncanon} {
		if !dalek.OnCurve(k) {
			t.Errorf("%x should decompress", k)
		}
	}
	bad := make([]byte, 32)
	bad[0] = 2
	if dalek.OnCurve(bad) {
		t.Error("y = 2 decompressed")
	}
	// Go's ed25519 agrees: a key that is not a point never verifies.
	if ed25519.Verify(bad, []byte("m"), make([]byte, 64)) {
		t.Error("verify with a non-point")
	}
}

func TestSignErrors(t *testing.T) {
	s := exampleA()
	if err := s.Sign(ed25519.PrivateKey{1, 2, 3}); !errors.Is(err, ErrBadKey) {
		t.Fatalf("short key: %v", err)
	}
	s.ROI.CompressionRate = math.NaN()
	if err := s.Sign(vectorfile.Key(t, seedB)); !errors.Is(err, ErrUnencodable) {
		t.Fatalf("NaN: %v", err)
	}
	if ok, err := s.Verify(nil); ok || err != nil {
		t.Fatalf("unsigned NaN snapshot: %v %v", ok, err)
	}
	s.Signature = &Signature{Algorithm: "ed25519"}
	if _, err := s.Verify(nil); !errors.Is(err, ErrUnencodable) {
		t.Fatalf("Verify NaN: %v", err)
	}
}

func TestCheckImport(t *testing.T) {
	unsigned := exampleB()
	if err := unsigned.Finalize(); err != nil {
		t.Fatal(err)
	}
	file, _ := unsigned.MarshalFile()
	s, err := CheckImport(file)
	if err != nil || s.Signature != nil {
		t.Fatalf("unsigned import: %v", err)
	}
	if ok, err := s.Verify(nil); ok || err != nil {
		t.Fatalf("unsigned verifies: %v %v", ok, err)
	}
	if _, err := CheckImport([]byte("{")); !errors.Is(err, ErrParse) || !strings.HasPrefix(err.Error(), "parse snapshot: ") {
		t.Fatalf("parse: %v", err)
	}
	signed, _ := signedB(t)
	signed.Signature.Value = strings.Repeat("00", 64)
	file, _ = signed.MarshalFile()
	if _, err := CheckImport(file); !errors.Is(err, ErrSignatureRejected) || err.Error() != "signature verification failed — refusing to import" {
		t.Fatalf("bad signature: %v", err)
	}
	signed.Signature.Algorithm = "x"
	file, _ = signed.MarshalFile()
	if _, err := CheckImport(file); !errors.Is(err, dalek.ErrUnsupportedAlgorithm) {
		t.Fatalf("bad algorithm: %v", err)
	}
	// A snapshot signed by any key imports (lean-ctx has no trust list).
	other := exampleA()
	if err := other.Sign(vectorfile.Key(t, strings.Repeat("42", 32))); err != nil {
		t.Fatal(err)
	}
	file, _ = other.MarshalFile()
	if _, err := CheckImport(file); err != nil {
		t.Fatal(err)
	}
}

func TestSignerKey(t *testing.T) {
	s, pub := signedB(t)
	k, err := s.SignerKey()
	if err != nil || !k.Equal(pub) {
		t.Fatal(k, err)
	}
	s.Signature = nil
	if k, err := s.SignerKey(); k != nil || err != nil {
		t.Fatal(k, err)
	}
}
