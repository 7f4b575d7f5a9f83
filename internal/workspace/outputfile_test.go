package workspace_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-ctx/git-ctx/internal/workspace"
)

// TestWriteOutputNoClobber: without replace an existing path (file or
// symbolic link) is refused and left as it was; of writers racing for one
// new name exactly one wins and the file is its whole content; with replace
// the file is replaced (a link itself, not its target); no temporary file is
// left behind.
func TestWriteOutputNoClobber(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := workspace.WriteOutput(p, []byte("new"), false)
	if !errors.Is(err, workspace.ErrOutputExists) || !strings.Contains(err.Error(), p) {
		t.Fatalf("write over an existing file: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("existing file changed: %q", got)
	}
	if err := workspace.WriteOutput(p, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Fatalf("replace: %q", got)
	}

	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("target"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := workspace.WriteOutput(link, []byte("x"), false); !errors.Is(err, workspace.ErrOutputExists) {
		t.Fatalf("write over a link: %v", err)
	}
	if err := workspace.WriteOutput(link, []byte("x"), true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "target" {
		t.Fatalf("replace wrote through the link: %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the link was not replaced: %v %v", fi, err)
	}

	// Racing writers of one new name: the early existence check passes for
	// several of them, the publish lets exactly one through.
	for round := range 20 {
		race := filepath.Join(dir, fmt.Sprintf("race-%d", round))
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = workspace.WriteOutput(race, bytes.Repeat([]byte{byte('a' + i)}, 1<<16), false)
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, won, i)
			case err == nil:
				won = i
			case !errors.Is(err, workspace.ErrOutputExists):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		got, _ := os.ReadFile(race)
		if won < 0 || !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + won)}, 1<<16)) {
			t.Fatalf("round %d: winner %d, file of %d bytes not its content", round, won, len(got))
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}
