package snapshot

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// ryuText rewrites zmij's positive exponents of the given values ("1e+16")
// the way serde_json before zmij wrote them ("1e16"): the legacy rendering,
// built from the current text without the era code under test.
func ryuText(t *testing.T, text []byte, zmij ...string) []byte {
	t.Helper()
	out := string(text)
	for _, z := range zmij {
		if !strings.Contains(out, ":"+z) && !strings.Contains(out, ": "+z) {
			t.Fatalf("%s not in %s", z, text)
		}
		out = strings.ReplaceAll(out, z, strings.Replace(z, "e+", "e", 1))
	}
	return []byte(out)
}

// legacyB is example B with a positive-exponent float at each float field
// the edit sets, carrying the id (and, with priv, the signature) lean-ctx
// built with serde_json before zmij gave it; zmij lists the changed values
// as zmij writes them.
func legacyB(t *testing.T, edit func(*Snapshot), priv ed25519.PrivateKey, zmij ...string) *Snapshot {
	t.Helper()
	s := exampleB()
	edit(s)
	body, err := s.CanonicalBody()
	if err != nil {
		t.Fatal(err)
	}
	s.SnapshotID = Blake3Hex(ryuText(t, body, zmij...))
	if current, _ := s.ComputeID(); current == s.SnapshotID {
		t.Fatal("the eras give one id")
	}
	if priv != nil {
		s.Signature = &Signature{
			Algorithm: SignatureAlgorithm,
			PublicKey: hex.EncodeToString(priv.Public().(ed25519.PublicKey)),
			Value:     hex.EncodeToString(ed25519.Sign(priv, []byte(SigningMessage(s.SnapshotID)))),
		}
	}
	return s
}

func bigRate(s *Snapshot) { s.ROI.CompressionRate = 1e16 }

// TestFloatErasVerify: a snapshot holding a positive-exponent float verifies
// whether its id was computed with zmij's "1e+16" (current lean-ctx, what
// git-ctx writes) or ryu's "1e16" (older lean-ctx), in memory and from the
// file each era writes; IntegrityEra names the era.
func TestFloatErasVerify(t *testing.T) {
	priv := vectorfile.Key(t, seedB)
	pub := priv.Public().(ed25519.PublicKey)
	check := func(name string, s *Snapshot, want serdejson.Era) {
		t.Helper()
		if era, err := s.IntegrityEra(); err != nil || era != want {
			t.Errorf("%s: era %v %v, want %v", name, era, err, want)
		}
		if ok, err := s.Verify(pub); !ok || err != nil {
			t.Errorf("%s: Verify %v %v", name, ok, err)
		}
	}

	current := exampleB()
	bigRate(current)
	if err := current.Sign(priv); err != nil {
		t.Fatal(err)
	}
	check("zmij", current, serdejson.Zmij)
	file, err := current.MarshalFile()
	if err != nil || !strings.Contains(string(file), `"compression_rate": 1e+16`) {
		t.Fatalf("git-ctx writes %s (%v)", file, err)
	}
	if s, err := CheckImport(file); err != nil {
		t.Fatalf("zmij file: %v", err)
	} else {
		check("zmij file", s, serdejson.Zmij)
	}

	legacy := legacyB(t, bigRate, priv, "1e+16")
	check("ryu", legacy, serdejson.Ryu)
	// The file the older lean-ctx wrote: ryu's text throughout.
	file, _ = legacy.MarshalFile()
	file = ryuText(t, file, "1e+16")
	s, err := CheckImport(file)
	if err != nil {
		t.Fatalf("ryu file: %v", err)
	}
	check("ryu file", s, serdejson.Ryu)
	// git-ctx writes the current form back (the id stays the legacy one,
	// which the values still verify under).
	again, _ := s.MarshalFile()
	if !strings.Contains(string(again), `"compression_rate": 1e+16`) {
		t.Fatalf("rewritten: %s", again)
	}
	if back, err := CheckImport(again); err != nil || back.SnapshotID != legacy.SnapshotID {
		t.Fatalf("rewritten file: %v", err)
	}

	// Every f64 field of the snapshot can carry the era.
	for name, c := range map[string]struct {
		edit func(*Snapshot)
		zmij []string
	}{
		"roi.compression_rate":      {bigRate, []string{"1e+16"}},
		"lineage.compression_ratio": {func(s *Snapshot) { s.Lineage.Items[0].CompressionRatio = 2.5e20 }, []string{"2.5e+20"}},
		"ledger.phi":                {func(s *Snapshot) { *s.Ledger.Items[0].Phi = 3e300 }, []string{"3e+300"}},
		"all": {func(s *Snapshot) {
			bigRate(s)
			s.Lineage.Items[0].CompressionRatio = 2.5e20
			*s.Ledger.Items[0].Phi = 3e300
		}, []string{"1e+16", "2.5e+20", "3e+300"}},
	} {
		check(name, legacyB(t, c.edit, priv, c.zmij...), serdejson.Ryu)
	}
}

// TestFloatErasTamper: a changed body fails under both eras, and an id is
// only ever accepted for the body it was computed from.
func TestFloatErasTamper(t *testing.T) {
	priv := vectorfile.Key(t, seedB)
	for name, edit := range map[string]func(*Snapshot){
		"tokens":       func(s *Snapshot) { s.ROI.InputTokens++ },
		"float":        func(s *Snapshot) { s.ROI.CompressionRate = 2e16 },
		"float fixed":  func(s *Snapshot) { s.ROI.CompressionRate = 0.5 },
		"session task": func(s *Snapshot) { s.Session.Task = nil },
	} {
		s := legacyB(t, bigRate, priv, "1e+16")
		edit(s)
		if err := s.VerifyIntegrity(); !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: VerifyIntegrity %v", name, err)
		}
		if ok, err := s.Verify(nil); ok || err != nil {
			t.Errorf("%s: Verify %v %v", name, ok, err)
		}
		file, _ := s.MarshalFile()
		if _, err := CheckImport(file); !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: CheckImport %v", name, err)
		}
	}
	// The legacy id of a body with no era-sensitive float is its current
	// id: an id computed from "1e16" text does not verify a body whose
	// float is written the same in both eras.
	s := legacyB(t, bigRate, nil, "1e+16")
	s.ROI.CompressionRate = 1e15
	if _, err := s.IntegrityEra(); !errors.Is(err, ErrIntegrity) {
		t.Errorf("1e15: %v", err)
	}
}

// TestSignKeepsLegacyID: signing an unsigned snapshot an older lean-ctx
// wrote (snapshot import, publish) keeps its id; a wrong id is replaced.
func TestSignKeepsLegacyID(t *testing.T) {
	priv := vectorfile.Key(t, seedB)
	s := legacyB(t, bigRate, nil, "1e+16")
	id := s.SnapshotID
	if err := s.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if s.SnapshotID != id {
		t.Fatalf("id changed: %s -> %s", id, s.SnapshotID)
	}
	if ok, err := s.Verify(nil); !ok || err != nil {
		t.Fatalf("Verify %v %v", ok, err)
	}
	s.SnapshotID = strings.Repeat("0", 64)
	if err := s.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if current, _ := s.ComputeID(); s.SnapshotID != current {
		t.Fatalf("wrong id kept: %s", s.SnapshotID)
	}
}
