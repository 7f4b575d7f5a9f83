package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pkgInfo is one element of `git ctx pkg list --json`.
type pkgInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	SHA256       string   `json:"sha256"`
	Layers       []string `json:"layers"`
	Signed       bool     `json:"signed"`
	SignerDevice string   `json:"signer_device"`
	Path         string   `json:"path"`
	Verified     bool     `json:"verified"`
	Error        string   `json:"error"`
}

// pkgCheck is one element of `git ctx pkg verify --json`.
type pkgCheck struct {
	File     string   `json:"file"`
	Valid    bool     `json:"valid"`
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	SHA256   string   `json:"sha256"`
	Signed   bool     `json:"signed"`
	Failures []string `json:"failures"`
	Refused  bool     `json:"refused"`
}

func pkgList(t *testing.T, d *syncDevice) []pkgInfo {
	t.Helper()
	var l []pkgInfo
	out := d.must(t, "pkg", "list", "--json")
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("pkg list --json: %v\n%s", err, out)
	}
	return l
}

func pkgVerify(t *testing.T, d *syncDevice, files ...string) ([]pkgCheck, result) {
	t.Helper()
	r := d.ctx(t, append([]string{"pkg", "verify", "--json"}, files...)...)
	var l []pkgCheck
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l) != len(files) {
		t.Fatalf("pkg verify --json: %v\n%s", err, r)
	}
	return l, r
}

// pkgBuild builds a package in d's work tree and returns its path.
func pkgBuild(t *testing.T, d *syncDevice, file string, args ...string) string {
	t.Helper()
	p := filepath.Join(d.s.root, file)
	d.must(t, append([]string{"pkg", "build", "-o", p}, args...)...)
	return p
}

// TestPkgRoundTrip: build (session layer from checkpoints, gotchas from
// --from) → verify → inspect → publish → list → get on one clone; publish
// of the same file is a no-op, of a different one under the same
// name@version is refused (6); get picks the highest version; a tampered
// file lists every failure (1); files over the size limit are refused (7);
// verify FILE --json recognises the package.
func TestPkgRoundTrip(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	checkpoint(t, a.dir, a.env, "-m", "add login\n\nDecision: use JWT\nBecause: stateless", "--session", "s1", "--file", "auth.go")
	checkpoint(t, a.dir, a.env, "-m", "middleware done\n\nNext: rate limiting", "--session", "s1", "--file", "mw.go", "--file", "auth.go")
	from := filepath.Join(s.root, "gotchas.json")
	writeFile(t, from, `{"gotchas":{"gotchas":[{"id":"g1","category":"build","severity":"warning","trigger":"cgo off","resolution":"set CGO_ENABLED=1","file_patterns":["*.go"],"confidence":0.9}],"exported_at":"2026-01-01T00:00:00Z"}}`)

	f := pkgBuild(t, a, "auth.ctxpkg", "--name", "@team/auth", "--version", "1.0.0", "--sign", "--from", from)
	raw := string(readFile(t, f))
	for _, want := range []string{`"task_description": "add login"`, `"summary": "use JWT"`, `"rationale": "stateless"`,
		`"next_steps": [`, `"rate limiting"`, `"files_touched": [`, `"mw.go"`, `"trigger": "cgo off"`, `"algorithm": "ed25519"`} {
		if !strings.Contains(raw, want) {
			t.Fatalf("built package lacks %s:\n%s", want, raw)
		}
	}
	checks, r := pkgVerify(t, a, f)
	wantCode(t, "pkg verify", r, 0)
	c := checks[0]
	if !c.Valid || !c.Signed || c.Name != "@team/auth" || c.Version != "1.0.0" || !hexHash.MatchString(c.SHA256) {
		t.Fatalf("pkg verify: %+v", c)
	}
	var insp struct {
		Valid    bool `json:"valid"`
		Manifest struct {
			Layers []string `json:"layers"`
		} `json:"manifest"`
		Content map[string]int `json:"content"`
	}
	if err := json.Unmarshal([]byte(a.must(t, "pkg", "inspect", f, "--json")), &insp); err != nil || !insp.Valid ||
		strings.Join(insp.Manifest.Layers, ",") != "session,gotchas" || insp.Content["gotchas"] != 1 {
		t.Fatalf("pkg inspect: %+v %v", insp, err)
	}

	// verify FILE --json: format ctxpkg, id = integrity.sha256.
	res, r := snapVerifyFile(t, a, f)
	wantCode(t, "verify FILE", r, 0)
	if res.Format != "ctxpkg" || !res.Valid || res.ID != c.SHA256 {
		t.Fatalf("verify FILE --json: %+v", res)
	}

	// publish; again (no-op); a different package under the same name@version.
	out := a.must(t, "pkg", "publish", f)
	if !strings.Contains(out, "published @team/auth@1.0.0") {
		t.Fatalf("publish: %s", out)
	}
	if subj := a.git(t, "log", "-1", "--format=%s", memRef); !strings.HasPrefix(subj, "ctx: package @team/auth@1.0.0 by ") {
		t.Fatalf("publish commit subject %q", subj)
	}
	tip := a.tip(t)
	out = a.must(t, "pkg", "publish", f)
	if !strings.Contains(out, "already published, identical") || a.tip(t) != tip {
		t.Fatalf("republish: %s", out)
	}
	other := pkgBuild(t, a, "other.ctxpkg", "--name", "@team/auth", "--version", "1.0.0", "--description", "another")
	r = a.ctx(t, "pkg", "publish", other)
	wantCode(t, "publish a different package under a published name@version", r, 6)
	wantOneLine(t, "conflict error", r.stderr)
	if a.tip(t) != tip {
		t.Fatal("a refused publish moved the branch")
	}

	// list and get (highest version by default).
	for _, v := range []string{"1.10.0", "1.2.0", "2.0.0-rc.1"} {
		a.must(t, "pkg", "publish", pkgBuild(t, a, "auth-"+v+".ctxpkg", "--name", "@team/auth", "--version", v))
	}
	l := pkgList(t, a)
	var versions []string
	for _, p := range l {
		if !p.Verified || p.Name != "@team/auth" {
			t.Fatalf("pkg list: %+v", l)
		}
		versions = append(versions, p.Version)
	}
	if strings.Join(versions, " ") != "1.0.0 1.2.0 1.10.0 2.0.0-rc.1" || !l[0].Signed || l[0].SignerDevice != a.id(t) {
		t.Fatalf("pkg list: %+v", l)
	}
	got := filepath.Join(s.root, "got.ctxpkg")
	a.must(t, "pkg", "get", "@team/auth@1.0.0", "-o", got)
	if string(readFile(t, got)) != raw {
		t.Fatal("pkg get returned other bytes than were published")
	}
	out = a.must(t, "pkg", "get", "@team/auth", "-o", got)
	if !strings.Contains(out, "@team/auth@2.0.0-rc.1") {
		t.Fatalf("pkg get without a version: %s", out)
	}
	wantCode(t, "get a missing version", a.ctx(t, "pkg", "get", "@team/auth@9", "-o", got), 1)
	if rep := a.wantVerifies(t); rep.Commit == "" {
		t.Fatal("no verify report")
	}
	if out := a.must(t, "review"); !strings.Contains(out, "+ package @team/auth@1.0.0 ") || !strings.Contains(out, ".ctxpkg: verified") {
		t.Fatalf("review does not show the published package:\n%s", out)
	}

	// Tampered: every failure is listed, exit 1; publish refuses it.
	bad := filepath.Join(s.root, "bad.ctxpkg")
	writeFile(t, bad, strings.Replace(strings.Replace(raw, `"add login"`, `"add logout"`, 1), `"version": "1.0.0"`, `"version": ".1"`, 1))
	checks, r = pkgVerify(t, a, f, bad)
	wantCode(t, "pkg verify tampered", r, 1)
	if !checks[0].Valid || checks[1].Valid || len(checks[1].Failures) != 1 || !strings.Contains(checks[1].Failures[0], "version must not start with '.'") {
		t.Fatalf("pkg verify tampered (rules first): %+v", checks)
	}
	writeFile(t, bad, strings.Replace(raw, `"add login"`, `"add logout"`, 1))
	checks, r = pkgVerify(t, a, bad)
	wantCode(t, "pkg verify tampered content", r, 1)
	if f := checks[0].Failures; len(f) != 3 || !strings.Contains(f[0], "content_hash mismatch") || !strings.Contains(f[1], "byte_size mismatch") ||
		!strings.Contains(f[2], "sha256 mismatch") {
		t.Fatalf("pkg verify tampered content: %+v", checks)
	}
	wantCode(t, "publish tampered", a.ctx(t, "pkg", "publish", bad), 1)
	res, r = snapVerifyFile(t, a, bad)
	wantCode(t, "verify tampered FILE", r, 1)
	if res.Format != "ctxpkg" || res.Valid {
		t.Fatalf("verify tampered FILE: %+v", res)
	}

	// Over the 10,485,760-byte limit: refused (7) before reading.
	big := filepath.Join(s.root, "big.ctxpkg")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 10_485_761)), 0o644); err != nil {
		t.Fatal(err)
	}
	checks, r = pkgVerify(t, a, big)
	wantCode(t, "pkg verify over the limit", r, 7)
	if !checks[0].Refused {
		t.Fatalf("pkg verify big: %+v", checks)
	}
	wantCode(t, "publish over the limit", a.ctx(t, "pkg", "publish", big), 7)
	res, r = snapVerifyFile(t, a, big)
	wantCode(t, "verify FILE over the limit", r, 7)
	// Exactly at the limit is read (and fails as JSON, not as too large).
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 10_485_760)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, r = pkgVerify(t, a, big)
	wantCode(t, "pkg verify at the limit", r, 1)
	// Unsafe names are refused before anything is written.
	wantCode(t, "build with an unsafe name", a.ctx(t, "pkg", "build", "--name", "../x", "--version", "1", "-o", big), 7)
	wantCode(t, "build without --name", a.ctx(t, "pkg", "build", "--version", "1"), 2)
}

// TestPkgSyncAcrossClones: a package published on clone A is pushed,
// pulled, listed and fetched on clone B. A remote that carries a tampered
// package, or changes an already-published name@version, is rejected on
// pull with a reason (the conflict exits 6), and nothing of it is merged.
func TestPkgSyncAcrossClones(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.cp(t, "notes for the package")
	f := pkgBuild(t, a, "notes.ctxpkg", "--name", "notes", "--version", "1.0.0", "--sign")
	a.must(t, "pkg", "publish", f)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	out := b.must(t, "pull")
	if !strings.Contains(out, "packages: +1 published, verified") {
		t.Fatalf("B pull: %s", out)
	}
	b.must(t, "init")
	l := pkgList(t, b)
	if len(l) != 1 || l[0].Name != "notes" || !l[0].Verified || l[0].SignerDevice != a.id(t) {
		t.Fatalf("B pkg list: %+v", l)
	}
	got := filepath.Join(s.root, "b-notes.ctxpkg")
	b.must(t, "pkg", "get", "notes", "-o", got)
	if string(readFile(t, got)) != string(readFile(t, f)) {
		t.Fatal("B fetched other bytes than A published")
	}
	b.wantVerifies(t)

	// B's branch (as an attacker would push it): A's package rewritten, and
	// a new package whose content was changed after sealing.
	body := branchFile(t, b.dir, b.env, l[0].Path)
	forged := strings.Replace(body, `"notes for the package"`, `"notes for the attacker"`, 1)
	if forged == body {
		t.Fatal("nothing to forge")
	}
	newPath := strings.Replace(l[0].Path, "/notes/1.0.0.ctxpkg", "/evil/1.0.0.ctxpkg", 1)
	evil := strings.Replace(forged, `"name": "notes"`, `"name": "evil"`, 1)
	rewriteBranch(t, b.dir, b.env, "forge", fileEdit{path: l[0].Path, content: forged}, fileEdit{path: newPath, content: evil})
	b.must(t, "push")

	r := a.ctx(t, "pull", "--json")
	wantCode(t, "A pulls a rewritten package", r, 6)
	for _, want := range []string{`"reason": "package_conflict"`, `"reason": "bad_package"`} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("pull --json lacks %s: %s", want, r)
		}
	}
	l = pkgList(t, a)
	if len(l) != 1 || l[0].Name != "notes" || !l[0].Verified {
		t.Fatalf("A lists forged packages: %+v", l)
	}
	if branchFile(t, a.dir, a.env, l[0].Path) != string(readFile(t, f)) {
		t.Fatal("A's published package changed")
	}
	a.wantVerifies(t)
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
