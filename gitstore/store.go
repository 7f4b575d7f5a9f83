// Package gitstore reads and writes the memory branch, refs/heads/ghyll/memory,
// in either layout (layout.go), without touching HEAD, the index or the
// work tree.
//
// Reading: a View is the branch as of one commit (view.go). Objects are
// read by a direct reader that finds loose objects and pack entries without
// loading every pack index (packread.go), else through go-git's storage,
// else with `git cat-file` (objects.go); blob sizes are checked from object
// headers before a body is inflated.
//
// Writing: every write (checkpoints in append.go, snapshots and timelines
// in snapshots.go, context packages in ctxpackages.go, the REPO file in
// repoid.go, merged trees in diff.go) holds the git-ctx lock of the
// repository (Store.Lock), reads the tip, writes its objects as loose
// objects (internal/gitobject, loose.go; an object the repository holds
// already, loose or packed, is not written again), rewriting only the trees
// on the changed paths, and moves the ref with a compare-and-swap that follows
// git's own lock-file protocol in process (ref.go); when plain git moved the
// ref in between, a write starts again on the new tip (lockedEdit), and
// Commit, whose caller chose the expected tip, reports ErrBranchMoved. So each
// device's chain stays linear under concurrency and plain git writers are
// never overwritten. Every ctx.packEvery writes, the loose objects are
// packed by a detached background repack under a lock of its own
// (repack.go): no write waits for it. Checkpoints are sealed under the
// layout's rule (Layout.Rule: ghyll's code rule in ghyll-v1, so that ghyll
// verifies them; the seed rule in ctx-v1).
package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// BranchRef is the memory branch.
const BranchRef = "refs/heads/ghyll/memory"

// Errors callers branch on.
var (
	ErrNotInitialized = fault.Sentinel(fault.Config, "memory branch ghyll/memory does not exist: run 'git ctx init'")
	ErrBranchMoved    = fault.Sentinel(fault.Conflict, "memory branch moved concurrently")
	ErrKeyConflict    = fault.Sentinel(fault.Config, "device id is published on the branch with a different key")
	ErrCorrupt        = fault.Sentinel(fault.Failed, "memory branch is damaged")
	ErrUnsupported    = fault.Sentinel(fault.Config, "unsupported repository")
	// ErrLayoutUnknown: the branch's LAYOUT names a layout, field or
	// fan-out depth this git-ctx does not know (a newer one wrote it).
	// Exit 1, as an unreadable LAYOUT always was: a pull of such a remote
	// merges nothing.
	ErrLayoutUnknown = fault.Sentinel(fault.Failed, "unknown memory branch layout")
)

// Store is the memory branch of one repository.
type Store struct {
	Repo *gitrepo.Repo
	st   *filesystem.Storage
	ref  plumbing.ReferenceName
	// mu serialises go-git storage access, which is not documented as safe
	// for concurrent use; parsing and verification run outside it.
	mu gosync.Mutex
	// treesMu guards trees and oldTrees, the decoded trees by id in two
	// generations (see readTree).
	treesMu  gosync.Mutex
	trees    map[plumbing.Hash]*object.Tree
	oldTrees map[plumbing.Hash]*object.Tree
	// treeDecodes counts the trees read and decoded (cache misses).
	treeDecodes atomic.Int64
	// treeWindowReads counts the windows the walk's treeReaders read.
	treeWindowReads atomic.Int64
	// direct reads single objects without loading pack indexes (under mu).
	direct *directReader
}

// Open prepares access to the memory branch of r.
func Open(r *gitrepo.Repo) (*Store, error) {
	if v := strings.ToLower(r.Config("extensions.refStorage")); v != "" && v != "files" {
		return nil, fmt.Errorf("%w: ref storage %q (git-ctx supports the files backend)", ErrUnsupported, v)
	}
	if v := strings.ToLower(r.Config("extensions.objectFormat")); v != "" && v != "sha1" {
		return nil, fmt.Errorf("%w: object format %q (git-ctx supports sha1 repositories)", ErrUnsupported, v)
	}
	fs := osfs.New(r.CommonDir)
	// KeepDescriptors: pack files stay open instead of being reopened for
	// every object read.
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	s := &Store{Repo: r, st: st, ref: plumbing.ReferenceName(BranchRef),
		direct: &directReader{objects: filepath.Join(r.CommonDir, "objects")}}
	runtime.AddCleanup(s, func(d *directReader) { d.close() }, s.direct)
	return s, nil
}

// Tip returns the commit the branch points at, or ZeroHash when it does not
// exist. It reads the ref afresh every time.
func (s *Store) Tip() (plumbing.Hash, error) {
	return s.resolve(s.ref)
}

func (s *Store) resolve(name plumbing.ReferenceName) (plumbing.Hash, error) {
	s.mu.Lock()
	ref, err := s.st.Reference(name)
	s.mu.Unlock()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", name, err)
	}
	if ref.Type() == plumbing.SymbolicReference {
		return plumbing.ZeroHash, fmt.Errorf("%w: %s is a symbolic ref", ErrCorrupt, name)
	}
	return ref.Hash(), nil
}

// ResolveRef returns the commit a full ref name points at (ZeroHash if none).
func (s *Store) ResolveRef(name string) (plumbing.Hash, error) {
	return s.resolve(plumbing.ReferenceName(name))
}

// Lock takes the repository-wide git-ctx write lock
// (<git-common-dir>/ctx/memory.lock, an flock released even on kill -9),
// waiting until ctx is done.
func (s *Store) Lock(ctx context.Context) (unlock func(), err error) {
	dir := filepath.Join(s.Repo.CommonDir, "ctx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "memory.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the git-ctx lock: %w", ctx.Err())
		case <-time.After(delay):
		}
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}
