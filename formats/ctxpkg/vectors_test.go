package ctxpkg

import (
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
)

type vectorFile struct {
	PackageIntegrity []packageVector `json:"package_integrity"`
	TransportHMAC    []hmacVector    `json:"transport_hmac"`
}

// packageVector is one package_integrity vector.
type packageVector struct {
	ID             string `json:"id"`
	ContentText    string `json:"content_text"`
	ContentHash    string `json:"content_hash"`
	ByteSize       uint64 `json:"byte_size"`
	Name           string `json:"name"`
	Version        string `json:"version"`
	CompositeInput string `json:"composite_input"`
	SHA256         string `json:"sha256"`
	Signing        *struct {
		Algorithm    string `json:"algorithm"`
		MessageInput string `json:"message_input"`
		Message      string `json:"message"`
		SeedHex      string `json:"seed_hex"`
		PublicKey    string `json:"public_key"`
		Signature    string `json:"signature"`
	} `json:"signing"`
}

// hmacVector is one transport_hmac vector.
type hmacVector struct {
	ID             string `json:"id"`
	EnvelopeInputs struct {
		FormatVersion uint32            `json:"format_version"`
		SenderAgentID string            `json:"sender_agent_id"`
		Recipient     *string           `json:"recipient"`
		ContentType   string            `json:"content_type"`
		SentAtJSON    string            `json:"sent_at_json"`
		Metadata      map[string]string `json:"metadata"`
	} `json:"envelope_inputs"`
	Secret            string `json:"secret"`
	Header            string `json:"header"`
	Payload           string `json:"payload"`
	PayloadByteLength int    `json:"payload_byte_length"`
	ExpectedHex       string `json:"expected_hex"`
}

func loadVectors(t *testing.T) *vectorFile {
	t.Helper()
	v := vectorfile.Load[vectorFile](t, "ctxpkg.json")
	return &v
}

// bundle wraps content text in a minimal manifest carrying the vector's
// integrity values, in the given layout.
func bundle(name, version, sha, contentHash string, size uint64, content string, sig *Signature) []byte {
	m := Manifest{SchemaVersion: 1, Name: name, Version: version, Layers: []Layer{LayerKnowledge},
		Integrity:  Integrity{SHA256: sha, ContentHash: contentHash, ByteSize: size},
		Provenance: Provenance{Tool: "lean-ctx", ToolVersion: "3.9.18"}, Signature: sig}
	mj, err := m.AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	return []byte(`{"manifest":` + string(mj) + `,"content":` + content + `}`)
}

func TestVectors(t *testing.T) {
	v := loadVectors(t)
	n := 0
	for _, pv := range v.PackageIntegrity {
		t.Run(pv.ID, func(t *testing.T) {
			checkPackageHashes(t, pv)
			sig := checkPackageSigning(t, pv)
			checkPackageFiles(t, pv, sig)
			n++
		})
	}
	for _, hv := range v.TransportHMAC {
		t.Run(hv.ID, func(t *testing.T) {
			checkTransportHMAC(t, hv)
			n++
		})
	}
	if n != 4 {
		t.Fatalf("reproduced %d vectors, want 4", n)
	}
	t.Logf("reproduced %d vectors", n)
}

// checkPackageHashes: content hash, size and composite hash are the
// vector's.
func checkPackageHashes(t *testing.T, pv packageVector) {
	t.Helper()
	h, size := ContentHash(Compact([]byte(pv.ContentText)))
	if h != pv.ContentHash || size != pv.ByteSize {
		t.Fatalf("content hash %s/%d, want %s/%d", h, size, pv.ContentHash, pv.ByteSize)
	}
	if got := pv.Name + ":" + pv.Version + ":" + h; got != pv.CompositeInput {
		t.Fatalf("composite input %q", got)
	}
	if c := CompositeHash(pv.Name, pv.Version, h); c != pv.SHA256 {
		t.Fatalf("composite %s, want %s", c, pv.SHA256)
	}
}

// checkPackageSigning: for a signed vector, the message and signature are
// the vector's; returns the signature (nil for an unsigned vector).
func checkPackageSigning(t *testing.T, pv packageVector) *Signature {
	t.Helper()
	s := pv.Signing
	if s == nil {
		return nil
	}
	if got := SignPrefix + pv.Name + ":" + pv.Version + ":" + pv.SHA256; got != s.MessageInput {
		t.Fatalf("message input %q", got)
	}
	if msg := SigningMessage(pv.Name, pv.Version, pv.SHA256); msg != s.Message {
		t.Fatalf("message %s, want %s", msg, s.Message)
	}
	priv := vectorfile.Key(t, s.SeedHex)
	m := Manifest{Name: pv.Name, Version: pv.Version, Integrity: Integrity{SHA256: pv.SHA256}}
	if err := m.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if m.Signature.Algorithm != s.Algorithm || m.Signature.PublicKey != s.PublicKey || m.Signature.Value != s.Signature {
		t.Fatalf("signature %+v", m.Signature)
	}
	return m.Signature
}

// checkPackageFiles: whole files, compact and pretty content, verify.
func checkPackageFiles(t *testing.T, pv packageVector, sig *Signature) {
	t.Helper()
	for _, content := range []string{pv.ContentText, string(prettyOf(pv.ContentText))} {
		data := bundle(pv.Name, pv.Version, pv.SHA256, pv.ContentHash, pv.ByteSize, content, sig)
		for _, doc := range [][]byte{data, prettyOf(string(data))} {
			p, err := ParseFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.VerifyIntegrity(); err != nil {
				t.Fatal(err)
			}
			if err := p.CheckImport(); err != nil {
				t.Fatal(err)
			}
			if sig != nil {
				ok, err := p.Manifest.VerifySignature(nil)
				if !ok || err != nil {
					t.Fatalf("signature: %v %v", ok, err)
				}
			}
		}
	}
}

// checkTransportHMAC: the envelope's HMAC header and value are the
// vector's, and a signed envelope verifies with its secret only.
func checkTransportHMAC(t *testing.T, hv hmacVector) {
	t.Helper()
	in := hv.EnvelopeInputs
	sentAt, err := ParseTime(in.SentAtJSON)
	if err != nil {
		t.Fatal(err)
	}
	e := &Envelope{FormatVersion: in.FormatVersion, SentAt: sentAt,
		Sender:    AgentIdentity{AgentID: in.SenderAgentID, AgentType: "lean-ctx-cli", DaemonFingerprint: "0123456789abcdef", Capabilities: SendCapabilities},
		Recipient: in.Recipient, ContentType: ContentType(in.ContentType), PayloadJSON: hv.Payload, Metadata: in.Metadata}
	if len(hv.Payload) != hv.PayloadByteLength {
		t.Fatal("payload length")
	}
	if h := e.HMACHeader(); h != hv.Header {
		t.Fatalf("header %q, want %q", h, hv.Header)
	}
	if got := e.ComputeHMAC([]byte(hv.Secret)); got != hv.ExpectedHex {
		t.Fatalf("hmac %s, want %s", got, hv.ExpectedHex)
	}
	e.Sign([]byte(hv.Secret))
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	if form, err := back.VerifyHMAC([]byte(hv.Secret)); form != HMACLean || err != nil {
		t.Fatalf("verify: %v %v", form, err)
	}
	if form, err := back.VerifyHMAC([]byte(hv.Secret + "x")); form != HMACNone || err != ErrHMACMismatch {
		t.Fatalf("wrong secret: %v %v", form, err)
	}
}
