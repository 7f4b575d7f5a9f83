package ctxpkg

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// The illustrative envelope of reference §9.4 (worked example 2, secret "k").
const exampleEnvelope = `{
  "format_version": 1,
  "sent_at": "2026-01-01T00:00:00.123Z",
  "sender": {
    "agent_id": "cli",
    "agent_type": "lean-ctx-cli",
    "daemon_fingerprint": "<16 hex>",
    "capabilities": [
      "context_compression",
      "knowledge_graph",
      "shared_sessions",
      "a2a_messaging"
    ]
  },
  "recipient": "bob",
  "content_type": "context_package",
  "payload_json": "{}",
  "signature": "3793a92ba160b14fe5408296278a657de73a87b96981004f2686ad9e6807a4ee",
  "metadata": {
    "project_root_hash": "0123456789abcdef",
    "source_file": "a.ctxpkg"
  }
}`

func TestEnvelopeExample(t *testing.T) {
	e, err := ParseEnvelope([]byte(exampleEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := e.VerifyHMAC([]byte("k")); f != HMACLean || err != nil {
		t.Fatal(f, err)
	}
	out, err := e.Marshal()
	if err != nil || string(out) != exampleEnvelope {
		t.Fatalf("%v\n%s", err, out)
	}
	// Built with NewPackageEnvelope.
	n := NewPackageEnvelope("{}", time.Date(2026, 1, 1, 0, 0, 0, 123_000_000, time.UTC), ptr("bob"), "<16 hex>",
		map[string]string{"source_file": "a.ctxpkg", "project_root_hash": "0123456789abcdef"})
	n.Sign([]byte("k"))
	if out, _ := n.Marshal(); string(out) != exampleEnvelope {
		t.Fatalf("%s", out)
	}
	// Hex decoding as lean-ctx: uppercase ok, '+' in a pair ok, trailing odd char ignored.
	sig := *e.Signature
	for _, s := range []string{strings.ToUpper(sig), sig + "z", "+" + sig[1:]} {
		e2 := *e
		e2.Signature = &s
		f, err := e2.VerifyHMAC([]byte("k"))
		if s[0] == '+' {
			if sig[0] != '3' || err != ErrHMACMismatch { // '+7' decodes to 0x07, not 0x37
				t.Fatal(f, err)
			}
			continue
		}
		if f != HMACLean || err != nil {
			t.Fatal(s, f, err)
		}
	}
	// Simple (spec) form verifies and is reported as such.
	s := e.ComputeSimpleHMAC([]byte("k"))
	e.Signature = &s
	if f, err := e.VerifyHMAC([]byte("k")); f != HMACSimple || err != nil || f.String() != "spec-simple" {
		t.Fatal(f, err)
	}
	bad := "zz" + s[2:]
	e.Signature = &bad
	if _, err := e.VerifyHMAC([]byte("k")); err != ErrHMACMismatch {
		t.Fatal(err)
	}
	e.Signature = nil
	if _, err := e.VerifyHMAC([]byte("k")); err != ErrUnsigned {
		t.Fatal(err)
	}
}

func TestEnvelopeSentAtRerender(t *testing.T) {
	for in, want := range map[string]string{
		"2026-01-01T00:00:00.1Z":    "2026-01-01T00:00:00.100+00:00",
		"2026-01-01T02:00:00+02:00": "2026-01-01T00:00:00+00:00",
	} {
		doc := strings.Replace(exampleEnvelope, "2026-01-01T00:00:00.123Z", in, 1)
		e, err := ParseEnvelope([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if h := e.HMACHeader(); !strings.Contains(h, ":"+want+":") {
			t.Errorf("%s: %s", in, h)
		}
	}
}

func TestEnvelopeErrors(t *testing.T) {
	cases := map[string]string{
		strings.Replace(exampleEnvelope, `"format_version": 1`, `"format_version": 2`, 1):               "unsupported format_version 2 (expected 1)",
		strings.Replace(exampleEnvelope, `"recipient": "bob"`, `"recipient": {"agent_id":"bob"}`, 1):    "parse envelope: invalid type: map, expected a string",
		strings.Replace(exampleEnvelope, `"sent_at": "2026-01-01T00:00:00.123Z",`, ``, 1):               "parse envelope: missing field `sent_at`",
		strings.Replace(exampleEnvelope, `"content_type": "context_package"`, `"content_type": "x"`, 1): "parse envelope: unknown variant `x`, expected one of `handoff_bundle`, `context_package`, `a2_a_message`, `a2_a_task`",
		exampleEnvelope[:strings.Index(exampleEnvelope, `,
  "metadata"`)] + "\n}": "parse envelope: missing field `metadata`",
	}
	for in, want := range cases {
		_, err := ParseEnvelope([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
	e, err := ParseEnvelope([]byte(strings.Replace(exampleEnvelope, `"recipient": "bob"`, `"recipient": null`, 1)))
	if err != nil || e.Recipient != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte{' '}, MaxEnvelopeSize+1)
	if _, err := ParseEnvelope(big); err == nil || err.Error() != "envelope too large (2000001 bytes, max 2000000)" {
		t.Fatal(err)
	}
	if _, err := ReadEnvelope(bytes.NewReader(append(big, big...))); !errors.Is(err, ErrEnvelopeTooLarge) {
		t.Fatal(err)
	}
	huge := NewPackageEnvelope(strings.Repeat("\"", 1_000_000), time.Unix(0, 0), nil, "", nil)
	if _, err := huge.Marshal(); !errors.Is(err, ErrEnvelopeTooLarge) {
		t.Fatal(err)
	}
	if ContentA2AMessage.HeaderName() != "a2a_message" || ContentA2ATask.HeaderName() != "a2a_task" {
		t.Fatal("header names")
	}
	if len(DaemonFingerprint("3.9.18", "/usr/bin/lean-ctx")) != 16 {
		t.Fatal("fingerprint")
	}
}
