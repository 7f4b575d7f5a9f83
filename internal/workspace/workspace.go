// Package workspace is the small handle every git-ctx capability acts
// through: one repository (gitrepo), its memory branch (gitstore), this
// device's identity and the repository id records are filed under (derived
// from this clone, fixed by the branch's REPO file, overridden by
// ctx.repoId, or adopted), plus the branch's lifecycle (Init, Adopt) and
// the handle to its SQLite mirror (cache.Mirror, one per workspace so that
// notices, progress and pre-verified hashes reach every refresh). It also
// holds the error kinds the capabilities share (ErrInput, ErrNotFound,
// ErrAmbiguous, ErrOutputExists).
//
// It must not hold capability logic (recording, querying, snapshots,
// packages, sync): those live in internal/checkpoints, internal/snapshots,
// internal/ctxpackages and sync, which import it. It holds no terminal I/O.
//
// Imports (all below it): cache, gitstore, gitrepo, gitexec, identity.
package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
)

// Workspace is one repository's memory as seen from one directory.
type Workspace struct {
	// Notice, when set, receives one-line notices (e.g. a cache rebuild).
	Notice func(string)
	// Progress, when set, is told how many records an index or rebuild has
	// processed so far, and -1 when it is over.
	Progress func(done int)
	// Preverified holds the checkpoints a pull just verified
	// (cache.Preverified): indexing does not verify them a second time.
	Preverified map[string]cache.Preverified
	Repo        *gitrepo.Repo
	Store       *gitstore.Store
	repoID      string
	ident       *identity.Identity
	ownID       string // OwnDeviceID, once read
	ownIDRead   bool
	mirror      *cache.Mirror
	// branchID caches BranchRepoID for the tip it was read at.
	branchID tipValue
	// ghyllID caches GhyllLibraryRepoID for the tip it was read at.
	ghyllID tipValue
	// view is the last View made, reused while the tip is unchanged.
	view *gitstore.View
}

// Open finds the repository containing dir.
func Open(ctx context.Context, dir string) (*Workspace, error) {
	r, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	st, err := gitstore.Open(r)
	if err != nil {
		return nil, err
	}
	return &Workspace{Repo: r, Store: st}, nil
}

// View is the memory branch at its current tip, or
// gitstore.ErrNotInitialized. A View is read-only, so one made earlier at
// the same tip is reused: a command that asks several questions of the
// branch reads the tip ref each time but decodes its commit and root tree
// once.
func (w *Workspace) View() (*gitstore.View, error) {
	tip, err := w.Store.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, gitstore.ErrNotInitialized
	}
	if w.view != nil && w.view.Commit == tip {
		return w.view, nil
	}
	v, err := w.Store.ViewAt(tip)
	if err != nil {
		return nil, err
	}
	w.view = v
	return v, nil
}

// Identity loads (creating on first use) this device's identity, honouring
// git config ctx.device.
func (w *Workspace) Identity() (*identity.Identity, error) {
	if w.ident != nil {
		return w.ident, nil
	}
	home, err := identity.Home()
	if err != nil {
		return nil, err
	}
	id, err := identity.Load(home, strings.TrimSpace(w.Repo.Config("ctx.device")))
	if err != nil {
		return nil, err
	}
	w.ident = id
	return id, nil
}

// OwnDeviceID is this device's id in this repository, read without
// creating an identity ("" when there is none yet).
func (w *Workspace) OwnDeviceID() string {
	if w.ident != nil {
		return w.ident.DeviceID
	}
	if !w.ownIDRead {
		w.ownIDRead = true
		if home, err := identity.Home(); err == nil {
			w.ownID = identity.CurrentID(home, strings.TrimSpace(w.Repo.Config("ctx.device")))
		}
	}
	return w.ownID
}

// NewChainCommand is the way forward for a device whose own chain holds a
// record that fails verification (e.g. one written by an older version
// from text that was not valid UTF-8): every later record links to it, and
// signed history cannot be repaired in place, so the device starts a new
// chain under a new device id (a new key, published by init). Records that
// verified stay verified; the broken chain stays as it is.
func NewChainCommand() string {
	return "git config ctx.device " + identity.NewDeviceID() + " && git ctx init"
}

// NewChainHint is NewChainCommand in a sentence, for warnings.
func NewChainHint() string {
	return "this is this device's own chain, so none of its later records can verify either: start a new chain under a new device id with '" +
		NewChainCommand() + "' (records that verified stay; see 'git ctx doctor')"
}

// Author is the git author of the commits this workspace writes.
func (w *Workspace) Author() gitstore.Author {
	name, email := w.Repo.Identity()
	return gitstore.Author{Name: name, Email: email}
}

// Device is this device as a signer of branch writes (loading or creating
// its identity).
func (w *Workspace) Device() (gitstore.Device, error) {
	id, err := w.Identity()
	if err != nil {
		return gitstore.Device{}, err
	}
	return gitstore.Device{ID: id.DeviceID, Key: id.Private}, nil
}

// Init creates the memory branch if needed and publishes this device's
// key. It never adopts a fetched branch as it is: a clone whose memory
// remote's branch was fetched takes it through the pull's verified merge
// first (sync.AdoptFetched), and then finds the branch here. A new
// branch gets its repository id fixed in its REPO file (newBranchRepoID);
// the report's Notes say what a ghyll-v1 branch means (ghyllNotes).
func (w *Workspace) Init(ctx context.Context, layout gitstore.Layout) (InitReport, error) {
	dev, err := w.Device()
	if err != nil {
		return InitReport{}, err
	}
	opt := gitstore.InitOptions{Layout: layout, Device: dev, Author: w.Author()}
	if opt.RepoID, err = w.newBranchRepoID(ctx, layout); err != nil {
		return InitReport{}, err
	}
	res, err := w.Store.Init(ctx, opt)
	rep := InitReport{InitResult: res}
	if err == nil && layout != "" && res.Layout != layout {
		return rep, fmt.Errorf("%w: the memory branch already uses layout %s; --layout %s applies only to a new branch", ErrLayoutMismatch, res.Layout, layout)
	}
	if err != nil {
		return rep, err
	}
	if res.Created {
		rep.RepoID = opt.RepoID
	}
	if res.Layout == gitstore.LayoutGhyllV1 {
		rep.Notes, err = w.ghyllNotes(ctx, rep)
	}
	return rep, err
}

// SetConfig writes key=value into the repository's local git config.
func (w *Workspace) SetConfig(ctx context.Context, key, value string) error {
	return w.Repo.SetConfig(ctx, key, value)
}

// CacheDir is <git-common-dir>/ctx, home of cache.db.
func (w *Workspace) CacheDir() string { return filepath.Join(w.Repo.CommonDir, "ctx") }

// cacheMirror is this workspace's cache.Mirror, told the current Notice,
// Progress and Preverified.
func (w *Workspace) cacheMirror() *cache.Mirror {
	if w.mirror == nil {
		w.mirror = &cache.Mirror{Store: w.Store, Dir: w.CacheDir(), OwnDevice: w.OwnDeviceID, OwnChainHint: NewChainHint}
	}
	w.mirror.Notice, w.mirror.Progress, w.mirror.Preverified = w.Notice, w.Progress, w.Preverified
	return w.mirror
}

// Cache opens the cache brought up to the branch tip (cache.Mirror.Open).
// The caller must Close it.
func (w *Workspace) Cache(ctx context.Context) (*cache.DB, error) {
	return w.cacheMirror().Open(ctx)
}

// CacheAhead starts building the cache of commit tip before the branch
// points at it (cache.Mirror.BuildAhead); nil when it cannot.
func (w *Workspace) CacheAhead(ctx context.Context, tip plumbing.Hash, settled cache.Settled) *cache.Ahead {
	return w.cacheMirror().BuildAhead(ctx, tip, settled)
}

// Reindex rebuilds the cache from the branch.
func (w *Workspace) Reindex(ctx context.Context) error {
	return w.cacheMirror().Reindex(ctx)
}
