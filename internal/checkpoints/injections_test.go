package checkpoints

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// TestRememberInjections: items round-trip per session (any session id,
// one file each, mode 0600); an empty list forgets them; a file left by a
// session that never recorded is pruned after staleInjections; a file a
// newer briefing replaced is not forgotten by the older checkpoint.
func TestRememberInjections(t *testing.T) {
	r := &gitrepo.Repo{CommonDir: t.TempDir()}
	items := []string{InjectionPrefix + "aa", InjectionPrefix + "snapshot:bb"}
	for _, session := range []string{"3f9a6c2e-1d4b", "../../etc/passwd", "a b\tc"} {
		if err := RememberInjections(r, session, items); err != nil {
			t.Fatal(err)
		}
		got, seen := PendingInjections(r, session)
		if !slices.Equal(got, items) {
			t.Fatalf("%q: pending %v", session, got)
		}
		path := injectionsFile(r, session)
		if filepath.Dir(path) != injectionsDir(r) {
			t.Fatalf("%q: file %s outside %s", session, path, injectionsDir(r))
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%q: %v %v", session, fi.Mode(), err)
		}
		if err := RememberInjections(r, session, items[:1]); err != nil {
			t.Fatal(err)
		}
		forgetInjections(r, session, seen) // replaced meanwhile: kept
		if got, _ := PendingInjections(r, session); !slices.Equal(got, items[:1]) {
			t.Fatalf("%q: a replaced file was forgotten: %v", session, got)
		}
		RememberInjections(r, session, nil)
		if got, _ := PendingInjections(r, session); got != nil {
			t.Fatalf("%q: not forgotten: %v", session, got)
		}
	}
	RememberInjections(r, "old", items)
	old := time.Now().Add(-staleInjections - time.Hour)
	os.Chtimes(injectionsFile(r, "old"), old, old)
	RememberInjections(r, "new", items)
	if got, _ := PendingInjections(r, "old"); got != nil {
		t.Fatalf("a stale file was kept: %v", got)
	}
	if got, _ := PendingInjections(r, "new"); got == nil {
		t.Fatal("the new file was pruned")
	}
}
