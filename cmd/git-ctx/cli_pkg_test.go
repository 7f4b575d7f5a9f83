package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
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

func cliPkgList(t *testing.T, d *testrepo.Device) []pkgInfo {
	t.Helper()
	var l []pkgInfo
	out := d.Must(t, "pkg", "list", "--json")
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("pkg list --json: %v\n%s", err, out)
	}
	return l
}

func cliPkgVerify(t *testing.T, d *testrepo.Device, files ...string) ([]pkgCheck, testrepo.Result) {
	t.Helper()
	r := d.Ctx(t, append([]string{"pkg", "verify", "--json"}, files...)...)
	var l []pkgCheck
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil || len(l) != len(files) {
		t.Fatalf("pkg verify --json: %v\n%s", err, r)
	}
	return l, r
}

// pkgBuild builds a package in d's work tree and returns its path.
func cliPkgBuild(t *testing.T, d *testrepo.Device, file string, args ...string) string {
	t.Helper()
	p := filepath.Join(d.Sandbox.Root, file)
	d.Must(t, append([]string{"pkg", "build", "-o", p}, args...)...)
	return p
}

// TestPkgRoundTrip: build (session layer from checkpoints, gotchas from
// --from) → verify → inspect → publish → list → get on one clone; publish
// of the same file is a no-op, of a different one under the same
// name@version is refused (6); get picks the highest version; a tampered
// file lists every failure (1); files over the size limit are refused (7);
// verify FILE --json recognises the package.
func TestPkgRoundTrip(t *testing.T) {
	s := newSandbox(t)
	a := inproc.Device(s, "A", testrepo.NewRepo(t, s, "A"))
	a.Must(t, "init")
	inproc.Checkpoint(t, a.Dir, a.Env, "-m", "add login\n\nDecision: use JWT\nBecause: stateless", "--session", "s1", "--file", "auth.go")
	inproc.Checkpoint(t, a.Dir, a.Env, "-m", "middleware done\n\nNext: rate limiting", "--session", "s1", "--file", "mw.go", "--file", "auth.go")
	from := filepath.Join(s.Root, "gotchas.json")
	testrepo.WriteFile(t, from, `{"gotchas":{"gotchas":[{"id":"g1","category":"build","severity":"warning","trigger":"cgo off","resolution":"set CGO_ENABLED=1","file_patterns":["*.go"],"confidence":0.9}],"exported_at":"2026-01-01T00:00:00Z"}}`)

	f := cliPkgBuild(t, a, "auth.ctxpkg", "--name", "@team/auth", "--version", "1.0.0", "--sign", "--from", from)
	raw := string(testrepo.ReadFile(t, f))
	pkgRoundBuilt(t, a, f, raw)
	pkgRoundPublish(t, a, f)
	pkgRoundListGet(t, s, a, raw)
	pkgRoundTampered(t, s, a, f, raw)
	pkgRoundLimits(t, s, a)
}

// pkgRoundBuilt: the built package holds the session and gotchas layers,
// verifies (pkg verify, inspect, verify FILE as ctxpkg).
func pkgRoundBuilt(t *testing.T, a *testrepo.Device, f, raw string) {
	t.Helper()
	for _, want := range []string{`"task_description": "add login"`, `"summary": "use JWT"`, `"rationale": "stateless"`,
		`"next_steps": [`, `"rate limiting"`, `"files_touched": [`, `"mw.go"`, `"trigger": "cgo off"`, `"algorithm": "ed25519"`} {
		if !strings.Contains(raw, want) {
			t.Fatalf("built package lacks %s:\n%s", want, raw)
		}
	}
	checks, r := cliPkgVerify(t, a, f)
	testrepo.WantCode(t, "pkg verify", r, 0)
	c := checks[0]
	if !c.Valid || !c.Signed || c.Name != "@team/auth" || c.Version != "1.0.0" || !testrepo.HexHash.MatchString(c.SHA256) {
		t.Fatalf("pkg verify: %+v", c)
	}
	var insp struct {
		Valid    bool `json:"valid"`
		Manifest struct {
			Layers []string `json:"layers"`
		} `json:"manifest"`
		Content map[string]int `json:"content"`
	}
	if err := json.Unmarshal([]byte(a.Must(t, "pkg", "inspect", f, "--json")), &insp); err != nil || !insp.Valid ||
		strings.Join(insp.Manifest.Layers, ",") != "session,gotchas" || insp.Content["gotchas"] != 1 {
		t.Fatalf("pkg inspect: %+v %v", insp, err)
	}

	// verify FILE --json: format ctxpkg, id = integrity.sha256.
	res, r := snapVerifyFile(t, a, f)
	testrepo.WantCode(t, "verify FILE", r, 0)
	if res.Format != "ctxpkg" || !res.Valid || res.ID != c.SHA256 {
		t.Fatalf("verify FILE --json: %+v", res)
	}
}

// pkgRoundPublish: publish; again (no-op); a different package under the
// same name@version is refused (6) and moves nothing.
func pkgRoundPublish(t *testing.T, a *testrepo.Device, f string) {
	t.Helper()
	out := a.Must(t, "pkg", "publish", f)
	if !strings.Contains(out, "published @team/auth@1.0.0") {
		t.Fatalf("publish: %s", out)
	}
	if subj := a.Git(t, "log", "-1", "--format=%s", testrepo.MemRef); !strings.HasPrefix(subj, "ctx: package @team/auth@1.0.0 by ") {
		t.Fatalf("publish commit subject %q", subj)
	}
	tip := a.Tip(t)
	out = a.Must(t, "pkg", "publish", f)
	if !strings.Contains(out, "already published, identical") || a.Tip(t) != tip {
		t.Fatalf("republish: %s", out)
	}
	other := cliPkgBuild(t, a, "other.ctxpkg", "--name", "@team/auth", "--version", "1.0.0", "--description", "another")
	r := a.Ctx(t, "pkg", "publish", other)
	testrepo.WantCode(t, "publish a different package under a published name@version", r, 6)
	testrepo.WantOneLine(t, "conflict error", r.Stderr)
	if a.Tip(t) != tip {
		t.Fatal("a refused publish moved the branch")
	}
}

// pkgRoundListGet: list (version order) and get (highest version by
// default); verify and review show the packages.
func pkgRoundListGet(t *testing.T, s *testrepo.Sandbox, a *testrepo.Device, raw string) {
	t.Helper()
	for _, v := range []string{"1.10.0", "1.2.0", "2.0.0-rc.1"} {
		a.Must(t, "pkg", "publish", cliPkgBuild(t, a, "auth-"+v+".ctxpkg", "--name", "@team/auth", "--version", v))
	}
	l := cliPkgList(t, a)
	var versions []string
	for _, p := range l {
		if !p.Verified || p.Name != "@team/auth" {
			t.Fatalf("pkg list: %+v", l)
		}
		versions = append(versions, p.Version)
	}
	if strings.Join(versions, " ") != "1.0.0 1.2.0 1.10.0 2.0.0-rc.1" || !l[0].Signed || l[0].SignerDevice != a.ID(t) {
		t.Fatalf("pkg list: %+v", l)
	}
	got := filepath.Join(s.Root, "got.ctxpkg")
	a.Must(t, "pkg", "get", "@team/auth@1.0.0", "-o", got)
	if string(testrepo.ReadFile(t, got)) != raw {
		t.Fatal("pkg get returned other bytes than were published")
	}
	out := a.Must(t, "pkg", "get", "@team/auth", "-o", got, "--force") // got exists: replacing it needs --force
	if !strings.Contains(out, "@team/auth@2.0.0-rc.1") {
		t.Fatalf("pkg get without a version: %s", out)
	}
	testrepo.WantCode(t, "get a missing version", a.Ctx(t, "pkg", "get", "@team/auth@9", "-o", got), 1)
	if rep := a.WantVerifies(t); rep.Commit == "" {
		t.Fatal("no verify report")
	}
	if out := a.Must(t, "review"); !strings.Contains(out, "+ package @team/auth@1.0.0 ") || !strings.Contains(out, ".ctxpkg: verified") {
		t.Fatalf("review does not show the published package:\n%s", out)
	}
}

// pkgRoundTampered: every failure is listed, exit 1; publish refuses it.
func pkgRoundTampered(t *testing.T, s *testrepo.Sandbox, a *testrepo.Device, f, raw string) {
	t.Helper()
	bad := filepath.Join(s.Root, "bad.ctxpkg")
	testrepo.WriteFile(t, bad, strings.Replace(strings.Replace(raw, `"add login"`, `"add logout"`, 1), `"version": "1.0.0"`, `"version": ".1"`, 1))
	checks, r := cliPkgVerify(t, a, f, bad)
	testrepo.WantCode(t, "pkg verify tampered", r, 1)
	if !checks[0].Valid || checks[1].Valid || len(checks[1].Failures) != 1 || !strings.Contains(checks[1].Failures[0], "version must not start with '.'") {
		t.Fatalf("pkg verify tampered (rules first): %+v", checks)
	}
	testrepo.WriteFile(t, bad, strings.Replace(raw, `"add login"`, `"add logout"`, 1))
	checks, r = cliPkgVerify(t, a, bad)
	testrepo.WantCode(t, "pkg verify tampered content", r, 1)
	if f := checks[0].Failures; len(f) != 3 || !strings.Contains(f[0], "content_hash mismatch") || !strings.Contains(f[1], "byte_size mismatch") ||
		!strings.Contains(f[2], "sha256 mismatch") {
		t.Fatalf("pkg verify tampered content: %+v", checks)
	}
	testrepo.WantCode(t, "publish tampered", a.Ctx(t, "pkg", "publish", bad), 1)
	res, r := snapVerifyFile(t, a, bad)
	testrepo.WantCode(t, "verify tampered FILE", r, 1)
	if res.Format != "ctxpkg" || res.Valid {
		t.Fatalf("verify tampered FILE: %+v", res)
	}
}

// pkgRoundLimits: over the 10,485,760-byte limit is refused (7), at it is
// read; unsafe names and a missing --name are refused before writing.
func pkgRoundLimits(t *testing.T, s *testrepo.Sandbox, a *testrepo.Device) {
	t.Helper()
	// Over the 10,485,760-byte limit: refused (7) before reading.
	big := filepath.Join(s.Root, "big.ctxpkg")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 10_485_761)), 0o644); err != nil {
		t.Fatal(err)
	}
	checks, r := cliPkgVerify(t, a, big)
	testrepo.WantCode(t, "pkg verify over the limit", r, 7)
	if !checks[0].Refused {
		t.Fatalf("pkg verify big: %+v", checks)
	}
	testrepo.WantCode(t, "publish over the limit", a.Ctx(t, "pkg", "publish", big), 7)
	_, r = snapVerifyFile(t, a, big)
	testrepo.WantCode(t, "verify FILE over the limit", r, 7)
	// Exactly at the limit is read (and fails as JSON, not as too large).
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 10_485_760)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, r = cliPkgVerify(t, a, big)
	testrepo.WantCode(t, "pkg verify at the limit", r, 1)
	// Unsafe names are refused before anything is written.
	testrepo.WantCode(t, "build with an unsafe name", a.Ctx(t, "pkg", "build", "--name", "../x", "--version", "1", "-o", big), 7)
	testrepo.WantCode(t, "build without --name", a.Ctx(t, "pkg", "build", "--version", "1"), 2)
}

// TestPkgSyncAcrossClones: a package published on clone A is pushed,
// pulled, listed and fetched on clone B. A remote that carries a tampered
// package, or changes an already-published name@version, is rejected on
// pull with a reason (the conflict exits 6), and nothing of it is merged.
func TestPkgSyncAcrossClones(t *testing.T) {
	s, rem, a := newTeam(t)
	a.Checkpoint(t, "notes for the package")
	f := cliPkgBuild(t, a, "notes.ctxpkg", "--name", "notes", "--version", "1.0.0", "--sign")
	a.Must(t, "pkg", "publish", f)
	a.Must(t, "push")

	b := inproc.CloneDevice(t, s, "B", rem)
	out := b.Must(t, "pull")
	if !strings.Contains(out, "packages: +1 published, verified") {
		t.Fatalf("B pull: %s", out)
	}
	b.Must(t, "init")
	l := cliPkgList(t, b)
	if len(l) != 1 || l[0].Name != "notes" || !l[0].Verified || l[0].SignerDevice != a.ID(t) {
		t.Fatalf("B pkg list: %+v", l)
	}
	got := filepath.Join(s.Root, "b-notes.ctxpkg")
	b.Must(t, "pkg", "get", "notes", "-o", got)
	if string(testrepo.ReadFile(t, got)) != string(testrepo.ReadFile(t, f)) {
		t.Fatal("B fetched other bytes than A published")
	}
	b.WantVerifies(t)

	// B's branch (as an attacker would push it): A's package rewritten, and
	// a new package whose content was changed after sealing.
	body := testrepo.BranchFile(t, b.Dir, b.Env, l[0].Path)
	forged := strings.Replace(body, `"notes for the package"`, `"notes for the attacker"`, 1)
	if forged == body {
		t.Fatal("nothing to forge")
	}
	newPath := strings.Replace(l[0].Path, "/notes/1.0.0.ctxpkg", "/evil/1.0.0.ctxpkg", 1)
	evil := strings.Replace(forged, `"name": "notes"`, `"name": "evil"`, 1)
	testrepo.RewriteBranch(t, b.Dir, b.Env, "forge", testrepo.FileEdit{Path: l[0].Path, Content: forged}, testrepo.FileEdit{Path: newPath, Content: evil})
	// git ctx push refuses to replace a package the remote publishes (even
	// with a file that does not verify); an attacker pushes with plain git.
	r := b.Ctx(t, "push")
	testrepo.WantCode(t, "push replacing a published package", r, 6)
	testrepo.WantOneLine(t, "push refused", r.Stderr)
	b.Git(t, "push", "-q", "origin", "ghyll/memory")

	r = a.Ctx(t, "pull", "--json")
	testrepo.WantCode(t, "A pulls a rewritten package", r, 6)
	for _, want := range []string{`"reason": "package_conflict"`, `"reason": "bad_package"`} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("pull --json lacks %s: %s", want, r)
		}
	}
	l = cliPkgList(t, a)
	if len(l) != 1 || l[0].Name != "notes" || !l[0].Verified {
		t.Fatalf("A lists forged packages: %+v", l)
	}
	if testrepo.BranchFile(t, a.Dir, a.Env, l[0].Path) != string(testrepo.ReadFile(t, f)) {
		t.Fatal("A's published package changed")
	}
	a.WantVerifies(t)
}

// remoteFile returns the bytes of path on the remote's memory branch.
func remoteFile(t *testing.T, rem string, env []string, path string) string {
	t.Helper()
	return inproc.MustRun(t, rem, env, "git", "show", testrepo.MemRef+":"+path)
}

// TestPkgConcurrentPublish: clones A and B publish different files under
// one name@version before syncing. A pushes first; B's pull keeps the
// remote's (A's) copy, withdraws its own (recoverable from the commit the
// message names), says so and exits 6; review and the merge commit show
// the withdrawal; a second pull is clean, B's push carries A's file (the
// remote is not replaced) and A's pull changes nothing.
func TestPkgConcurrentPublish(t *testing.T) {
	s := newSandbox(t)
	rem := testrepo.NewBareRemote(t, s, "remote")
	a := inproc.OriginDevice(t, s, "A", rem)
	b := inproc.CloneDevice(t, s, "B", rem)
	a.Must(t, "init")
	b.Must(t, "init")
	a.Checkpoint(t, "A's notes")
	b.Checkpoint(t, "B's notes")

	fa := cliPkgBuild(t, a, "a.ctxpkg", "--name", "@team/x", "--version", "1.0.0", "--description", "from A", "--sign")
	a.Must(t, "pkg", "publish", fa)
	a.Must(t, "push")
	fb := cliPkgBuild(t, b, "b.ctxpkg", "--name", "@team/x", "--version", "1.0.0", "--description", "from B", "--sign")
	b.Must(t, "pkg", "publish", fb)
	bytesA, bytesB := string(testrepo.ReadFile(t, fa)), string(testrepo.ReadFile(t, fb))
	if bytesA == bytesB {
		t.Fatal("the two packages are identical")
	}
	path := cliPkgList(t, b)[0].Path
	bTip := b.Tip(t)
	b.Must(t, "log") // the cache is built, and a withdrawn package does not make it rebuild

	r := b.Ctx(t, "pull")
	testrepo.WantCode(t, "B pulls a package the remote already published", r, 6)
	testrepo.WantOneLine(t, "superseded error", r.Stderr)
	want := "package @team/x@1.0.0: the remote already published a different package under this name and version; " +
		"the remote's copy is kept and yours was withdrawn — publish yours under a new version (recover it with: git show "
	if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stdout, want) {
		t.Fatalf("pull does not report the withdrawal:\n%s", r)
	}
	if got := testrepo.BranchFile(t, b.Dir, b.Env, path); got != bytesA {
		t.Fatal("B's branch does not hold the remote's package")
	}
	recovery := regexp.MustCompile(`recover it with: git show (\S+) > FILE`).FindStringSubmatch(r.Stderr)
	if recovery == nil || !strings.HasPrefix(bTip, strings.Split(recovery[1], ":")[0]) || !strings.HasSuffix(recovery[1], ":"+path) {
		t.Fatalf("recovery command: %q (B's tip was %s)", recovery, bTip)
	}
	if got := inproc.MustRun(t, b.Dir, b.Env, "git", "show", recovery[1]); got != bytesB {
		t.Fatal("the recovery command does not give back B's package")
	}
	if msg := b.Git(t, "log", "-1", "--format=%B", testrepo.MemRef); !strings.Contains(msg, "Withdrawn: package @team/x@1.0.0 ("+path) {
		t.Fatalf("merge message does not list the withdrawal:\n%s", msg)
	}
	if out := b.Must(t, "review"); !strings.Contains(out, "+ package @team/x@1.0.0 "+path+": SUPERSEDED: this branch's copy") {
		t.Fatalf("review does not show the withdrawal:\n%s", out)
	}
	b.WantVerifies(t)

	testrepo.WantCode(t, "B pulls again", b.Ctx(t, "pull"), 0)
	testrepo.WantCode(t, "B pushes", b.Ctx(t, "push"), 0)
	if remoteFile(t, rem, b.Env, path) != bytesA {
		t.Fatal("B's push replaced the package the remote had published")
	}
	testrepo.WantCode(t, "B syncs again", b.Ctx(t, "sync"), 0)
	r = a.Ctx(t, "pull")
	testrepo.WantCode(t, "A pulls B's push", r, 0)
	if testrepo.BranchFile(t, a.Dir, a.Env, path) != bytesA || len(cliPkgList(t, a)) != 1 {
		t.Fatal("A's package changed")
	}
	a.WantVerifies(t)
	testrepo.WantCode(t, "A pushes", a.Ctx(t, "push"), 0)
	if remoteFile(t, rem, a.Env, path) != bytesA {
		t.Fatal("the remote's package changed")
	}
}

// TestPkgRewrittenOnRemote: a package the remote published is rewritten
// there (with a file that verifies), first by a new commit, then by a
// history that no longer contains the original. Clones that hold the
// original reject it on pull (package_conflict, exit 6), keep their file,
// keep rejecting it on later pulls, and refuse to push over it (exit 6).
func TestPkgRewrittenOnRemote(t *testing.T) {
	s, rem, a := newTeam(t)
	a.Checkpoint(t, "notes")
	f := cliPkgBuild(t, a, "orig.ctxpkg", "--name", "notes", "--version", "1.0.0")
	a.Must(t, "pkg", "publish", f)
	a.Must(t, "push")
	orig := string(testrepo.ReadFile(t, f))
	c := inproc.CloneDevice(t, s, "C", rem)
	c.Must(t, "pull")
	c.Must(t, "init")
	path := cliPkgList(t, a)[0].Path
	forged := string(testrepo.ReadFile(t, cliPkgBuild(t, a, "forged.ctxpkg", "--name", "notes", "--version", "1.0.0", "--description", "forged")))

	// A commit on the remote replaces the published file.
	testrepo.RewriteBranch(t, rem, a.Env, "rewrite", testrepo.FileEdit{Path: path, Content: forged})
	for i, want := range []int{6, 0} { // the second pull has nothing new to report
		r := a.Ctx(t, "pull", "--json")
		testrepo.WantCode(t, "A pulls the rewritten package", r, want)
		if i == 0 && (!strings.Contains(r.Stdout, `"reason": "package_conflict"`) || !strings.Contains(r.Stdout, `"superseded": []`)) {
			t.Fatalf("pull --json: %s", r)
		}
		if testrepo.BranchFile(t, a.Dir, a.Env, path) != orig {
			t.Fatalf("pull %d took the rewritten package", i+1)
		}
	}
	r := a.Ctx(t, "push")
	testrepo.WantCode(t, "A pushes over the rewritten package", r, 6)
	testrepo.WantOneLine(t, "push refused", r.Stderr)
	if !strings.Contains(r.Stderr, "push refused: it would replace package notes@1.0.0") || remoteFile(t, rem, a.Env, path) != forged {
		t.Fatalf("push: %s", r)
	}
	a.WantVerifies(t)

	// A history without the original (a force-push): C, which had it,
	// still knows the remote published it.
	tree := inproc.GitOut(t, rem, a.Env, "rev-parse", testrepo.MemRef+"^{tree}")
	root := inproc.GitOut(t, rem, a.Env, "commit-tree", tree, "-m", "rewritten history")
	inproc.MustRun(t, rem, a.Env, "git", "update-ref", testrepo.MemRef, root)
	for i, want := range []int{6, 0} {
		r := c.Ctx(t, "pull")
		testrepo.WantCode(t, "C pulls a rewritten history", r, want)
		if testrepo.BranchFile(t, c.Dir, c.Env, path) != orig {
			t.Fatalf("C's pull %d took the rewritten package", i+1)
		}
	}
	testrepo.WantCode(t, "C pushes over the rewritten package", c.Ctx(t, "push"), 6)
	if remoteFile(t, rem, c.Env, path) != forged {
		t.Fatal("C's push replaced the remote's package")
	}
}
