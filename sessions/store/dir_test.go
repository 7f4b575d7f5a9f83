package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func dirHarness() harness {
	return harness{writers: 8, open: func(t *testing.T) (Store, Store) {
		root := filepath.Join(t.TempDir(), "store")
		a, err := Open(context.Background(), "file://"+root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}}
}

func TestDirConformance(t *testing.T) { runConformance(t, dirHarness()) }

// TestDirConformanceStatVersions runs the conformance suite with every object
// above the hash limit, so versions are file-identity tags.
func TestDirConformanceStatVersions(t *testing.T) {
	h := dirHarness()
	open := h.open
	h.open = func(t *testing.T) (Store, Store) {
		a, b := open(t)
		a.(*dirStore).hashLimit = -1
		b.(*dirStore).hashLimit = -1
		return a, b
	}
	runConformance(t, h)
}

func TestOpenSpecs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, spec := range []string{"file://" + root, "file://localhost" + root, "FILE://" + root} {
		s, err := Open(ctx, spec, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if s.Describe() != "directory store "+root {
			t.Fatalf("%s: %q", spec, s.Describe())
		}
	}
	s, err := Open(ctx, "file://"+root+"/with%20space", Options{})
	if err != nil || s.Describe() != "directory store "+root+"/with space" {
		t.Fatalf("percent escape: %v %v", s, err)
	}
	for _, spec := range []string{"file://relative/path", "file:relative", "file://host/abs", "file://user:secret@host/x", "s3://user:secret@bucket", "http://x", "file://" + root + "?q=1", "gitx"} {
		_, err := Open(ctx, spec, Options{})
		if err == nil {
			t.Fatalf("%s: accepted", spec)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Fatalf("%s: error shows the credential: %v", spec, err)
		}
	}
}

// TestDirReadsForeignLayout reads objects placed in the Reinstate layout by
// another tool (plain files, as rein's objects copied from a bucket).
func TestDirReadsForeignLayout(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	files := map[string]string{
		"profiles/4f1c2b7e-0a9d-4c3e-b1f2-3d4e5f607182/manifest.age":                                       "age-encryption.org/v1\n-> scrypt ...",
		"profiles/4f1c2b7e-0a9d-4c3e-b1f2-3d4e5f607182/snapshots/0d9e8f7a-6b5c-4d3e-9f1a-2b3c4d5e6f70.age": "age-encryption.org/v1\nsnapshot",
	}
	for k, body := range files {
		p := filepath.Join(root, filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "profiles", ".DS_Store"), []byte("x"), 0o644)
	s, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(ctx, "profiles/")
	if err != nil || len(keys) != 2 {
		t.Fatalf("list: %q %v", keys, err)
	}
	for _, k := range keys {
		got, v := mustGet(t, s, k)
		if string(got) != files[k] {
			t.Fatalf("%s: %q", k, got)
		}
		if strings.HasSuffix(k, "manifest.age") {
			if _, err := s.Update(ctx, k, strings.NewReader("new"), v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestDirTruncatedObject(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := OpenDir(root)
	key := "profiles/p/snapshots/s.age"
	if _, err := s.Create(ctx, key, bytes.NewReader(patterned(10000, 1))); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := os.Truncate(filepath.Join(root, key), 5000); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read of truncated object: %v", err)
	}
}

func TestDirRefusesSymlink(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := OpenDir(root)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret"), 0o600)
	os.MkdirAll(filepath.Join(root, "profiles", "p"), 0o700)
	link := filepath.Join(root, "profiles", "p", "manifest.age")
	os.Symlink(secret, link)
	if _, _, err := s.Get(ctx, "profiles/p/manifest.age"); !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link) {
		t.Fatalf("get of a symlink: %v", err)
	}
	if keys, err := s.List(ctx, ""); !errors.Is(err, ErrSymlink) || len(keys) != 0 {
		t.Fatalf("list over a symlink: %q %v", keys, err)
	}
}

// treeOf lists every path under dir with its type and content, to assert
// that nothing outside a store changed.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", p, e.Type())
		if e.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

// TestDirConfinedLinks: a symbolic link planted anywhere below the root (a
// directory on the way to a key, the key itself, the lock directory) makes
// every operation through it fail with ErrSymlink naming the link, and
// nothing outside the store is read or written.
func TestDirConfinedLinks(t *testing.T) {
	ctx := context.Background()
	const (
		manifest = "profiles/p/manifest.age"
		snap     = "profiles/p/snapshots/s1.age"
		newSnap  = "profiles/p/snapshots/s2.age"
	)
	for _, rel := range []string{"profiles", "profiles/p", "profiles/p/snapshots", manifest, snap, lockDirName} {
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "store")
			s, err := OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			mv, err := s.Create(ctx, manifest, strings.NewReader("manifest"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, snap, strings.NewReader("snapshot")); err != nil {
				t.Fatal(err)
			}
			// The lock directory exists once an update ran.
			if mv, err = s.Update(ctx, manifest, strings.NewReader("manifest 2"), mv); err != nil {
				t.Fatal(err)
			}
			// Move the entry outside and link to it: the link leads to
			// exactly what the store held.
			outside := filepath.Join(t.TempDir(), "outside")
			link := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.Rename(link, outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			before := treeOf(t, filepath.Dir(outside))
			wantLink := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link+" ") {
					t.Fatalf("%s: want an ErrSymlink naming %s, got %v", what, link, err)
				}
			}
			below := func(key string) bool { return key == rel || strings.HasPrefix(key, rel+"/") }
			for _, key := range []string{manifest, snap} {
				if !below(key) {
					continue
				}
				_, _, err := s.Get(ctx, key)
				wantLink("get "+key, err)
			}
			if below(newSnap) {
				_, err := s.Create(ctx, newSnap, strings.NewReader("new"))
				wantLink("create", err)
			}
			if below(manifest) || rel == lockDirName {
				_, err := s.Update(ctx, manifest, strings.NewReader("manifest 3"), mv)
				wantLink("update", err)
			}
			if rel != lockDirName {
				_, err := s.List(ctx, "")
				wantLink("list", err)
				_, err = s.List(ctx, "profiles/")
				wantLink("list profiles/", err)
			}
			if after := treeOf(t, filepath.Dir(outside)); after != before {
				t.Fatalf("outside the store changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			// The link replaced by what it pointed to: everything works.
			os.Remove(link)
			if err := os.Rename(outside, link); err != nil {
				t.Fatal(err)
			}
			if got, _ := mustGet(t, s, snap); string(got) != "snapshot" {
				t.Fatalf("snapshot after the link went: %q", got)
			}
			if _, err := s.Update(ctx, manifest, strings.NewReader("manifest 3"), mv); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, newSnap, strings.NewReader("new")); err != nil {
				t.Fatal(err)
			}
			if keys, err := s.List(ctx, ""); err != nil || len(keys) != 3 {
				t.Fatalf("list after the link went: %q %v", keys, err)
			}
		})
	}
}

// TestDirRefusesSpecialFiles: a FIFO where an object should be is refused at
// once (it would block a reader opening it), and a dangling link is refused
// as a link rather than reported missing.
func TestDirRefusesSpecialFiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root := t.TempDir()
	s, _ := OpenDir(root)
	os.MkdirAll(filepath.Join(root, "profiles", "p"), 0o700)
	if err := unix.Mkfifo(filepath.Join(root, "profiles", "p", "manifest.age"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, _, err := s.Get(ctx, "profiles/p/manifest.age"); err == nil || errors.Is(err, ErrNoObject) {
		t.Fatalf("get of a FIFO: %v", err)
	}
	if _, err := s.Create(ctx, "profiles/p/manifest.age", strings.NewReader("x")); !errors.Is(err, ErrExists) {
		t.Fatalf("create over a FIFO: %v", err)
	}
	os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "profiles", "p", "dangling.age"))
	if _, _, err := s.Get(ctx, "profiles/p/dangling.age"); !errors.Is(err, ErrSymlink) {
		t.Fatalf("get of a dangling link: %v", err)
	}
	if _, err := s.Create(ctx, "profiles/p/dangling.age", strings.NewReader("x")); !errors.Is(err, ErrExists) {
		t.Fatalf("create over a dangling link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "nowhere")); !os.IsNotExist(err) {
		t.Fatalf("create followed a dangling link: %v", err)
	}
}

// Child process mode for TestDirProcesses: re-executed test binary.
const childEnv = "STORE_TEST_CHILD"

func TestDirChildProcess(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("helper for TestDirProcesses")
	}
	ctx := context.Background()
	s, err := OpenDir(os.Getenv("STORE_TEST_ROOT"))
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	id := os.Getenv("STORE_TEST_ID")
	switch mode {
	case "create":
		_, err = s.Create(ctx, "profiles/p/snapshots/"+id+".age", strings.NewReader("child "+id))
	case "update":
		_, err = s.Update(ctx, "profiles/p/manifest.age", strings.NewReader("child "+id), Version(os.Getenv("STORE_TEST_VERSION")))
	}
	switch {
	case err == nil:
		fmt.Println("OK")
	case errors.Is(err, ErrVersionMismatch):
		fmt.Println("MISMATCH")
	default:
		fmt.Println("ERR", err)
	}
}

// TestDirProcesses: N processes create different keys (all land) and update
// one key from the same base version (exactly one wins).
func TestDirProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip()
	}
	ctx := context.Background()
	root := t.TempDir()
	s, _ := OpenDir(root)
	v0, err := s.Create(ctx, "profiles/p/manifest.age", strings.NewReader("base"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	run := func(mode string) []string {
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		for i := range n {
			c := exec.Command(os.Args[0], "-test.run=^TestDirChildProcess$", "-test.count=1")
			c.Env = append(os.Environ(), childEnv+"="+mode, "STORE_TEST_ROOT="+root,
				fmt.Sprint("STORE_TEST_ID=", i), "STORE_TEST_VERSION="+string(v0))
			outs[i] = new(bytes.Buffer)
			c.Stdout = outs[i]
			c.Stderr = outs[i]
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i] = c
		}
		res := make([]string, n)
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("child %d: %v\n%s", i, err, outs[i])
			}
			res[i] = strings.Fields(outs[i].String())[0]
		}
		return res
	}
	for i, r := range run("create") {
		if r != "OK" {
			t.Fatalf("create in child %d: %s", i, r)
		}
	}
	if keys, _ := s.List(ctx, "profiles/p/snapshots/"); len(keys) != n {
		t.Fatalf("after concurrent creates: %q", keys)
	}
	ok := 0
	for i, r := range run("update") {
		switch r {
		case "OK":
			ok++
		case "MISMATCH":
		default:
			t.Fatalf("update in child %d: %s", i, r)
		}
	}
	if ok != 1 {
		t.Fatalf("%d concurrent updates won, want 1", ok)
	}
}

// TestDirVersionKinds: an object up to the hash limit (the manifest) has a
// content version, "sha256:" and the hex of its bytes, the same from Create,
// Get and Update; a larger one (a snapshot) has a stat version that Get
// repeats without reading the object twice. The limit is 8 MiB, so a 9 MiB
// snapshot is neither hashed on write nor on read.
func TestDirVersionKinds(t *testing.T) {
	ctx := testCtx(t)
	s, err := OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	small := bytes.Repeat([]byte("m"), 4<<20+100<<10)
	sum := sha256Hex(small)
	v, err := s.Create(ctx, "profiles/p/manifest.age", bytes.NewReader(small))
	if err != nil || v != Version("sha256:"+sum) {
		t.Fatalf("manifest create: %q %v", v, err)
	}
	rc, gv, err := s.Get(ctx, "profiles/p/manifest.age")
	if err != nil || gv != v {
		t.Fatalf("manifest get: %q %v", gv, err)
	}
	rc.Close()
	if uv, err := s.Update(ctx, "profiles/p/manifest.age", bytes.NewReader([]byte("x")), gv); err != nil || uv != Version("sha256:"+sha256Hex([]byte("x"))) {
		t.Fatalf("manifest update: %q %v", uv, err)
	}
	const big = 9 << 20
	v, err = s.Create(ctx, "profiles/p/snapshots/s.age", genReader(big, 3))
	if err != nil || !strings.HasPrefix(string(v), "stat:") {
		t.Fatalf("snapshot create: %q %v", v, err)
	}
	rc, gv, err = s.Get(ctx, "profiles/p/snapshots/s.age")
	if err != nil || gv != v {
		t.Fatalf("snapshot get: %q (create said %q) %v", gv, v, err)
	}
	rc.Close()
	if n, got, err := readSum(ctx, s, "profiles/p/snapshots/s.age"); err != nil || n != big || !bytes.Equal(got, genSum(big, 3)) {
		t.Fatalf("snapshot read: %d %v", n, err)
	}
}
