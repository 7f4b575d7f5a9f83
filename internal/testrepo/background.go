package testrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// backgroundWait bounds how long a test's cleanup waits for git-ctx's
// detached work (a hook spool drainer, a background repack) to finish.
const backgroundWait = 2 * time.Minute

// waitBackground waits until no detached git-ctx process holds a lock in
// any repository under root: the repack lock (<git-dir>/ctx/repack.lock)
// and the hook spool's drain lock (an flock on <git-dir>/ctx/spool). Those
// processes outlive the command that started them; without the wait they
// could still be writing while the test's temporary directory is removed.
func waitBackground(t testing.TB, root string) {
	var locks []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a directory removed meanwhile: nothing to wait for there
		}
		if filepath.Base(filepath.Dir(path)) == "ctx" && (d.Name() == "repack.lock" || d.Name() == "spool" && d.IsDir()) {
			locks = append(locks, path)
		}
		return nil
	})
	deadline := time.Now().Add(backgroundWait)
	for _, p := range locks {
		for !lockFree(p) {
			if time.Now().After(deadline) {
				t.Logf("cleanup: a background git-ctx process still holds %s", p)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// lockFree reports whether an exclusive flock on path can be taken now
// (true too when path is gone).
func lockFree(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}
