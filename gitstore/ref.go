package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The branch ref is moved with git's own lock-file protocol, in process
// (spawning `git update-ref` costs several milliseconds): create
// <ref>.lock exclusively, read the current value (loose file, else
// packed-refs), compare with the expected one, write the new value into the
// lock, append the reflog entry, rename the lock over the ref. Plain git
// follows the same protocol, so neither can overwrite the other's update.

// refLockWait bounds how long we wait for another writer's <ref>.lock.
const refLockWait = 5 * time.Second

// staleRefLock is the age after which a <ref>.lock is left over by a process
// that died (kill -9, power loss) between creating and renaming it: git and
// git-ctx hold a ref lock for milliseconds. The caller holds the git-ctx
// write lock, so no other git-ctx process can be inside casRef.
const staleRefLock = refLockWait

// removeStaleLock removes lock when it has not been modified for
// staleRefLock, and reports whether it did.
func removeStaleLock(lock string) bool {
	fi, err := os.Lstat(lock)
	if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < staleRefLock {
		return false
	}
	return os.Remove(lock) == nil
}

func (s *Store) refPath() string {
	return filepath.Join(s.Repo.CommonDir, filepath.FromSlash(BranchRef))
}

// casRef moves the branch from old (ZeroHash: must not exist) to new. It
// returns ErrBranchMoved when the ref no longer holds old.
func (s *Store) casRef(ctx context.Context, old, new plumbing.Hash, reason string) error {
	path := s.refPath()
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("update %s: %w", BranchRef, err)
	}
	deadline := time.Now().Add(refLockWait)
	var f *os.File
	for delay := time.Millisecond; ; {
		var err error
		f, err = os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("update %s: %w", BranchRef, err)
		}
		if removeStaleLock(lock) {
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("update %s: %s exists: another git process seems to be running; if none is, remove that file", BranchRef, lock)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(lock)
		}
	}()
	cur, err := s.Tip()
	if err != nil {
		return err
	}
	if cur != old {
		return ErrBranchMoved
	}
	if _, err := f.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("update %s: %w", BranchRef, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("update %s: %w", BranchRef, err)
	}
	if err := s.appendReflog(old, new, reason); err != nil {
		return err
	}
	if err := os.Rename(lock, path); err != nil {
		return fmt.Errorf("update %s: %w", BranchRef, err)
	}
	committed = true
	return nil
}

// appendReflog records the update in logs/refs/heads/ghyll/memory when git
// would (core.logAllRefUpdates, default true outside bare repositories).
func (s *Store) appendReflog(old, new plumbing.Hash, reason string) error {
	v := strings.ToLower(s.Repo.Config("core.logAllRefUpdates"))
	logPath := filepath.Join(s.Repo.CommonDir, "logs", filepath.FromSlash(BranchRef))
	switch v {
	case "false", "no", "off", "0":
		return nil
	case "":
		if s.Repo.Bare {
			if _, err := os.Stat(logPath); err != nil {
				return nil
			}
		}
	}
	name, email := s.Repo.Identity()
	sig := Author{Name: name, Email: email}.signature(time.Now())
	_, offset := sig.When.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %c%02d%02d\t%s\n", old, new, sig.Name, sig.Email,
		sig.When.Unix(), sign, offset/3600, offset%3600/60, strings.ReplaceAll(reason, "\n", " "))
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fmt.Errorf("reflog: %w", err)
	}
	lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("reflog: %w", err)
	}
	_, werr := lf.WriteString(line)
	if cerr := lf.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("reflog: %w", werr)
	}
	return nil
}
