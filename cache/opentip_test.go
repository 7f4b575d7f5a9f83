package cache

import (
	"context"
	"testing"

	"github.com/git-ctx/git-ctx/gitstore"
)

// TestOpenReadsIndexedTip: Open reads the memory branch's indexed tip with
// the schema, in one statement, and it is what the tips table holds at
// that moment (the refresh's no-op check relies on it): none on a new
// cache, the tip set by a rebuild, then by an update, and another ref's tip
// is not taken for the branch's.
func TestOpenReadsIndexedTip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() string {
		t.Helper()
		d, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if !d.FTS {
			t.Error("FTS not seen at open")
		}
		return d.openTip
	}
	if err := Rebuild(ctx, dir, func(w *Writer) error { return w.SetTip("refs/remotes/origin/ghyll/memory", "aa") }); err != nil {
		t.Fatal(err)
	}
	if got := open(); got != "" {
		t.Fatalf("no branch tip indexed: open read %q", got)
	}
	if err := Rebuild(ctx, dir, func(w *Writer) error { return w.SetTip(gitstore.BranchRef, "bb") }); err != nil {
		t.Fatal(err)
	}
	if got := open(); got != "bb" {
		t.Fatalf("after a rebuild: open read %q, want bb", got)
	}
	d, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Update(ctx, func(w *Writer) error { return w.SetTip(gitstore.BranchRef, "cc") }); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if got := open(); got != "cc" {
		t.Fatalf("after an update: open read %q, want cc", got)
	}
}
