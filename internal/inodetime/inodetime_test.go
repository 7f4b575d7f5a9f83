package inodetime

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNanosMovesWhenMtimeIsSetBack: rewriting a file and setting its mtime
// back leaves size and mtime as they were, but not the ctime.
func TestNanosMovesWhenMtimeIsSetBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("aaaa"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	fi1, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	c1, ok := Nanos(fi1)
	if !ok || c1 <= old.UnixNano() {
		t.Fatalf("ctime %d (ok %v), want after the mtime set back to %d", c1, ok, old.UnixNano())
	}
	time.Sleep(20 * time.Millisecond) // past the kernel's coarse clock tick
	if err := os.WriteFile(p, []byte("bbbb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := Nanos(fi2)
	if fi2.Size() != fi1.Size() || !fi2.ModTime().Equal(fi1.ModTime()) {
		t.Fatalf("size or mtime moved: %d %v, then %d %v", fi1.Size(), fi1.ModTime(), fi2.Size(), fi2.ModTime())
	}
	if c2 <= c1 {
		t.Fatalf("ctime %d after the rewrite, %d before: it did not move", c2, c1)
	}
}

// TestNanosWithoutStatT: FileInfo without stat data has no ctime.
func TestNanosWithoutStatT(t *testing.T) {
	if _, ok := Nanos(fakeInfo{}); ok {
		t.Fatal("a FileInfo without syscall.Stat_t reported a ctime")
	}
}

type fakeInfo struct{ os.FileInfo }

func (fakeInfo) Sys() any { return nil }
