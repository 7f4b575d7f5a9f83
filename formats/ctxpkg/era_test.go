package ctxpkg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// TestFloatErasVerify: a package holding positive-exponent floats (an f64
// edge weight, an f32 fact confidence) verifies whether lean-ctx's
// serde_json wrote them the zmij way ("1e+16", current, what git-ctx
// writes) or the ryu way ("1e16", before serde_json 1.0.147): integrity is
// the hash of the file's own content text, so each era's text matches the
// hash its writer computed. A changed text fails in either era.
func TestFloatErasVerify(t *testing.T) {
	priv := testKey(7)
	p := fullPackage()
	p.Content.Knowledge.Facts[0].Confidence = 1e13
	p.Content.ContextGraph = &ContextGraph{Format: "ctxpkg-graph-v2",
		Nodes: []ContextNode{{ID: "a", Type: "file", Content: "x", Activation: 1}},
		Edges: []ContextEdge{{From: "a", To: "a", Type: "self", Weight: 1e16}}}
	current := sealedFile(t, p, priv)
	for _, want := range []string{`"confidence": 1e+13`, `"weight": 1e+16`} {
		if !strings.Contains(string(current), want) {
			t.Fatalf("git-ctx does not write %s:\n%s", want, current)
		}
	}

	// The older writer's file: its content text, and the integrity and
	// signature it computed over that text.
	ryu := strings.NewReplacer(`"confidence":1e+13`, `"confidence":1e13`, `"weight":1e+16`, `"weight":1e16`)
	legacyText := ryu.Replace(string(p.ContentText))
	if legacyText == string(p.ContentText) {
		t.Fatal("no era-sensitive float in the content")
	}
	contentSum := sha256.Sum256([]byte(legacyText))
	lp := *p
	lp.Manifest.Integrity = Integrity{ContentHash: hex.EncodeToString(contentSum[:]), ByteSize: uint64(len(legacyText))}
	composite := sha256.Sum256([]byte(p.Manifest.Name + ":" + p.Manifest.Version + ":" + lp.Manifest.Integrity.ContentHash))
	lp.Manifest.Integrity.SHA256 = hex.EncodeToString(composite[:])
	if err := lp.Manifest.Sign(priv); err != nil {
		t.Fatal(err)
	}
	legacyFile, _ := lp.MarshalFile()
	legacyFile = []byte(strings.NewReplacer(`"confidence": 1e+13`, `"confidence": 1e13`, `"weight": 1e+16`, `"weight": 1e16`).Replace(string(legacyFile)))

	for name, file := range map[string][]byte{"zmij": current, "ryu": legacyFile} {
		q, err := ParseFile(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if probs := q.Problems(); len(probs) != 0 {
			t.Errorf("%s: %v", name, probs)
		}
		if err := q.CheckImport(); err != nil {
			t.Errorf("%s: CheckImport %v", name, err)
		}
		if q.Content.ContextGraph.Edges[0].Weight != 1e16 || q.Content.Knowledge.Facts[0].Confidence != 1e13 {
			t.Errorf("%s: values %+v", name, q.Content.ContextGraph.Edges[0])
		}
		// git-ctx writes the current form when it re-serialises.
		if again, _ := q.Content.AppendJSON(nil); !bytes.Equal(again, p.ContentText) {
			t.Errorf("%s: re-serialised %s", name, again)
		}
	}

	// Tampering: the other era's manifest over this era's text, and a
	// changed value in the legacy text.
	mixed := bytes.Replace(current, []byte(`"weight": 1e+16`), []byte(`"weight": 1e16`), 1)
	tampered := bytes.Replace(legacyFile, []byte(`"weight": 1e16`), []byte(`"weight": 2e16`), 1)
	for name, file := range map[string][]byte{"zmij manifest, ryu text": mixed, "ryu value changed": tampered} {
		q, err := ParseFile(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := q.CheckImport(); !errors.Is(err, ErrContentHashMismatch) {
			t.Errorf("%s: CheckImport %v", name, err)
		}
	}
}
