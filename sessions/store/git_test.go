package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// testCap is the part size of the git store in tests.
const testCap = 1024

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitMachines makes a bare remote and n clones of it ("machines") and opens
// the git store in each.
func gitMachines(t testing.TB, n int, partCap int64, initArgs ...string) (remote string, stores []*gitStore) {
	t.Helper()
	base := t.TempDir()
	remote = filepath.Join(base, "remote.git")
	runGit(t, base, append([]string{"init", "-q", "--bare", remote}, initArgs...)...)
	runGit(t, remote, "config", "receive.autogc", "false")
	for i := range n {
		dir := filepath.Join(base, "m"+string(rune('a'+i)))
		runGit(t, base, append([]string{"init", "-q", dir}, initArgs...)...)
		runGit(t, dir, "remote", "add", "origin", remote)
		repo, err := gitrepo.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), "git", Options{Repo: repo, Remote: "origin"})
		if err != nil {
			t.Fatal(err)
		}
		g := s.(*gitStore)
		g.cap = partCap
		stores = append(stores, g)
	}
	return remote, stores
}

// keepPacks makes the remote keep pushed packs as they arrive (index-pack)
// instead of exploding pushes of fewer than 100 objects into recompressed
// loose objects (unpack-objects, about 5 times the CPU): what hosting
// services do, and what throughput figures should measure.
func keepPacks(t testing.TB, remote string) {
	runGit(t, remote, "config", "receive.unpackLimit", "1")
}

func gitHarness() harness {
	return harness{
		splitCap: testCap,
		writers:  4,
		open: func(t *testing.T) (Store, Store) {
			_, ss := gitMachines(t, 2, testCap)
			return ss[0], ss[1]
		},
		parts: func(t *testing.T, s Store, key string) int {
			g := s.(*gitStore)
			ctx := testCtx(t)
			// The Get just before fetched the tip into the private ref.
			tip := runGit(t, g.gitDir, "rev-parse", g.ref)
			kind, id, err := g.resolve(ctx, tip, key)
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case kindBlob:
				return 1
			case kindSplit:
				es, err := g.lsTree(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return len(es) - 1
			}
			t.Fatalf("%s: kind %d", key, kind)
			return 0
		},
	}
}

func TestGitConformance(t *testing.T) {
	t.Parallel()
	h := gitHarness()
	h.parallel = true
	runConformance(t, h)
}

func TestGitOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := Open(ctx, "git", Options{}); err == nil {
		t.Fatal("git store without a repository")
	}
	_, ss := gitMachines(t, 1, testCap)
	repo := &gitrepo.Repo{GitDir: ss[0].gitDir, CommonDir: ss[0].gitDir}
	for _, spec := range []string{"git", ""} {
		if _, err := Open(ctx, spec, Options{Repo: repo}); err == nil {
			t.Fatalf("%q without a remote: accepted", spec)
		}
	}
	s, err := Open(ctx, "git:upstream", Options{Repo: repo, Remote: "origin"})
	if err != nil || s.(*gitStore).remote != "upstream" || s.(*gitStore).ref != "refs/ctx/sessions/upstream" {
		t.Fatalf("git:upstream: %v %v", s, err)
	}
	if _, err := Open(ctx, "git:--upload-pack=evil", Options{Repo: repo}); err == nil {
		t.Fatal("option-like remote accepted")
	}
	s, err = Open(ctx, "git:https://user:tok3n@example.com/r.git", Options{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Describe(); strings.Contains(d, "tok3n") || strings.Contains(d, "user") {
		t.Fatalf("description shows credentials: %s", d)
	}
	if r := s.(*gitStore).ref; !strings.HasPrefix(r, "refs/ctx/sessions/x-") {
		t.Fatalf("private ref for a URL: %s", r)
	}
}

// TestGitLayout checks what lands on the remote branch: the key paths, the
// split representation and the commit subjects; and that the user's HEAD,
// index and work tree are untouched.
func TestGitLayout(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	remote, ss := gitMachines(t, 1, testCap)
	g := ss[0]
	work := filepath.Dir(g.gitDir)
	os.WriteFile(filepath.Join(work, "f.txt"), []byte("user work\n"), 0o644)
	runGit(t, work, "add", "f.txt")
	key := "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/snapshots/7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6.age"
	data := patterned(3*testCap+10, 7)
	if _, err := g.Create(ctx, key, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(ctx, "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/manifest.age", strings.NewReader("m")); err != nil {
		t.Fatal(err)
	}
	files := runGit(t, remote, "ls-tree", "-r", "--name-only", "ghyll/sessions")
	want := "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/manifest.age\n" +
		key + "/.ctx-split\n" + key + "/00000\n" + key + "/00001\n" + key + "/00002\n" + key + "/00003"
	if files != want {
		t.Fatalf("remote tree:\n%s\nwant:\n%s", files, want)
	}
	index := runGit(t, remote, "cat-file", "blob", "ghyll/sessions:"+key+"/.ctx-split")
	if !strings.HasPrefix(index, "git-ctx split object v1\nsize 3082\nsha256 "+sha256Hex(data)+"\nparts 4\npart 1024 ") {
		t.Fatalf("index:\n%s", index)
	}
	// A part of a split object is not a key.
	if _, _, err := g.Get(ctx, key+"/00000"); !errors.Is(err, ErrNoObject) {
		t.Fatalf("get of a part: %v", err)
	}
	if _, err := g.Create(ctx, key+"/00009", strings.NewReader("x")); err == nil {
		t.Fatal("create inside a split object succeeded")
	}
	subjects := runGit(t, remote, "log", "--format=%s%x00%P", "ghyll/sessions")
	lines := strings.Split(subjects, "\n")
	if len(lines) != 2 || lines[0] != "ctx: session object profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/manifest.age\x00"+runGit(t, remote, "rev-parse", "ghyll/sessions~1") ||
		lines[1] != "ctx: session object "+key+"\x00" {
		t.Fatalf("history: %q", lines)
	}
	for _, blob := range strings.Split(runGit(t, remote, "ls-tree", "-r", "--format=%(objectsize)", "ghyll/sessions"), "\n") {
		if len(blob) > 4 && blob > "1024" {
			t.Fatalf("blob of %s bytes above the cap", blob)
		}
	}
	if out := runGit(t, work, "status", "--porcelain"); out != "A  f.txt" {
		t.Fatalf("work tree or index changed: %q", out)
	}
	if _, err := exec.Command("git", "-C", work, "rev-parse", "--verify", "-q", "HEAD").Output(); err == nil {
		t.Fatal("HEAD now points at a commit")
	}
	if refs := runGit(t, work, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/ctx"); refs != "refs/ctx/sessions/origin" {
		t.Fatalf("local refs: %q", refs)
	}
}

func sha256Hex(b []byte) string {
	return hexSum(b)
}

// tamper replaces the object at key on the remote with the split tree made
// of the given entries (a hostile or broken remote), pushed from machine g.
func tamper(t *testing.T, g *gitStore, key string, edit func(es []treeEntry) []treeEntry) {
	t.Helper()
	ctx := testCtx(t)
	tip, err := g.lockedFetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, id, err := g.resolve(ctx, tip, key)
	if err != nil {
		t.Fatal(err)
	}
	es, err := g.lsTree(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	nt, err := g.mktree(ctx, edit(es))
	if err != nil {
		t.Fatal(err)
	}
	root, err := g.rewrite(ctx, tip, key, treeEntry{mode: "040000", typ: "tree", id: nt})
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.commit(ctx, root, tip, key)
	if err != nil {
		t.Fatal(err)
	}
	if rej, err := g.push(ctx, c); err != nil || rej != "" {
		t.Fatalf("push: %v %v", rej, err)
	}
}

func blobOf(t *testing.T, g *gitStore, content []byte) string {
	id, _, _, err := g.writeBlobFrom(bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestGitDamagedParts: a part altered, truncated, missing or reordered, and a
// bad index, are read errors, never a clean EOF. The first case goes through
// a remote (machine b pushes the damage, machine a reads it); the others
// build the damaged tree locally.
func TestGitDamagedParts(t *testing.T) {
	t.Parallel()
	_, ss := gitMachines(t, 2, testCap)
	a, b := ss[0], ss[1]
	ctx := testCtx(t)
	data := patterned(3*testCap, 3)
	key := "profiles/p/snapshots/s.age"
	if _, err := a.Create(ctx, key, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	alter := func(g *gitStore) func(es []treeEntry) []treeEntry {
		return func(es []treeEntry) []treeEntry {
			alt := bytes.Clone(data[testCap : 2*testCap])
			alt[100] ^= 1
			return setEntry(es, "00001", blobOf(t, g, alt))
		}
	}
	tamper(t, b, key, alter(b))
	rc, _, err := a.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err == nil || len(got) > 2*testCap {
		t.Fatalf("altered part through the remote: read %d bytes, err %v", len(got), err)
	}

	// The original tree, as machine a wrote it.
	orig, err := a.writeObject(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	origEntries, err := a.lsTree(ctx, orig.id)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := a.openEntry(ctx, kindSplit, orig.id); err != nil {
		t.Fatal(err)
	} else if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("undamaged: %v", err)
	}
	idx, _ := findEntry(origEntries, splitIndexName)
	indexText := runGit(t, a.gitDir, "cat-file", "blob", idx.id) + "\n"
	cases := map[string]func(es []treeEntry) []treeEntry{
		"altered": alter(a),
		"truncated": func(es []treeEntry) []treeEntry {
			return setEntry(es, "00002", blobOf(t, a, data[2*testCap:3*testCap-1]))
		},
		"swapped": func(es []treeEntry) []treeEntry {
			p0, _ := findEntry(es, "00000")
			p1, _ := findEntry(es, "00001")
			return setEntry(setEntry(es, "00000", p1.id), "00001", p0.id)
		},
		"missing": func(es []treeEntry) []treeEntry {
			var out []treeEntry
			for _, e := range es {
				if e.name != "00002" {
					out = append(out, e)
				}
			}
			return out
		},
		"extra": func(es []treeEntry) []treeEntry {
			return append(es, treeEntry{mode: "100644", typ: "blob", id: blobOf(t, a, []byte("x")), name: "00003"})
		},
		"bad index": func(es []treeEntry) []treeEntry {
			return setEntry(es, splitIndexName, blobOf(t, a, []byte("git-ctx split object v1\nsize 1\n")))
		},
		"index lies about the whole": func(es []treeEntry) []treeEntry {
			text := strings.Replace(indexText, "sha256 "+sha256Hex(data), "sha256 "+strings.Repeat("0", 64), 1)
			return setEntry(es, splitIndexName, blobOf(t, a, []byte(text)))
		},
	}
	for name, edit := range cases {
		id, err := a.mktree(ctx, edit(append([]treeEntry(nil), origEntries...)))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := a.openEntry(ctx, kindSplit, id)
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if err == nil {
			t.Errorf("%s: read without error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func setEntry(es []treeEntry, name, id string) []treeEntry {
	out := make([]treeEntry, 0, len(es))
	for _, e := range es {
		if e.name == name {
			e.id = id
		}
		out = append(out, e)
	}
	return out
}

// TestGitEarlyClose: closing a reader mid-object stops git and does not hang.
func TestGitEarlyClose(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	_, ss := gitMachines(t, 1, 64<<10)
	data := patterned(1<<20, 5)
	if _, err := ss[0].Create(ctx, "a/b", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	rc, _, err := ss[0].Get(ctx, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	if _, err := io.ReadFull(rc, buf); err != nil || !bytes.Equal(buf, data[:1000]) {
		t.Fatalf("partial read: %v", err)
	}
	rc.Close()
}

// TestGitUpdateSameContent: an update to identical bytes keeps the version.
func TestGitRemoteRollback(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	remote, ss := gitMachines(t, 1, testCap)
	g := ss[0]
	v1, err := g.Create(ctx, "p/manifest.age", strings.NewReader("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Update(ctx, "p/manifest.age", strings.NewReader("two"), v1); err != nil {
		t.Fatal(err)
	}
	// The remote rolls the branch back (force-push by someone): the store
	// follows the remote, it does not resurrect its own newer state.
	runGit(t, remote, "update-ref", "refs/heads/ghyll/sessions", "refs/heads/ghyll/sessions~1")
	got, v := mustGet(t, g, "p/manifest.age")
	if string(got) != "one" || v != v1 {
		t.Fatalf("after rollback: %q %q", got, v)
	}
	// The branch deleted: everything is absent again.
	runGit(t, remote, "update-ref", "-d", "refs/heads/ghyll/sessions")
	if _, _, err := g.Get(ctx, "p/manifest.age"); !errors.Is(err, ErrNoObject) {
		t.Fatalf("after deletion: %v", err)
	}
	if keys, err := g.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("list after deletion: %q %v", keys, err)
	}
}

// TestGitBadRemote: an unreachable remote is an error that names it without
// credentials.
func TestGitBadRemote(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	_, ss := gitMachines(t, 1, testCap)
	repo := &gitrepo.Repo{GitDir: ss[0].gitDir, CommonDir: ss[0].gitDir}
	s, err := Open(ctx, "git:https://u:secret@127.0.0.1:1/r.git", Options{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Get(ctx, "a/b")
	if err == nil || errors.Is(err, ErrNoObject) {
		t.Fatalf("get from a missing remote: %v", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("error shows the credential: %v", err)
	}
}

// TestGitSHA256Repository: a repository (and remote) with SHA-256 object
// ids works the same, split objects included.
func TestGitSHA256Repository(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	_, ss := gitMachines(t, 2, testCap, "--object-format=sha256")
	if !ss[0].objects.SHA256 {
		t.Fatal("object format not detected")
	}
	data := patterned(2*testCap+1, 11)
	v, err := ss[0].Create(ctx, "p/snapshots/s.age", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 64 {
		t.Fatalf("version %q is not a SHA-256 object id", v)
	}
	got, gv := mustGet(t, ss[1], "p/snapshots/s.age")
	if !bytes.Equal(got, data) || gv != v {
		t.Fatal("round trip differs")
	}
}

// TestGitHookDeclines: a remote that refuses the update (a pre-receive hook)
// is reported with git's reason, without retrying until the attempts run out.
func TestGitHookDeclines(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	remote, ss := gitMachines(t, 1, testCap)
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho protected branch >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := ss[0].Create(ctx, "p/manifest.age", strings.NewReader("m"))
	if err == nil || !strings.Contains(err.Error(), "rejected") || errors.Is(err, ErrExists) {
		t.Fatalf("create against a declining hook: %v", err)
	}
	t.Log(err)
}
