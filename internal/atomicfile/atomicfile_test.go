package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// noTemp fails if dir holds a temporary file of this package.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	if left, err := Temps(dir); err != nil || len(left) > 0 {
		t.Fatalf("temporary files left in %s: %q (%v)", dir, left, err)
	}
}

func TestWriteNewAndRefuseExisting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("one"), Options{}); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, []byte("two"), Options{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second write without Replace: %v, want ErrExists", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "one" {
		t.Fatalf("existing file changed to %q", got)
	}
	if err := WriteFile(p, []byte("two"), Options{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "two" {
		t.Fatalf("replaced file holds %q", got)
	}
	noTemp(t, dir)
}

// A symbolic link at the target is refused without Replace and replaced
// (never written through) with it.
func TestWriteSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("x"), Options{}); !errors.Is(err, ErrExists) {
		t.Fatalf("write over a link: %v, want ErrExists", err)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	if err := WriteFile(dangling, []byte("x"), Options{}); !errors.Is(err, ErrExists) {
		t.Fatalf("write over a dangling link: %v, want ErrExists", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Fatal("write followed a dangling link")
	}
	if err := WriteFile(link, []byte("x"), Options{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Fatalf("link target written through: %q", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink != 0 {
		t.Fatal("link not replaced")
	}
	noTemp(t, dir)
}

func TestWritePermsIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, c := range []struct {
		perm, want os.FileMode
	}{{0, 0o600}, {0o755, 0o755}, {0o644, 0o644}} {
		p := filepath.Join(dir, c.want.String())
		if err := WriteFile(p, []byte("x"), Options{Perm: c.perm, Replace: true}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("Perm %v: file mode %v, want %v", c.perm, fi.Mode().Perm(), c.want)
		}
	}
}

func TestWriteMkdir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "f")
	if err := WriteFile(p, []byte("x"), Options{}); err == nil {
		t.Fatal("write into a missing directory without MkdirPerm succeeded")
	}
	if err := WriteFile(p, []byte("x"), Options{MkdirPerm: 0o755}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "x" {
		t.Fatalf("got %q", got)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		r.n--
		return copy(p, "partial"), nil
	}
	return 0, errors.New("read failed")
}

// A failing source leaves neither the target nor a temporary file.
func TestWriteErrorCleansUp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, &failingReader{n: 2}, Options{}); err == nil {
		t.Fatal("write from a failing reader succeeded")
	}
	if _, err := os.Lstat(p); err == nil {
		t.Fatal("target created from a failed write")
	}
	os.WriteFile(p, []byte("old"), 0o600)
	if err := Write(p, &failingReader{n: 2}, Options{Replace: true}); err == nil {
		t.Fatal("replace from a failing reader succeeded")
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("failed replace changed the file to %q", got)
	}
	noTemp(t, dir)
}

// Concurrent no-replace writers of one name: exactly one wins, the file is
// its complete content, the others get ErrExists.
func TestWriteRaceOneWinner(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 20; round++ {
		p := filepath.Join(dir, "race")
		os.Remove(p)
		errs := make([]error, 6)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = WriteFile(p, bytes.Repeat([]byte{byte('a' + i)}, 1<<16), Options{})
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if won >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, won, i)
				}
				won = i
			case !errors.Is(err, ErrExists):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		got, _ := os.ReadFile(p)
		if won < 0 || !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + won)}, 1<<16)) {
			t.Fatalf("round %d: winner %d, file of %d bytes not its content", round, won, len(got))
		}
	}
	noTemp(t, dir)
}

// A Temp keeps File open after publishing (callers stat it), and Close
// removes an unpublished one.
func TestTempLifecycle(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tmp, err := d.CreateTemp(0)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(tmp.File, "body")
	if err := tmp.PublishNew("f"); err != nil {
		t.Fatal(err)
	}
	fi, err := tmp.File.Stat()
	if err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Fatalf("published temp: stat %v, %v; want one link", fi, err)
	}
	tmp.Close()
	tmp2, _ := d.CreateTemp(0)
	if err := tmp2.PublishNew("f"); !errors.Is(err, ErrExists) {
		t.Fatalf("PublishNew over an existing name: %v", err)
	}
	tmp2.Close()
	tmp2.Close()
	noTemp(t, dir)
	if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != "body" {
		t.Fatalf("got %q", got)
	}
}
