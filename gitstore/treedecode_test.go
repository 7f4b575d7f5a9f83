package gitstore

import (
	"bytes"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// goGitTree decodes data with go-git's object.Tree.Decode.
func goGitTree(data []byte) (*object.Tree, error) {
	mo := &plumbing.MemoryObject{}
	mo.SetType(plumbing.TreeObject)
	mo.Write(data)
	t := &object.Tree{}
	err := t.Decode(mo)
	return t, err
}

// treeBytes is a tree object's content with the entries given as
// "mode name" pairs and ids made from their position.
func treeBytes(entries ...string) []byte {
	var b bytes.Buffer
	for i, e := range entries {
		b.WriteString(e)
		b.WriteByte(0)
		b.Write(bytes.Repeat([]byte{byte(i + 1)}, 20))
	}
	return b.Bytes()
}

// sameAsGoGit fails unless decodeTree either refuses data or gives what
// go-git's Decode gives (which must then succeed).
func sameAsGoGit(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := decodeTree(data)
	want, err := goGitTree(data)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%q: decodeTree accepts what go-git refuses (%v)", data, err)
	}
	if len(got) != len(want.Entries) || len(got) > 0 && !reflect.DeepEqual(got, want.Entries) {
		t.Fatalf("%q: decodeTree %+v, go-git %+v", data, got, want.Entries)
	}
	return true
}

// TestDecodeTreeSameAsGoGit: the one-pass tree decoder gives go-git's
// entries for well-formed trees (every mode class, names with spaces and
// odd bytes) and refuses every tree go-git refuses, and some it accepts
// (which then take go-git's path).
func TestDecodeTreeSameAsGoGit(t *testing.T) {
	accepted := [][]byte{
		nil,
		treeBytes("100644 a.json"),
		treeBytes("40000 ab", "100755 run", "120000 link", "160000 sub", "100664 odd", "644 short", "0 zero"),
		treeBytes("100644 name with spaces", "100644 \xff\xfe", "40000 x y"),
		treeBytes("37777777777 big"),
	}
	for _, data := range accepted {
		if !sameAsGoGit(t, data) {
			t.Errorf("%q: refused", data)
		}
	}
	refused := [][]byte{
		[]byte("100644 a"),                       // no NUL
		[]byte("100644"),                         // no space
		treeBytes("100644 a")[:30],               // truncated id
		treeBytes("100648 a"),                    // not octal
		treeBytes(" a"),                          // empty mode
		treeBytes("100644 "),                     // empty name
		treeBytes("40000000000 big"),             // over 32 bits
		treeBytes("+100644 a"),                   // sign
		treeBytes("0000000000100644 a"),          // long (go-git accepts: its path)
		append(treeBytes("100644 a"), "1006"...), // trailing bytes
		treeBytes("100644 a\x00b"),               // (name ends at the first NUL)
	}
	for _, data := range refused {
		if sameAsGoGit(t, data) {
			if _, err := goGitTree(data); err != nil {
				t.Errorf("%q: accepted", data)
			}
		}
	}
}

// FuzzDecodeTree: a tree comes from the branch, so from any teammate.
// decodeTree never panics, and whatever it accepts go-git's Decode accepts
// with the same entries.
func FuzzDecodeTree(f *testing.F) {
	f.Add(treeBytes("100644 a.json"))
	f.Add(treeBytes("40000 ab", "100755 run", "120000 link", "160000 sub"))
	f.Add([]byte("100644 a"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) { sameAsGoGit(t, data) })
}

// TestReadTreeSameAsGoGit: every tree of a packed two-level branch, read
// by readTree in a long operation (the window and one-pass decoder), is
// go-git's decoding of the object git holds.
func TestReadTreeSameAsGoGit(t *testing.T) {
	dir := packedTwoLevelBranch(t, 200)
	var ids []string
	for _, l := range strings.Split(git(t, dir, "ls-tree", "-r", "-t", BranchRef), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "tree" {
			ids = append(ids, f[2])
		}
	}
	s := reopen(t, dir)
	s.direct.reads = directReadLimit
	for _, id := range ids {
		h := plumbing.NewHash(id)
		got, err := s.readTree(h)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "cat-file", "tree", id)
		cmd.Dir = dir
		raw, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want, err := goGitTree(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hash != h || !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Fatalf("tree %s: %+v, go-git %+v", id, got.Entries, want.Entries)
		}
	}
}
