package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Every flag that writes a file the user names (and the default file names
// those commands pick) refuses an existing path (exit 7, one line naming it,
// the file untouched) unless --force, which replaces it whole; nothing is
// ever left half-written or as a temporary file beside it.

// dsNoTemp fails if dir holds a temporary file of an atomic write
// (.git-ctx-*.tmp).
func dsNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".git-ctx-") || strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file left in %s: %s", dir, e.Name())
		}
	}
}

// dsWantRefused checks a refused overwrite of path: exit 7, one line naming
// it (as shown, the name the command was given) and --force, the file's
// bytes unchanged.
func dsWantRefused(t *testing.T, what string, r testrepo.Result, path, shown, was string) {
	t.Helper()
	testrepo.WantCode(t, what, r, 7)
	testrepo.WantOneLine(t, what, r.Stderr)
	if !strings.Contains(r.Stderr, shown) || !strings.Contains(r.Stderr, "--force") {
		t.Fatalf("%s: the error does not name %s and --force: %s", what, shown, r.Stderr)
	}
	if got := string(testrepo.ReadFile(t, path)); got != was {
		t.Fatalf("%s: the existing file changed: %q", what, got)
	}
}

func TestOutputFilesNoSilentOverwrite(t *testing.T) {
	s := newSandbox(t)
	a := inproc.Device(s, "A", testrepo.NewRepo(t, s, "A"))
	a.Must(t, "init")
	inproc.Checkpoint(t, a.Dir, a.Env, "-m", "add login\n\nDecision: use JWT", "--session", "s1", "--file", "auth.go")
	snap := snapCreate(t, a)
	src := s.Dir(t, "src")
	pkgFile := filepath.Join(src, "demo.ctxpkg")
	a.Must(t, "pkg", "build", "--name", "demo", "--version", "1.0.0", "-o", pkgFile)
	a.Must(t, "pkg", "publish", pkgFile)
	key := filepath.Join(src, "key")
	testrepo.WriteFile(t, key, "a shared secret\n")
	envFile := filepath.Join(src, "demo.envelope.json")
	a.Must(t, "pkg", "wrap", pkgFile, "--secret-file", key, "-o", envFile)

	id := snap.SnapshotID[:12]
	cases := []struct {
		name string
		args []string // the output path is appended after the flag
		flag string
	}{
		{"pkg build -o", []string{"pkg", "build", "--name", "demo", "--version", "1.0.1"}, "-o"},
		{"pkg build --output", []string{"pkg", "build", "--name", "demo", "--version", "1.0.1"}, "--output"},
		{"pkg get -o", []string{"pkg", "get", "demo@1.0.0"}, "-o"},
		{"pkg wrap -o", []string{"pkg", "wrap", pkgFile, "--secret-file", key}, "-o"},
		{"pkg unwrap -o", []string{"pkg", "unwrap", envFile, "--secret-file", key}, "-o"},
		{"snapshot restore --out", []string{"snapshot", "restore", id}, "--out"},
		{"snapshot publish --out", []string{"snapshot", "publish", id}, "--out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := s.Dir(t, strings.NewReplacer(" ", "_", "-", "").Replace(c.name))
			out := filepath.Join(dir, "out")
			args := func(p string, extra ...string) []string {
				return append(append(append([]string(nil), c.args...), c.flag, p), extra...)
			}

			// A new path is written (no --force needed).
			a.Must(t, args(out)...)
			first := string(testrepo.ReadFile(t, out))
			if first == "" {
				t.Fatal("nothing written")
			}

			// An existing file: refused, untouched.
			const precious = "precious, not to be overwritten\n"
			testrepo.WriteFile(t, out, precious)
			dsWantRefused(t, c.name+" over an existing file", a.Ctx(t, args(out)...), out, out, precious)

			// A symbolic link: refused; with --force the link itself is
			// replaced and its target never written.
			target := filepath.Join(dir, "target")
			testrepo.WriteFile(t, target, precious)
			link := filepath.Join(dir, "link")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			r := a.Ctx(t, args(link)...)
			testrepo.WantCode(t, c.name+" over a symlink", r, 7)
			if got := string(testrepo.ReadFile(t, target)); got != precious {
				t.Fatalf("the link's target changed: %q", got)
			}
			a.Must(t, args(link, "--force")...)
			if got := string(testrepo.ReadFile(t, target)); got != precious {
				t.Fatalf("--force wrote through the link: %q", got)
			}
			if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("--force did not replace the link with a file: %v %v", fi, err)
			}

			// --force replaces the existing file whole.
			a.Must(t, args(out, "--force")...)
			got := string(testrepo.ReadFile(t, out))
			if got == precious || got == "" || !strings.HasPrefix(got, first[:1]) {
				t.Fatalf("--force did not replace the file: %q", got)
			}
			dsNoTemp(t, dir)
		})
	}

	// The default names are outputs too (written in the current
	// directory, here the work tree; wrap's beside its input).
	t.Run("default names", func(t *testing.T) {
		for _, c := range []struct {
			name string
			file string
			args []string
		}{
			{"pkg get", "demo-1.0.0.ctxpkg", []string{"pkg", "get", "demo@1.0.0"}},
			{"pkg unwrap", "demo-1.0.0.ctxpkg", []string{"pkg", "unwrap", envFile, "--secret-file", key}},
			{"pkg build", "demo-1.0.2.ctxpkg", []string{"pkg", "build", "--name", "demo", "--version", "1.0.2"}},
			{"pkg wrap", pkgFile + ".envelope.json", []string{"pkg", "wrap", pkgFile, "--secret-file", key}},
			{"snapshot publish", id + ".ctxsnapshot.json", []string{"snapshot", "publish", id}},
		} {
			p := c.file
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.Dir, p)
			}
			const precious = "precious default\n"
			testrepo.WriteFile(t, p, precious)
			r := a.Ctx(t, c.args...)
			dsWantRefused(t, c.name+" over its default file", r, p, c.file, precious)
			os.Remove(p)
		}
		dsNoTemp(t, a.Dir)
		dsNoTemp(t, src)
	})
}
