package redact

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// knownSecrets are whole lines that must never survive redaction, whatever
// surrounds them. All of them are fake.
var knownSecrets = []string{
	"ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "Zz09Yy",
	"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW",
	"glpat-Ab3dE5fG7hJ9kL1mN3pQ",
	"xoxb-123456789012-1234567890123-Ab3dE5fG7hJ9kL1mN3pQ5rS7",
	"https://hooks.slack.com/services/T01ABCDEF/B02ABCDEFGH/Ab3dE5fG7hJ9kL1mN3pQ5rS7",
	"sk_live_Ab3dE5fG7hJ9kL1mN3pQ5rS7",
	"AIzaSyAb3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xYz",
	"sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9",
	"sk-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1h",
	"sk-ant-api03-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9-AA",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
	"npm_Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
	"AKIAZZZZ5555ABCDEFGH",
	"https://bob:Xk9fQ2mL7pR4@git.internal.corp/team/repo.git",
	"aws_secret_access_key = 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",
	"client_secret: Q8fK2mZ7xR4pL9sV3nB6",
	`-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIAb3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9\n-----END EC PRIVATE KEY-----`,
}

func FuzzString(f *testing.F) {
	for _, c := range readCatch(f) {
		f.Add(c.line, uint8(len(c.line)))
	}
	for i, l := range readLines(f, "keep.txt") {
		f.Add(l, uint8(i))
	}
	for i, s := range knownSecrets {
		f.Add(s, uint8(i))
	}
	for _, s := range []string{
		"", "[REDACTED:", "[REDACTED:github-token]", "-----BEGIN PRIVATE KEY-----",
		"https://u:p@", "token=", `password="`, "eyJ", "sk-", "AKIA",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAxyzxyzxyz\n-----END RSA PRIVATE KEY-----",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, k uint8) {
		r := String(s)
		if r.Count == 0 && (r.Text != s || r.Kinds != nil) {
			t.Fatalf("Count 0 but text changed: %q -> %q (%v)", s, r.Text, r.Kinds)
		}
		if r.Count > 0 && len(r.Kinds) == 0 {
			t.Fatalf("Count %d without kinds", r.Count)
		}
		for i := 1; i < len(r.Kinds); i++ {
			if r.Kinds[i-1] >= r.Kinds[i] {
				t.Fatalf("Kinds not sorted and distinct: %v", r.Kinds)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(r.Text) {
			t.Fatalf("valid UTF-8 in, invalid out: %q -> %q", s, r.Text)
		}
		again := String(r.Text)
		if again.Count != 0 || again.Text != r.Text {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", s, r.Text, again.Text)
		}
		if r2 := String(s); !reflect.DeepEqual(r, r2) {
			t.Fatalf("not deterministic for %q", s)
		}

		// A known secret on a line of its own survives no surrounding text.
		secret := knownSecrets[int(k)%len(knownSecrets)]
		in := s + "\n" + secret + "\n" + s
		out := String(in)
		if strings.Contains(out.Text, "\n"+secret+"\n") {
			t.Fatalf("known secret survived:\n in  %q\n out %q", in, out.Text)
		}
		if again := String(out.Text); again.Count != 0 {
			t.Fatalf("not idempotent with a known secret:\n in %q\n out %q\n again %q", in, out.Text, again.Text)
		}
	})
}

func TestKnownSecrets(t *testing.T) {
	for _, s := range knownSecrets {
		if r := String(s); r.Count == 0 || r.Text == s {
			t.Errorf("known secret not redacted: %q", s)
		}
	}
}
