package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// allObjects is every object of the repository at dir as git reads it.
func allObjects(t *testing.T, dir string) map[plumbing.Hash][]byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	objs := map[plumbing.Hash][]byte{}
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return objs
		}
		f := strings.Fields(line)
		if err != nil || len(f) != 3 {
			t.Fatalf("cat-file header %q: %v", line, err)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		objs[plumbing.NewHash(f[0])] = data[:n]
	}
}

// TestDirectReaderMatchesGit reads every object of a repository directly,
// loose and then packed with offset deltas and with reference deltas, and
// compares each with git's own reading.
func TestDirectReaderMatchesGit(t *testing.T) {
	isolate(t)
	_, dir := newStore(t)
	var text strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&text, "line %d of a file that changes a little in every commit\n", i)
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(text.String()), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("g%d.txt", i%7)), []byte(text.String()[:len(text.String())/2]), 0o644)
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", fmt.Sprint("change ", i))
	}
	for _, stage := range []struct {
		name string
		args []string
	}{
		{"loose", nil},
		{"packed, offset deltas", []string{"repack", "-adfq", "--depth=50", "--window=50"}},
		{"packed, reference deltas", []string{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--depth=50", "--window=50"}},
	} {
		t.Run(stage.name, func(t *testing.T) {
			if stage.args != nil {
				git(t, dir, stage.args...)
				git(t, dir, "prune-packed")
			}
			want := allObjects(t, dir)
			if len(want) < 150 {
				t.Fatalf("only %d objects", len(want))
			}
			d := &directReader{objects: filepath.Join(dir, ".git", "objects")}
			defer d.close()
			direct := 0
			for id, data := range want {
				_, got, err := d.read(id)
				if err != nil {
					continue // left to go-git: allowed, counted below
				}
				direct++
				if !bytes.Equal(got, data) {
					t.Fatalf("object %s differs from git's", id)
				}
			}
			// Every loose object, and the first directReadLimit packed ones, are read directly.
			if min := min(len(want), directReadLimit); direct < min {
				t.Fatalf("%d of %d objects read directly, want at least %d", direct, len(want), min)
			}
			if _, _, err := d.read(plumbing.NewHash(strings.Repeat("ab", 20))); err == nil {
				t.Fatal("a missing object was read")
			}
		})
	}
}

// TestApplyDeltaRefusesDamage: truncated or inconsistent deltas are errors.
func TestApplyDeltaRefusesDamage(t *testing.T) {
	base := []byte("hello, world")
	// src 12, dst 5; copy offset 7 size 5.
	good := []byte{12, 5, 0x80 | 0x01 | 0x10, 7, 5}
	if out, err := applyDelta(base, good); err != nil || string(out) != "world" {
		t.Fatalf("good delta: %q %v", out, err)
	}
	for name, delta := range map[string][]byte{
		"wrong source size": {11, 5, 0x91, 7, 5},
		"copy past base":    {12, 5, 0x91, 10, 5},
		"short result":      {12, 6, 0x91, 7, 5},
		"truncated insert":  {12, 5, 5, 'a'},
		"zero opcode":       {12, 5, 0},
		"truncated header":  {12},
	} {
		if _, err := applyDelta(base, delta); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestDirectReaderSeesArrivingPacks: a pack that arrives after the direct
// reader listed the packs (a fetch) is read directly, not left to go-git;
// hasPacked finds packed objects (and neither loose nor missing ones); and
// writeLoose and writeTree do not write a loose copy of an object a pack
// holds (a merge rebuilds trees a fetch brought).
func TestDirectReaderSeesArrivingPacks(t *testing.T) {
	isolate(t)
	s, dir := newStore(t)
	d := s.direct
	missing := plumbing.NewHash(strings.Repeat("ab", 20))
	if d.hasPacked(missing) { // lists the packs (none yet)
		t.Fatal("a missing object is there")
	}
	src := filepath.Join(t.TempDir(), "src")
	git(t, filepath.Dir(src), "init", "-q", "-b", "main", src)
	var content []byte
	for i := 0; i < 5; i++ {
		content = fmt.Appendf(content, "line %d of a file fetched as a pack\n", i)
		os.WriteFile(filepath.Join(src, "f.txt"), content, 0o644)
		git(t, src, "add", ".")
		git(t, src, "commit", "-q", "-m", fmt.Sprint("change ", i))
	}
	git(t, dir, "-c", "fetch.unpackLimit=1", "fetch", "-q", src, "main:refs/heads/fetched")
	blob := plumbing.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "refs/heads/fetched:f.txt")))
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) == 0 {
		t.Fatal("the fetch left no pack")
	}
	typ, data, err := d.read(blob)
	if err != nil || typ != plumbing.BlobObject || !bytes.Equal(data, content) {
		t.Fatalf("blob of the new pack read directly: %v %v %q", typ, err, data)
	}
	if !d.hasPacked(blob) || d.hasPacked(missing) {
		t.Fatalf("hasPacked: fetched blob %v, missing object %v", d.hasPacked(blob), d.hasPacked(missing))
	}
	id, err := s.writeLoose(plumbing.BlobObject, content)
	if err != nil || id != blob {
		t.Fatalf("writeLoose: %s %v, want %s", id, err, blob)
	}
	hexID := blob.String()
	if _, err := os.Lstat(filepath.Join(dir, ".git", "objects", hexID[:2], hexID[2:])); err == nil {
		t.Fatal("writeLoose wrote a loose copy of a packed object")
	}
	tree := plumbing.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "refs/heads/fetched^{tree}")))
	tr, err := s.readTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.writeTree(tr.Entries); err != nil || id != tree {
		t.Fatalf("writeTree: %s %v, want %s", id, err, tree)
	}
	if h := tree.String(); func() bool {
		_, err := os.Lstat(filepath.Join(dir, ".git", "objects", h[:2], h[2:]))
		return err == nil
	}() {
		t.Fatal("writeTree wrote a loose copy of a packed tree")
	}
	fresh, err := s.writeLoose(plumbing.BlobObject, []byte("not in any pack\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h := fresh.String(); d.hasPacked(fresh) || func() bool {
		_, err := os.Lstat(filepath.Join(dir, ".git", "objects", h[:2], h[2:]))
		return err != nil
	}() {
		t.Fatal("writeLoose did not write a new object loose")
	}
	// Written again, it is found loose (and not written twice).
	if again, err := s.writeLoose(plumbing.BlobObject, []byte("not in any pack\n")); err != nil || again != fresh {
		t.Fatalf("writeLoose of a loose object: %s %v, want %s", again, err, fresh)
	}
}
