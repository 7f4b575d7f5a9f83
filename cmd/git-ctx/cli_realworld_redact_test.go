package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestRedactionOnEveryWritePath: secrets are redacted on every path that
// writes memory, not only in hooks: `checkpoint -m`, `--from-commit`,
// `--stdin`, and the snapshots and packages built from memory (even from a
// record someone stored with --no-redact); the summary notes the redaction;
// `--no-redact` is the explicit way to keep text as it is.
func TestRedactionOnEveryWritePath(t *testing.T) {
	s := newSandbox(t)
	env := testrepo.WithEnv(s.Env("dev"), "CODEX_HOME="+s.Dir(t, "codex-home"))
	repo := testrepo.NewRepo(t, s, "repo")
	inproc.MustCtx(t, repo, env, "init")
	tokM, tokC, tokS, tokF := fakeGitHubToken("redact-m"), fakeGitHubToken("redact-commit"), fakeGitHubToken("redact-stdin"), fakeGitHubToken("redact-file")
	aws := fakeAWSKey("redact-aws")

	cpM := inproc.Checkpoint(t, repo, env, "-m", "deploy with "+tokM+" today", "--file", "conf/"+tokF+".yml", "--tool", "edit")
	testrepo.CommitFiles(t, repo, env, "rotate the deploy token "+tokC, map[string]string{"deploy.txt": "x\n"})
	cpC := inproc.Checkpoint(t, repo, env, "--from-commit", "HEAD")
	stdin, _ := json.Marshal(map[string]any{"message": "aws " + aws + " and " + tokS, "session": "redact-s"})
	r := execute(t, repo, env, stdin, "git", "ctx", "checkpoint", "--stdin", "--json")
	if r.Code != 0 {
		t.Fatalf("checkpoint --stdin: %s", r)
	}
	cpS := testrepo.DecodeRecord(t, []byte(r.Stdout))

	for _, c := range []struct {
		name  string
		rec   testrepo.Record
		kinds string
	}{
		{"-m", cpM, "[git-ctx redacted 2 secret(s): github-token]"},
		{"--from-commit", cpC, "[git-ctx redacted 1 secret(s): github-token]"},
		{"--stdin", cpS, "[git-ctx redacted 2 secret(s): aws-access-key, github-token]"},
	} {
		if !strings.Contains(c.rec.Summary, "[REDACTED:") || !strings.HasSuffix(c.rec.Summary, c.kinds) {
			t.Errorf("checkpoint %s: summary %q, want the secret replaced and the note %q", c.name, c.rec.Summary, c.kinds)
		}
	}
	if len(cpM.Files) != 1 || strings.Contains(cpM.Files[0], tokF) {
		t.Errorf("checkpoint -m --file: files %q still hold the token", cpM.Files)
	}
	if out := inproc.Ctx(t, repo, env, "search", tokM[4:20]); strings.Contains(out.Stdout, tokM) {
		t.Errorf("search finds the token: %s", out)
	}

	// Opting out is explicit and stores the text as it is ...
	tokN := fakeGitHubToken("redact-no")
	cpN := inproc.Checkpoint(t, repo, env, "-m", "kept on purpose "+tokN, "--no-redact", "--session", "redact-s")
	if cpN.Summary != "kept on purpose "+tokN {
		t.Fatalf("checkpoint --no-redact: summary %q", cpN.Summary)
	}
	// ... but what is built from memory does not carry it further.
	snap := filepath.Join(s.Root, "snap.json")
	var created struct {
		ID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal([]byte(inproc.MustCtx(t, repo, env, "snapshot", "create", "--sign", "--json")), &created); err != nil || created.ID == "" {
		t.Fatalf("snapshot create --json: %v", err)
	}
	inproc.MustCtx(t, repo, env, "snapshot", "publish", created.ID[:12], "--out", snap)
	if b := testrepo.ReadFile(t, snap); strings.Contains(string(b), tokN) || !strings.Contains(string(b), "[REDACTED:github-token]") {
		t.Fatalf("snapshot built from memory:\n%s", b)
	}
	pkg := filepath.Join(s.Root, "p.ctxpkg")
	inproc.MustCtx(t, repo, env, "pkg", "build", "--name", "redact", "--version", "1.0.0", "--session", "redact-s", "-o", pkg)
	if b := testrepo.ReadFile(t, pkg); strings.Contains(string(b), tokN) || strings.Contains(string(b), tokS) || !strings.Contains(string(b), "[REDACTED:github-token]") {
		t.Fatalf("package built from memory:\n%s", b)
	}
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	wantNowhere(t, repo, env, tokM, tokC, tokS, tokF, aws)
}

// Secret-shaped test values are built at run time, so that this file holds
// none a scanner would flag.

func fakeGitHubToken(seed string) string { return testrepo.FakeGitHubToken(seed) }

func fakeAWSKey(seed string) string { return testrepo.FakeAWSKey(seed) }

// wantNowhere fails if any of secrets occurs on the memory branch (in any
// commit message, any blob of its history, its current tree) or in any file
// of <git-common-dir>/ctx (the cache database among them).
func wantNowhere(t *testing.T, repo string, env []string, secrets ...string) {
	t.Helper()
	testrepo.WantNowhere(t, repo, env, secrets...)
}
