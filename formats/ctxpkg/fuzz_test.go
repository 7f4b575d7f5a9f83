package ctxpkg

import (
	"bytes"
	"testing"
)

// fuzz-smoke: 200x
func FuzzParse(f *testing.F) {
	p := fullPackage()
	if err := p.Seal(); err != nil {
		f.Fatal(err)
	}
	file, _ := p.MarshalFile()
	f.Add(file)
	v := []byte(`{"manifest":{"schema_version":1,"name":"vt-pkg","version":"1.0.0","description":"","author":null,"created_at":"2026-01-01T00:00:00Z","updated_at":null,"layers":["knowledge"],"dependencies":[],"tags":[],"integrity":{"sha256":"39e35efb6265536becff30670bf72e3fece4e3faa2983add99a8383d5e76300d","content_hash":"6b7c625366e1a9837ef1a6c5c4481a8c57ea2d7281da0b0e9357d226ba271612","byte_size":29},"provenance":{"tool":"lean-ctx","tool_version":"x","project_hash":null,"source_session_id":null}},"content":{"note":"hello","weight":1.0}}`)
	f.Add(v)
	f.Add([]byte(`{"manifest":{},"content":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseFile(data)
		if err != nil {
			return
		}
		_ = p.Manifest.Validate()
		_ = p.CheckKind()
		_ = p.CheckImport()
		_, _ = p.Manifest.VerifySignature(nil)
		out, err := p.MarshalFile()
		if err != nil {
			return // a float that serde_json would write as null
		}
		q, err := ParseFile(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		again, err := q.MarshalFile()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not stable: %v\n%s\n%s", err, out, again)
		}
		// The re-serialised content is the compact text serde would write.
		text, _ := q.Content.AppendJSON(nil)
		if !bytes.Equal(text, q.ContentText) {
			t.Fatalf("content text %s vs %s", text, q.ContentText)
		}
	})
}

func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(exampleEnvelope), []byte("k"))
	f.Add([]byte(`{"format_version":1,"sent_at":"2026-01-01T00:00:00Z","sender":{"agent_id":"a","agent_type":"b","daemon_fingerprint":"c","capabilities":[]},"recipient":null,"content_type":"a2_a_task","payload_json":"p","signature":"+f","metadata":{}}`), []byte{})
	f.Fuzz(func(t *testing.T, data, secret []byte) {
		e, err := ParseEnvelope(data)
		if err != nil {
			return
		}
		_, _ = e.VerifyHMAC(secret)
		_ = e.HMACHeader()
		out, err := e.Marshal()
		if err != nil {
			return
		}
		back, err := ParseEnvelope(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		again, _ := back.Marshal()
		if !bytes.Equal(again, out) {
			t.Fatalf("not stable\n%s\n%s", out, again)
		}
		if back.HMACHeader() != e.HMACHeader() {
			t.Fatal("header changed")
		}
		back.Sign(secret)
		if f, err := back.VerifyHMAC(secret); f != HMACLean || err != nil {
			t.Fatal(f, err)
		}
	})
}
