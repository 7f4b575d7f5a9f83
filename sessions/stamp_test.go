package sessions

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stampFixture is a client with a state directory and one session file
// whose last change is older than a shortened stamp margin.
func stampFixture(t *testing.T, content string) (*Client, string, string) {
	t.Helper()
	old := stampMargin
	stampMargin = 100 * time.Millisecond
	t.Cleanup(func() { stampMargin = old })
	dir := t.TempDir()
	c := &Client{Profile: "p", StateDir: filepath.Join(dir, "state")}
	if err := os.MkdirAll(filepath.Dir(c.statePath("claude:s")), 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * stampMargin)
	return c, p, sha256Hex([]byte(content))
}

// hashesDuring is the number of files hashed in full while f ran.
func hashesDuring(f func()) int64 {
	n := hashedFiles.Load()
	f()
	return hashedFiles.Load() - n
}

func mustLocalHash(t *testing.T, c *Client, p, revision string) string {
	t.Helper()
	h, err := c.localHash("claude:s", p, revision)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestLocalHashReadsOnceWhileTheStampHolds: the first comparison hashes
// the file and keeps a stamp; later ones answer from the stamp alone.
func TestLocalHashReadsOnceWhileTheStampHolds(t *testing.T) {
	c, p, rev := stampFixture(t, "one\ntwo\n")
	if n := hashesDuring(func() {
		if h := mustLocalHash(t, c, p, rev); h != rev {
			t.Fatalf("hash %s, want %s", h, rev)
		}
	}); n != 1 {
		t.Fatalf("first comparison hashed %d files, want 1", n)
	}
	if _, err := os.Stat(c.stampPath("claude:s")); err != nil {
		t.Fatalf("no stamp kept: %v", err)
	}
	for i := 0; i < 3; i++ {
		if n := hashesDuring(func() {
			if h := mustLocalHash(t, c, p, rev); h != rev {
				t.Fatalf("hash %s, want %s", h, rev)
			}
		}); n != 0 {
			t.Fatalf("comparison %d hashed %d files, want 0 (the stamp holds)", i+2, n)
		}
	}
}

// TestLocalHashNoticesChanges: after a stamp is kept, every way of
// changing the file is noticed and answered with the new bytes' hash: an
// append, a rewrite of the same size with the mtime set back (only the
// ctime moves), a new file renamed over it.
func TestLocalHashNoticesChanges(t *testing.T) {
	changes := map[string]func(t *testing.T, p string){
		"append": func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("three\n")
			f.Close()
		},
		"same size, mtime set back": func(t *testing.T, p string) {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // past the kernel's clock tick
			if err := os.WriteFile(p, []byte("ONE\nTWO\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if fi2, _ := os.Stat(p); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
				t.Fatal("the rewrite did not keep size and mtime")
			}
		},
		"renamed over": func(t *testing.T, p string) {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			q := p + ".new"
			if err := os.WriteFile(q, []byte("uno\ndos\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(q, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(q, p); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			c, p, rev := stampFixture(t, "one\ntwo\n")
			mustLocalHash(t, c, p, rev) // keeps the stamp
			change(t, p)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			want := sha256Hex(data)
			if want == rev {
				t.Fatal("the change left the bytes as they were")
			}
			if n := hashesDuring(func() {
				if h := mustLocalHash(t, c, p, rev); h != want {
					t.Fatalf("hash %s after the change, want %s (the stamp was trusted)", h, want)
				}
			}); n != 1 {
				t.Fatalf("hashed %d files, want 1", n)
			}
		})
	}
}

// TestLocalHashDoesNotTrustARacyFile: a file that changed within the
// margin of the stamp's time is hashed every time and no stamp is kept.
func TestLocalHashDoesNotTrustARacyFile(t *testing.T) {
	c, p, rev := stampFixture(t, "one\ntwo\n")
	stampMargin = time.Hour // every file is racy
	for i := 0; i < 2; i++ {
		if n := hashesDuring(func() { mustLocalHash(t, c, p, rev) }); n != 1 {
			t.Fatalf("comparison %d hashed %d files, want 1", i+1, n)
		}
	}
	if _, err := os.Stat(c.stampPath("claude:s")); !os.IsNotExist(err) {
		t.Fatalf("a stamp was kept for a racy file (%v)", err)
	}
}

// TestLocalHashUsesAStampOnlyForItsRevisionAndPath: a stamp answers only
// for the revision it was taken for and the file it names; an unreadable
// stamp is ignored and replaced.
func TestLocalHashUsesAStampOnlyForItsRevisionAndPath(t *testing.T) {
	c, p, rev := stampFixture(t, "one\ntwo\n")
	mustLocalHash(t, c, p, rev)
	other := sha256Hex([]byte("something else"))
	if n := hashesDuring(func() {
		if h := mustLocalHash(t, c, p, other); h != rev {
			t.Fatalf("hash %s, want %s", h, rev)
		}
	}); n != 1 {
		t.Fatalf("a stamp of another revision was trusted (%d files hashed)", n)
	}
	q := filepath.Join(filepath.Dir(p), "copy.jsonl")
	if err := os.Link(p, q); err != nil { // the same inode under another name
		t.Fatal(err)
	}
	time.Sleep(2 * stampMargin) // the link moved the inode's ctime: past the margin again
	if n := hashesDuring(func() { mustLocalHash(t, c, q, rev) }); n != 1 {
		t.Fatalf("a stamp of another path was trusted (%d files hashed)", n)
	}
	if err := os.WriteFile(c.stampPath("claude:s"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := hashesDuring(func() { mustLocalHash(t, c, p, rev) }); n != 1 {
		t.Fatalf("an unreadable stamp was trusted (%d files hashed)", n)
	}
	if n := hashesDuring(func() { mustLocalHash(t, c, p, rev) }); n != 0 {
		t.Fatalf("the unreadable stamp was not replaced (%d files hashed)", n)
	}
}

// TestLocalHashMissingFile: a missing file is an error, as before stamps.
func TestLocalHashMissingFile(t *testing.T) {
	c, p, rev := stampFixture(t, "x")
	mustLocalHash(t, c, p, rev)
	os.Remove(p)
	if _, err := c.localHash("claude:s", p, rev); !os.IsNotExist(err) {
		t.Fatalf("err %v, want not exist", err)
	}
}
