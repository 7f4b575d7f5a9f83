package session

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSafePath(t *testing.T) {
	long := strings.Repeat("a/", MaxPathLen/2) + "x.jsonl"
	tests := []struct {
		p    string
		want error
	}{
		{"projects/-Users-x-demo/abc.jsonl", nil},
		{"sessions/2026/07/28/rollout-2026-07-28T10-00-00-abc.jsonl", nil},
		{"projects/é/ü.jsonl", nil},
		{"", ErrPathInvalid},
		{`projects\x.jsonl`, ErrPathBackslash},
		{`..\x.jsonl`, ErrPathBackslash},
		{"/etc/passwd", ErrPathAbsolute},
		{"//server/x", ErrPathAbsolute},
		{"C:/x.jsonl", ErrPathAbsolute},
		{"c:x.jsonl", ErrPathAbsolute},
		{"../x.jsonl", ErrPathTraversal},
		{"projects/../../x.jsonl", ErrPathTraversal},
		{"projects/a/../b.jsonl", ErrPathTraversal}, // rc.8 cleans this first and accepts
		{"..", ErrPathTraversal},
		{"projects//x.jsonl", ErrPathInvalid},
		{"./projects/x.jsonl", ErrPathInvalid},
		{"projects/./x.jsonl", ErrPathInvalid},
		{"projects/x/", ErrPathInvalid},
		{".", ErrPathInvalid},
		{"projects/x\x00.jsonl", ErrPathInvalid},
		{"projects/x\n.jsonl", ErrPathInvalid},
		{"projects/x\x7f.jsonl", ErrPathInvalid},
		{"projects/\xff.jsonl", ErrPathInvalid},
		{"projects/x.jsonl:stream", ErrPathInvalid},
		{long, ErrPathTooLong},
		{"projects/" + strings.Repeat("k", 256) + "/x.jsonl", ErrPathTooLong},
		{"projects/" + strings.Repeat("k", 255) + "/x.jsonl", nil},
	}
	for _, tc := range tests {
		err := CheckSafePath(tc.p)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%q: %v", tc.p, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%q: %v, want %v", tc.p, err, tc.want)
		}
	}
	// The sentinels are distinct.
	all := []error{ErrPathTraversal, ErrPathAbsolute, ErrPathBackslash, ErrPathTooLong, ErrPathInvalid}
	for i, a := range all {
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
}

func TestCheckAdapterPath(t *testing.T) {
	tests := []struct {
		agent   string
		p       string
		restore bool
		want    error
	}{
		{AgentClaude, "projects/k/abc.jsonl", true, nil},
		{AgentClaude, "projects/abc.jsonl", false, nil},
		{AgentClaude, "projects/abc.jsonl", true, ErrAdapterPath},
		{AgentClaude, "sessions/abc.jsonl", false, ErrAdapterPath},
		{AgentClaude, "projects/k/abc.json", false, ErrAdapterPath},
		{AgentClaude, "projects/k/.env.jsonl", false, ErrCredentialPath},
		{AgentCodex, "sessions/2026/07/28/rollout-x.jsonl", true, nil},
		{AgentCodex, "sessions/x.jsonl", true, nil},
		{AgentCodex, "projects/x.jsonl", false, ErrAdapterPath},
		{AgentCodex, "sessions", false, ErrAdapterPath},
		{AgentCodex, "sessions/../x.jsonl", false, ErrPathTraversal},
		{"gemini", "sessions/x.jsonl", false, ErrUnknownAgent},
	}
	for _, tc := range tests {
		err := CheckAdapterPath(tc.agent, tc.p, tc.restore)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s %q: %v", tc.agent, tc.p, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%s %q: %v, want %v", tc.agent, tc.p, err, tc.want)
		}
	}
}

func TestCredentialDenylist(t *testing.T) {
	yes := []string{".env", ".ENV", ".env.local", ".Env.Production", "auth.json", "AUTH.JSON",
		".credentials.json", "credentials.json", "oauth.json", "tokens.json", "TOKEN.json",
		"secrets.json", "secret.json", ".env.", "to\u212Aen.json" /* Kelvin sign folds to k */}
	no := []string{"env", ".envrc", "x.env", "auth.jsonl", "my-auth.json", "secrets.yaml", "token", "abc.jsonl", ""}
	for _, n := range yes {
		if !IsCredentialName(n) {
			t.Errorf("%q not denied", n)
		}
	}
	for _, n := range no {
		if IsCredentialName(n) {
			t.Errorf("%q denied", n)
		}
	}
	for p, want := range map[string]bool{
		"projects/k/abc.jsonl":     false,
		"projects/.env/abc.jsonl":  true,
		"projects/k/auth.json":     true,
		`projects\k\secrets.json`:  true,
		"sessions/TOKENS.JSON/a":   true,
		"sessions/a/oauth.json.gz": false,
	} {
		if IsCredentialPath(p) != want {
			t.Errorf("%q: want %v", p, want)
		}
	}
}
