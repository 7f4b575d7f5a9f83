package ctxpkg

import (
	"errors"
	"strings"
	"testing"
)

func validManifest() Manifest {
	h := strings.Repeat("a", 64)
	return Manifest{SchemaVersion: 1, Name: "demo", Version: "1.0.0", Layers: []Layer{LayerKnowledge},
		Integrity: Integrity{SHA256: h, ContentHash: strings.ToUpper(h), ByteSize: 2}}
}

func TestValidateMessages(t *testing.T) {
	cases := []struct {
		mod  func(*Manifest)
		rule error
		want string
	}{
		{func(m *Manifest) { m.SchemaVersion = 3 }, ErrSchemaVersion, "unsupported schema_version 3 (expected 1 or 2)"},
		{func(m *Manifest) { m.Name = "" }, ErrNameEmpty, "name must not be empty"},
		{func(m *Manifest) { m.Name = strings.Repeat("é", 65) }, ErrNameTooLong, "name must be <= 128 characters"},
		{func(m *Manifest) { m.Name = "a b" }, ErrNameChars, "name must only contain [a-zA-Z0-9._@/-]"},
		{func(m *Manifest) { m.Name = "../x" }, ErrUnsafeName, "name must not contain '..', empty segments or a leading '/'"},
		{func(m *Manifest) { m.Name = "/abs" }, ErrUnsafeName, "name must not contain '..', empty segments or a leading '/'"},
		{func(m *Manifest) { m.Name = `a\b` }, ErrNameChars, "name must only contain [a-zA-Z0-9._@/-]; name must not contain '..', empty segments or a leading '/'"},
		{func(m *Manifest) { m.Version = "" }, ErrVersionEmpty, "version must not be empty"},
		{func(m *Manifest) { m.Version = strings.Repeat("1", 65) }, ErrVersionTooLong, "version must be <= 64 characters"},
		{func(m *Manifest) { m.Version = "1/2" }, ErrVersionChars, "version must only contain [a-zA-Z0-9._+-]"},
		{func(m *Manifest) { m.Version = ".1" }, ErrVersionDot, "version must not start with '.'"},
		{func(m *Manifest) { m.Layers = nil }, ErrNoLayers, "at least one layer is required"},
		{func(m *Manifest) { m.Kind = KindSkills }, ErrKindNeedsV2, "kind = skills requires schema_version 2 (v2)"},
		{func(m *Manifest) { m.Layers = []Layer{"graph", "graph", "graph"} }, ErrDuplicateLayer, "duplicate layer: graph; duplicate layer: graph"},
		{func(m *Manifest) { m.Integrity.SHA256 = "xyz" }, ErrSHA256Hex, "integrity.sha256 must be a 64-char hex string"},
		{func(m *Manifest) { m.Integrity.ContentHash = strings.Repeat("g", 64) }, ErrContentHashHex, "integrity.content_hash must be a 64-char hex string"},
		{func(m *Manifest) { m.Integrity.ByteSize = 0 }, ErrByteSizeZero, "integrity.byte_size must be > 0"},
	}
	for _, c := range cases {
		m := validManifest()
		c.mod(&m)
		err := m.Validate()
		if err == nil || err.Error() != c.want || !errors.Is(err, c.rule) {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
	m := validManifest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Name, m.Version = "@ns/é-1", "1.0.0+é" // Unicode alphanumerics pass, as in lean-ctx
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.SchemaVersion, m.Layers, m.Kind = 2, nil, KindGrammar // v2: layers may be empty
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m = Manifest{}
	if got := m.Validate().Error(); got != "unsupported schema_version 0 (expected 1 or 2); name must not be empty; version must not be empty; at least one layer is required; integrity.sha256 must be a 64-char hex string; integrity.content_hash must be a 64-char hex string; integrity.byte_size must be > 0" {
		t.Fatal(got)
	}
}

func TestKindCoherence(t *testing.T) {
	h := strings.Repeat("0", 64)
	cases := []struct {
		kind Kind
		c    Content
		want string
	}{
		{"", Content{}, ""},
		{KindContext, Content{Addon: &AddonContent{}}, "content.addon payload requires kind=addon (manifest declares kind=context)"},
		{KindGrammar, Content{Documents: &DocumentsContent{}}, "content.documents payload requires kind=skills (manifest declares kind=grammar)"},
		{KindAddon, Content{}, "kind=addon requires a content.addon payload"},
		{KindSkills, Content{Addon: &AddonContent{}}, "content.addon payload requires kind=addon; kind=skills requires a content.documents payload"},
		{KindSkills, Content{Documents: &DocumentsContent{}}, "kind=skills payload has no files"},
		{KindSkills, Content{Documents: &DocumentsContent{Files: make([]DocumentBlob, 257)}}, "skills payload has 257 files (cap: 256)"},
		{KindSkills, Content{Documents: &DocumentsContent{Files: []DocumentBlob{
			{Path: ""}, {Path: "/a"}, {Path: `a\b`}, {Path: "c:d"}, {Path: "a/../b"}, {Path: "a//b"}, {Path: "..x"},
			{Path: "ok", SHA256: h, Encoding: "zstd+base64", Body: "AAAA"}, {Path: "ok"},
			{Path: "s", SHA256: "x"}, {Path: "e", SHA256: h, Encoding: "gzip"},
		}}}, "invalid document path `` (empty or too long); invalid document path `/a` (must be relative with `/` separators); invalid document path `a\\b` (must be relative with `/` separators); invalid document path `c:d` (must be relative with `/` separators); invalid document path `a/../b` (unsafe component); invalid document path `a//b` (unsafe component); invalid document path `..x` (unsafe component); duplicate document path `ok`; `s`: sha256 must be a 64-char hex string; `e`: unsupported encoding `gzip` (newer lean-ctx required)"},
	}
	for _, c := range cases {
		p := &Package{Manifest: Manifest{Kind: c.kind}, Content: c.c}
		err := p.CheckKind()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	m := Manifest{Kind: KindAddon, Name: "@ns/tool"}
	if err := m.RefuseAddon(); err.Error() != "`@ns/tool` is a kind=addon package — install it with `lean-ctx addon add ns/tool` (addon installs need capability consent + the addon trust chain)" {
		t.Fatal(err)
	}
}

func TestSignatureErrors(t *testing.T) {
	v := loadVectors(t).PackageIntegrity[0]
	s := v.Signing
	base := func() Manifest {
		return Manifest{Name: v.Name, Version: v.Version, Integrity: Integrity{SHA256: v.SHA256},
			Signature: &Signature{Algorithm: "ed25519", PublicKey: s.PublicKey, Value: s.Signature}}
	}
	cases := []struct {
		mod  func(*Signature)
		want string
		ok   bool
	}{
		{func(*Signature) {}, "", true},
		{func(g *Signature) { g.PublicKey = strings.ToUpper(g.PublicKey); g.Value = strings.ToUpper(g.Value) }, "", true},
		{func(g *Signature) { g.Algorithm = "Ed25519" }, "unsupported signature algorithm: Ed25519", false},
		{func(g *Signature) { g.PublicKey = "abc" }, "invalid public_key hex: odd-length hex string", false},
		{func(g *Signature) { g.PublicKey = "00zz" }, "invalid public_key hex: hex decode at 2: invalid digit found in string", false},
		{func(g *Signature) { g.Value = "+f" }, "invalid signature hex: hex decode at 0: invalid digit found in string", false},
		{func(g *Signature) { g.PublicKey = "00" }, "public_key must be 32 bytes", false},
		{func(g *Signature) { g.Value = "00" }, "signature must be 64 bytes", false},
		{func(g *Signature) { g.PublicKey = "02" + strings.Repeat("00", 31) }, "invalid public key: signature error: Cannot decompress Edwards point", false},
		{func(g *Signature) { g.Value = strings.Repeat("00", 64) }, "", false},
	}
	for _, c := range cases {
		m := base()
		c.mod(m.Signature)
		ok, err := m.VerifySignature(nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if ok != c.ok || got != c.want {
			t.Errorf("got %v %q, want %v %q", ok, got, c.ok, c.want)
		}
	}
	m := base()
	m.Version = "1.0.1"
	if err := m.CheckSignature(); err != ErrSignatureRejected || err.Error() != "signature verification failed — the package was modified after signing" {
		t.Fatal(err)
	}
	m.Signature = nil
	if ok, err := m.VerifySignature(nil); ok || err != nil || m.CheckSignature() != nil {
		t.Fatal("unsigned")
	}
}
