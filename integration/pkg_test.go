package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// snapFileResult is one object of `git ctx verify FILE --json`.
type snapFileResult = testrepo.FileResult

// snapVerifyFile runs `git ctx verify FILE --json` on d.
func snapVerifyFile(t *testing.T, d *syncDevice, file string) (snapFileResult, result) {
	t.Helper()
	r := d.ctx(t, "verify", file, "--json")
	return testrepo.DecodeVerifyFile(t, file, r.toRepo()), r
}

// pkgBuild builds a package in d's work tree and returns its path.
func pkgBuild(t *testing.T, d *syncDevice, file string, args ...string) string {
	t.Helper()
	p := filepath.Join(d.s.root, file)
	d.must(t, append([]string{"pkg", "build", "-o", p}, args...)...)
	return p
}

// TestPkgWrapUnwrap: wrap with the secret from a file, unwrap with it from
// a descriptor (flag and GIT_CTX_SECRET_FD); a wrong secret and a tampered
// payload are rejected (1); no secret is a usage error (2); an envelope over
// 2,000,000 bytes is refused (7); the secret is never printed; verify FILE
// --json recognises the envelope.
func TestPkgWrapUnwrap(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	a.cp(t, "wrap me")
	f := pkgBuild(t, a, "w.ctxpkg", "--name", "w", "--version", "1", "--sign")
	const secret = "s3cr3t-value-never-printed"
	key := filepath.Join(s.root, "key.txt")
	writeFile(t, key, secret+"\n")
	env := filepath.Join(s.root, "w.env.json")
	r := a.ctx(t, "pkg", "wrap", f, "--to", "agent-b", "--secret-file", key, "-o", env)
	wantCode(t, "wrap", r, 0)
	text := string(readFile(t, env))
	for _, want := range []string{`"content_type": "context_package"`, `"recipient": "agent-b"`, `"signature": "`} {
		if !strings.Contains(text, want) {
			t.Fatalf("envelope lacks %s:\n%s", want, text)
		}
	}
	res, vr := snapVerifyFile(t, a, env)
	wantCode(t, "verify envelope FILE", vr, 0)
	if res.Format != "envelope" || !res.Valid || !hexHash.MatchString(res.ID) {
		t.Fatalf("verify envelope --json: %+v", res)
	}

	out1 := filepath.Join(s.root, "u1.ctxpkg")
	r1 := execute(t, a.dir, a.env, nil, "sh", "-c", `exec git ctx pkg unwrap "$1" -o "$2" --secret-fd 3 3<"$3"`, "sh", env, out1, key)
	wantCode(t, "unwrap --secret-fd", r1, 0)
	if string(readFile(t, out1)) != string(readFile(t, f)) || !strings.Contains(r1.stdout, "lean-ctx form") {
		t.Fatalf("unwrap --secret-fd: %s", r1)
	}
	out2 := filepath.Join(s.root, "u2.ctxpkg")
	r2 := execute(t, a.dir, withEnv(a.env, "GIT_CTX_SECRET_FD=4"), nil, "sh", "-c", `exec git ctx pkg unwrap "$1" -o "$2" 4<"$3"`, "sh", env, out2, key)
	wantCode(t, "unwrap GIT_CTX_SECRET_FD", r2, 0)
	if string(readFile(t, out2)) != string(readFile(t, f)) {
		t.Fatal("unwrap via GIT_CTX_SECRET_FD wrote other bytes")
	}

	wrong := filepath.Join(s.root, "wrong.txt")
	writeFile(t, wrong, "not-the-secret")
	out3 := filepath.Join(s.root, "u3.ctxpkg")
	r3 := a.ctx(t, "pkg", "unwrap", env, "--secret-file", wrong, "-o", out3)
	wantCode(t, "unwrap with a wrong secret", r3, 1)
	wantOneLine(t, "wrong secret error", r3.stderr)
	if _, err := os.Stat(out3); err == nil {
		t.Fatal("a rejected unwrap wrote its output")
	}
	wantCode(t, "unwrap without a secret", a.ctx(t, "pkg", "unwrap", env, "-o", out3), 2)
	wantCode(t, "wrap without a secret", a.ctx(t, "pkg", "wrap", f), 2)

	// A payload changed after signing: the HMAC fails.
	tampered := filepath.Join(s.root, "t.env.json")
	writeFile(t, tampered, strings.Replace(text, `wrap me`, `wrap it`, 1))
	wantCode(t, "unwrap a tampered envelope", a.ctx(t, "pkg", "unwrap", tampered, "--secret-file", key, "-o", out3), 1)

	// Over 2,000,000 bytes: refused.
	big := filepath.Join(s.root, "big.env.json")
	writeFile(t, big, `{"format_version":1,"content_type":"context_package","payload_json":"`+strings.Repeat("x", 2_000_000)+`"}`)
	wantCode(t, "unwrap over the limit", a.ctx(t, "pkg", "unwrap", big, "--secret-file", key), 7)
	_, vr = snapVerifyFile(t, a, big)
	wantCode(t, "verify FILE envelope over the limit", vr, 7)

	for _, rr := range []result{r, r1, r2, r3} {
		if strings.Contains(rr.stdout+rr.stderr, secret) || strings.Contains(rr.stdout+rr.stderr, "not-the-secret") {
			t.Fatalf("a secret was printed: %s", rr)
		}
	}
}
