package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The attacker of a directory session store: someone with write access to
// the shared store directory (not to the machines using it) who plants
// symbolic links in it, so that a push writes and a pull reads somewhere
// else. A directory store follows no link below its root: every such link is
// refused (exit 7) with one line naming it, nothing is written outside the
// store and nothing is restored from outside it.

// dsPlant moves the store entry rel (created empty when missing) to a
// directory outside the store and leaves a symbolic link to it in its place;
// the returned function undoes it (once; later calls do nothing).
func dsPlant(t *testing.T, root, outside, rel string) (link string, undo func()) {
	t.Helper()
	link = filepath.Join(root, filepath.FromSlash(rel))
	target := filepath.Join(outside, strings.ReplaceAll(rel, "/", "_"))
	if _, err := os.Lstat(link); os.IsNotExist(err) {
		if err := os.MkdirAll(link, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(link, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	done := false
	return link, func() {
		t.Helper()
		if done {
			return
		}
		done = true
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(target, link); err != nil {
			t.Fatal(err)
		}
	}
}

// dsHeadSnapshot is the single snapshot file of the profile whose name sorts
// last by modification time (the head after the latest push).
func dsHeadSnapshot(t *testing.T, root, profile string) string {
	t.Helper()
	dir := filepath.Join(root, "profiles", profile, "snapshots")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var best string
	var bestT time.Time
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if best == "" || fi.ModTime().After(bestT) {
			best, bestT = e.Name(), fi.ModTime()
		}
	}
	return "profiles/" + profile + "/snapshots/" + best
}

func TestDirStoreSymlinkAttack(t *testing.T) {
	w := newSessWorld(t)
	a := w.machine(t, "alice", "code")
	b := w.machine(t, "bob", "elsewhere")
	const id = "5a0c7e1d-2b3f-4a5b-8c6d-7e8f9a0b1c2d"
	aFile := claudeFile(a.home, a.repo, id)
	bFile := claudeFile(b.home, b.repo, id)
	content := `{"cwd":"` + a.repo + `","n":0}` + "\n"
	writeSession(t, aFile, content, time.Now().Add(-time.Hour))
	// An honest session pushed before the attack.
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	profile := gitOut(t, a.repo, a.env, "config", "--local", "ctx.sessionProfile")
	mustSess(t, b, "pull", "--store", w.store, "--profile", profile)
	if got := string(readFile(t, bFile)); got != mapped(content, a, b) {
		t.Fatalf("honest pull before the attack: %q", got)
	}
	outside := w.s.dir(t, "outside")

	cases := []struct {
		name string
		rel  string // the store entry replaced by a link ("": the head snapshot)
		push bool   // a push must refuse it
		pull bool   // a pull must refuse it
		list bool   // list (which reads the manifest) must refuse it
	}{
		{name: "profile directory", rel: "profiles/" + profile, push: true, pull: true, list: true},
		{name: "snapshots directory", rel: "profiles/" + profile + "/snapshots", push: true, pull: true},
		{name: "manifest file", rel: "profiles/" + profile + "/manifest.age", push: true, pull: true, list: true},
		{name: "snapshot file", pull: true},
		{name: "lock directory", rel: ".ctx-locks", push: true},
	}
	version := func(n int, what string) string {
		return fmt.Sprintf(`{"cwd":%q,"n":%d,"what":%q}`+"\n", a.repo, n, what)
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// An honest version pushed before the attack, which bob has not
			// pulled yet: his pull must read the manifest and the new head.
			before := version(n, "before")
			writeSession(t, aFile, before, time.Now().Add(time.Duration(3*n+1)*time.Minute))
			mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
			rel := c.rel
			if rel == "" {
				rel = dsHeadSnapshot(t, w.root, profile)
			}
			link, undo := dsPlant(t, w.root, outside, rel)
			defer undo() // on failure too: the next case starts from an honest store
			outBefore := treeState(t, outside)
			bBefore := treeState(t, b.home)

			// A newer version on alice's machine: its push must write a
			// snapshot and update the manifest.
			attacked := version(n, "attacked")
			writeSession(t, aFile, attacked, time.Now().Add(time.Duration(3*n+2)*time.Minute))
			if c.push {
				r := sess(t, a, sessPass, "push", "--store", w.store, "--work-factor", sessWF)
				wantCode(t, "push through a "+c.name+" link", r, 7)
				wantOneLine(t, "push through a "+c.name+" link", withoutWarnings(r.stderr))
				if !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "symbolic link") {
					t.Fatalf("push: the error does not name the link %s: %s", link, r.stderr)
				}
				if after := treeState(t, outside); after != outBefore {
					t.Fatalf("push wrote outside the store:\nbefore:\n%s\nafter:\n%s", outBefore, after)
				}
			}
			if c.pull {
				r := sess(t, b, sessPass, "pull", "--store", w.store, "--profile", profile)
				wantCode(t, "pull through a "+c.name+" link", r, 7)
				wantOneLine(t, "pull through a "+c.name+" link", r.stderr)
				if !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "symbolic link") {
					t.Fatalf("pull: the error does not name the link %s: %s", link, r.stderr)
				}
				if treeState(t, b.home) != bBefore {
					t.Fatal("pull restored a session read through the link")
				}
			}
			if c.list {
				r := sess(t, b, sessPass, "list", "--store", w.store, "--profile", profile)
				wantCode(t, "list through a "+c.name+" link", r, 7)
				wantOneLine(t, "list through a "+c.name+" link", r.stderr)
			}
			if treeState(t, outside) != outBefore {
				t.Fatal("something was written outside the store")
			}

			// The link removed: the version pushed before the attack
			// pulls, and a push after it works.
			undo()
			mustSess(t, b, "pull", "--store", w.store, "--profile", profile)
			if got := string(readFile(t, bFile)); got != mapped(before, a, b) {
				t.Fatalf("honest pull of the version pushed before the attack: %q", got)
			}
			mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
			mustSess(t, b, "pull", "--store", w.store, "--profile", profile)
			if got := string(readFile(t, bFile)); got != mapped(attacked, a, b) {
				t.Fatalf("honest pull of the version pushed after the attack: %q", got)
			}
		})
	}
}
