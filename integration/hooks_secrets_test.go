package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Secret-shaped test values are built at run time, so that this file holds
// none a scanner would flag.

// fakeHex is 64 lowercase hex characters derived from seed.
func fakeHex(seed string) string { return testrepo.FakeHex(seed) }

func fakeGitHubToken(seed string) string { return testrepo.FakeGitHubToken(seed) }

func fakeAWSKey(seed string) string { return testrepo.FakeAWSKey(seed) }

// fakePrivateKey is a PEM block and its base64 lines.
func fakePrivateKey(seed string) (string, []string) {
	var lines []string
	for i := 0; i < 3; i++ {
		h := fakeHex(seed + string(rune('a'+i)))
		lines = append(lines, "MIIE"+h[:30]+strings.ToUpper(h[30:60]))
	}
	return "-----BEGIN " + "RSA PRIVATE" + " KEY-----\n" + strings.Join(lines, "\n") + "\n-----END " + "RSA PRIVATE" + " KEY-----", lines
}

func fakePassword(seed string) string {
	return "Pw" + fakeHex(seed)[:8] + "-X" + strings.ToUpper(fakeHex(seed)[8:14])
}

// wantNowhere fails if any of secrets occurs on the memory branch (in any
// commit message, any blob of its history, its current tree) or in any file
// of <git-common-dir>/ctx (the cache database among them).
func wantNowhere(t *testing.T, repo string, env []string, secrets ...string) {
	t.Helper()
	testrepo.WantNowhere(t, repo, env, secrets...)
}

// TestHooksSecretHygiene: secrets in commit messages, changed paths and an
// agent's reply are replaced by markers before anything is written; the
// summary notes the redaction; the raw secrets are nowhere on the memory
// branch nor in the cache.
func TestHooksSecretHygiene(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	mustCtx(t, repo, env, "hooks", "install")

	token, token2 := fakeGitHubToken("t1"), fakeGitHubToken("t2")
	aws, aws2 := fakeAWSKey("a1"), fakeAWSKey("a2")
	pemBlock, pemLines := fakePrivateKey("k1")
	password := fakePassword("p1")
	credURL := "https://deploy:" + password + "@git.example.com/team/app.git"

	msg := "rotate the deploy token " + token + "\n\n" +
		"AWS key of the new bucket: " + aws + "\n\n" +
		pemBlock + "\n\n" +
		"mirror: " + credURL + "\n"
	c1 := hkQuietCommit(t, repo, env, msg, map[string]string{"deploy.yml": "bucket: new\n"})
	c2 := hkQuietCommit(t, repo, env, "add notes", map[string]string{"leaked/" + token2 + ".txt": "x\n"})

	// A Codex turn whose reply quotes a key.
	payload, _ := json.Marshal(map[string]any{
		"type": "agent-turn-complete", "thread-id": "thread-secrets", "turn-id": "1", "cwd": repo,
		"last-assistant-message": "Configured the client with " + aws2 + " as asked.",
	})
	if r := execute(t, s.root, env, nil, "git-ctx", "hook", "codex-notify", string(payload)); r.code != 0 || r.stderr != "" {
		t.Fatalf("codex-notify: %s", r)
	}

	list := hkOldestFirst(t, repo, env)
	if got := hkRecordedCommits(list); len(list) != 3 || got[0] != c1 || got[1] != c2 {
		t.Fatalf("checkpoints: %q, want %s %s and the Codex turn", got, c1, c2)
	}
	sum := list[0].Summary
	for _, want := range []string{
		"rotate the deploy token [REDACTED:github-token]\n\n",
		"AWS key of the new bucket: [REDACTED:aws-access-key]",
		"[REDACTED:private-key]",
		"mirror: https://deploy:[REDACTED:credential-url]@git.example.com/team/app.git",
		"Commit: " + c1,
		"[git-ctx redacted 4 secret(s): aws-access-key, credential-url, github-token, private-key]",
	} {
		if !strings.Contains(sum, want) {
			t.Fatalf("summary of the commit with secrets lacks %q:\n%s", want, sum)
		}
	}
	if strings.Join(list[0].Files, ",") != "deploy.yml" {
		t.Fatalf("files of the commit with secrets: %q", list[0].Files)
	}
	if strings.Join(list[1].Files, ",") != "leaked/[REDACTED:github-token].txt" ||
		!strings.Contains(list[1].Summary, "[git-ctx redacted 1 secret(s): github-token]") {
		t.Fatalf("commit with a secret in a path: files %q summary %q", list[1].Files, list[1].Summary)
	}
	if !strings.HasPrefix(list[2].Summary, "Configured the client with [REDACTED:aws-access-key] as asked.") ||
		!strings.Contains(list[2].Summary, "[git-ctx redacted 1 secret(s): aws-access-key]") || list[2].Session != "thread-secrets" {
		t.Fatalf("codex turn with a secret: session %q summary %q", list[2].Session, list[2].Summary)
	}
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify: %s", rep.Raw)
	}
	wantNowhere(t, repo, env, append([]string{token, token2, aws, aws2, password}, pemLines...)...)
}

// TestHooksSecretAtSummaryBound: a secret that straddles the bound put on a
// commit body (or on an agent's reply) must not survive in part: redaction
// has to see the whole secret before the text is cut.
func TestHooksSecretAtSummaryBound(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	mustCtx(t, repo, env, "hooks", "install")

	// The commit body is bounded at 4096 bytes; the token starts 16 bytes
	// before that.
	token := fakeGitHubToken("bound")
	body := strings.Repeat("Lorem ipsum dolor sit amet.\n", 200)[:4096-16-1] + " " + token + "\nend of body\n"
	hkQuietCommit(t, repo, env, "long body", map[string]string{"long.txt": "x\n"})
	mustRun(t, repo, env, "git", "commit", "-q", "--allow-empty", "-m", "a secret at the bound\n\n"+body)

	// Codex replies are bounded at 4000 bytes; the key starts 14 bytes
	// before that.
	aws := fakeAWSKey("bound")
	reply := strings.Repeat("All tests pass now. ", 250)[:4000-14-1] + " " + aws + " is the key."
	payload, _ := json.Marshal(map[string]any{
		"type": "agent-turn-complete", "thread-id": "thread-bound", "cwd": repo, "last-assistant-message": reply,
	})
	if r := execute(t, s.root, env, nil, "git-ctx", "hook", "codex-notify", string(payload)); r.code != 0 {
		t.Fatalf("codex-notify: %s", r)
	}
	if n := len(logJSON(t, repo, env)); n != 3 {
		t.Fatalf("%d checkpoints, want 3", n)
	}
	// Neither secret, nor its first characters past the well-known prefix.
	t.Run("commit-body", func(t *testing.T) { wantNowhere(t, repo, env, token[:4+12]) })
	t.Run("codex-reply", func(t *testing.T) { wantNowhere(t, repo, env, aws[:4+8]) })
}
