package gitobject

import (
	"bytes"
	"compress/zlib"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T, format string) (string, Writer) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "--object-format="+format)
	return dir, Writer{Dir: filepath.Join(dir, ".git", "objects"), SHA256: format == "sha256"}
}

// Objects written in memory and streamed get the ids git computes, read
// back through git, and pass git fsck; writing one again is a no-op.
func TestWriteMatchesGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir, w := newRepo(t, format)
			content := []byte("hello\x00world\n")
			id, err := w.Write(Blob, content)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "f"), content, 0o644)
			if want := git(t, dir, "hash-object", "f"); id.String() != want {
				t.Fatalf("Write id %s, git says %s", id, want)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14)
			for _, level := range []int{zlib.NoCompression, zlib.BestSpeed} {
				sid, size, err := w.WriteStream(Blob, bytes.NewReader(big), level)
				if err != nil {
					t.Fatal(err)
				}
				if size != int64(len(big)) {
					t.Fatalf("size %d, want %d", size, len(big))
				}
				if got := git(t, dir, "cat-file", "blob", sid.String()); got != string(big) {
					t.Fatalf("streamed blob reads back as %d bytes", len(got))
				}
			}
			if _, err := w.Write(Blob, content); err != nil {
				t.Fatal(err)
			}
			git(t, dir, "fsck", "--strict", "--no-dangling")
			ents, _ := os.ReadDir(w.Dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "tmp_obj_") {
					t.Fatalf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

// WriteTree gives the id `git mktree` gives for the same entries, in any
// input order, with git's ordering of a tree named like a file prefix.
func TestWriteTreeMatchesMktree(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir, w := newRepo(t, format)
			blob, err := w.Write(Blob, []byte("x\n"))
			if err != nil {
				t.Fatal(err)
			}
			sub, err := w.WriteTree([]TreeEntry{{Mode: "100644", Name: "f", ID: blob}})
			if err != nil {
				t.Fatal(err)
			}
			es := []TreeEntry{
				{Mode: "100644", Name: "a.txt", ID: blob},
				{Mode: "040000", Name: "a", ID: sub},
				{Mode: "100755", Name: "a-b", ID: blob},
				{Mode: "100644", Name: "a0", ID: blob},
				{Mode: "100644", Name: "xy", ID: blob},
				{Mode: "40000", Name: "x.d", ID: sub},
				{Mode: "100644", Name: "x", ID: blob},
			}
			id, err := w.WriteTree(es)
			if err != nil {
				t.Fatal(err)
			}
			var in strings.Builder
			for _, e := range es {
				typ := "blob"
				if e.isTree() {
					typ = "tree"
				}
				in.WriteString(e.Mode + " " + typ + " " + e.ID.String() + "\t" + e.Name + "\n")
			}
			cmd := exec.Command("git", "mktree")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(string(out)); id.String() != want {
				t.Fatalf("WriteTree id %s, git mktree says %s", id, want)
			}
			git(t, dir, "fsck", "--strict", "--no-dangling")
		})
	}
}
