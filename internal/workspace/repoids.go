package workspace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// RepoID names this repository on the branch: the id the branch's REPO
// file fixes, read by every clone; without one, in a ghyll-v1 branch that
// holds ghyll's directory for this repository, that directory
// (GhyllLibraryRepoID); otherwise (no branch yet, or a branch of an older
// git-ctx) the id this clone derives (DerivedRepoID).
func (w *Workspace) RepoID(ctx context.Context) (string, error) {
	if _, err := w.Repo.RepoIDOverride(); err != nil {
		return "", err // a bad ctx.repoId is refused even where the branch's id wins
	}
	if id, err := w.BranchRepoID(); err != nil || id != "" {
		return id, err
	}
	return w.UnfixedRepoID(ctx)
}

// UnfixedRepoID is this repository's id where the branch's REPO file does
// not fix one (verify and pull check directories against it):
// GhyllLibraryRepoID when there is one, else DerivedRepoID.
func (w *Workspace) UnfixedRepoID(ctx context.Context) (string, error) {
	if id, err := w.GhyllLibraryRepoID(ctx); err != nil || id != "" {
		return id, err
	}
	return w.DerivedRepoID(ctx)
}

// GhyllLibraryRepoID is, for a ghyll-v1 branch without a REPO file (the
// branches ghyll's own library writes), the directory ghyll's Syncer uses
// for this repository — SHA-256 of 'git remote get-url origin' — when the
// branch holds it and git config ctx.repoId does not name another id; ""
// otherwise (FORMAT §3.4a).
func (w *Workspace) GhyllLibraryRepoID(ctx context.Context) (string, error) {
	if strings.TrimSpace(w.Repo.Config("ctx.repoId")) != "" {
		return "", nil
	}
	return w.atTip(&w.ghyllID, func(v *gitstore.View) (string, error) {
		if v.Layout != gitstore.LayoutGhyllV1 {
			return "", nil
		}
		dir, err := w.GhyllRepoDir(ctx)
		if err != nil || dir == "" {
			return "", err
		}
		repos, err := v.Repos()
		if err != nil && !errors.Is(err, gitstore.ErrNotExist) {
			return "", err
		}
		for _, r := range repos {
			if r == dir {
				return dir, nil
			}
		}
		return "", nil
	})
}

// BranchRepoID is the id fixed by the branch's REPO file, "" when there is
// no branch or no such file.
func (w *Workspace) BranchRepoID() (string, error) {
	return w.atTip(&w.branchID, func(v *gitstore.View) (string, error) {
		ids, err := v.RepoIDs()
		switch {
		case err == nil:
			return ids.ID, nil
		case errors.Is(err, gitstore.ErrNotExist):
			return "", nil
		}
		return "", err
	})
}

// tipValue is a value read from the branch and the tip it was read at.
type tipValue struct{ tip, id string }

// atTip returns c's value when it was read at the branch's current tip,
// else reads it from the view of the tip with read and keeps it in c; ""
// when there is no branch.
func (w *Workspace) atTip(c *tipValue, read func(v *gitstore.View) (string, error)) (string, error) {
	tip, err := w.Store.Tip()
	if err != nil || tip.IsZero() {
		return "", err
	}
	if c.tip == tip.String() {
		return c.id, nil
	}
	v, err := w.View()
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return "", nil // deleted since its tip was read
	}
	if err != nil {
		return "", err
	}
	id, err := read(v)
	if err != nil {
		return "", err
	}
	c.tip, c.id = v.Commit.String(), id
	return id, nil
}

// DerivedRepoID is the id this clone computes from its configuration
// (gitrepo.Repo.RepoID: ctx.repoId, the memory remote's URL, the root
// commit). It names a new branch; an existing branch's REPO file wins.
func (w *Workspace) DerivedRepoID(ctx context.Context) (string, error) {
	if w.repoID == "" {
		id, err := w.Repo.RepoID(ctx)
		if err != nil {
			return "", err
		}
		w.repoID = id
	}
	return w.repoID, nil
}

// RepoField is what a new record of repository repoID carries in its
// signed repo field: the memory remote's normalised URL when repoID is
// derived from it (SHA-256), else repoID itself, so that the field always
// binds to the record's directory (chain.BindsTo).
func (w *Workspace) RepoField(repoID string) string {
	if u := w.Repo.RemoteURL(); u != "" && gitrepo.HashID(u) == repoID {
		return u
	}
	return repoID
}

// RepoCount is a repository directory on the branch and how many
// checkpoints the cache holds for it.
type RepoCount struct {
	ID          string
	Checkpoints int
}

// AdoptedRepos returns the ids the branch's REPO file adopts with a valid
// signature (sorted; none without a branch or a REPO file).
func (w *Workspace) AdoptedRepos(ctx context.Context) ([]string, error) {
	v, err := w.View()
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	allowed, id, err := v.AllowedRepos("")
	if err != nil || id == "" {
		return nil, err
	}
	var out []string
	for a := range allowed {
		if a != id {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out, nil
}

// RepoIDs is this repository's id followed by its adopted ids.
func (w *Workspace) RepoIDs(ctx context.Context) ([]string, error) {
	id, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	adopted, err := w.AdoptedRepos(ctx)
	if err != nil {
		return nil, err
	}
	return append([]string{id}, adopted...), nil
}

// OtherRepos lists the repository directories on the branch that are
// neither this repository's id nor adopted: their records are not this
// repository's until 'git ctx adopt ID'.
func (w *Workspace) OtherRepos(ctx context.Context) ([]RepoCount, error) {
	v, err := w.View()
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ours, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, err
	}
	dirs, err := v.Repos()
	if err != nil {
		return nil, err
	}
	var out []RepoCount
	for _, d := range dirs {
		if !contains(ours, d) {
			n := 0
			devs, err := v.ChainDevices(d)
			if err != nil {
				return nil, err
			}
			for _, dev := range devs {
				if c, err := v.Chain(d, dev); err == nil {
					n += len(c)
				}
			}
			out = append(out, RepoCount{ID: d, Checkpoints: n})
		}
	}
	return out, nil
}

// RepoIDOverride reports git config ctx.repoId when it disagrees with the
// id fixed on the branch (the branch wins), else "".
func (w *Workspace) RepoIDOverride() (string, error) {
	over := strings.TrimSpace(w.Repo.Config("ctx.repoId"))
	if over == "" {
		return "", nil
	}
	id, err := w.BranchRepoID()
	if err != nil || id == "" || id == over {
		return "", err
	}
	return over, nil
}

// Adopt lists another repository id's records as this repository's, with
// an adoption signed by this device on the branch. The records stay where
// they are, byte for byte, so they keep verifying.
func (w *Workspace) Adopt(ctx context.Context, id string) error {
	if err := gitrepo.ValidSegment(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	v, err := w.View()
	if err != nil {
		return err
	}
	if list, err := v.List(gitstore.RepoDir(id)); err != nil {
		return err
	} else if list == nil {
		return fmt.Errorf("%w: no directory repos/%s on the memory branch", ErrNotFound, id)
	}
	this, err := w.RepoID(ctx)
	if err != nil {
		return err
	}
	dev, err := w.Device()
	if err != nil {
		return err
	}
	_, err = w.Store.Adopt(ctx, gitstore.AdoptRequest{RepoID: this, Adopted: id, Device: dev, Author: w.Author()})
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
