package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// InitReport is what Init did and what the user should be told about it.
type InitReport struct {
	gitstore.InitResult
	// RepoID is the repository id this run fixed in the new branch's REPO
	// file ("" when it wrote none: an existing branch, one started from the
	// remote's, or a repository without commits or a remote).
	RepoID string
	// Notes are plain sentences about a ghyll-v1 branch: that "emb" is
	// outside the hash, and where the repository's records go.
	Notes []string
}

// newBranchRepoID is the id a new branch of layout gets in its REPO file.
// In ghyll-v1 it is git config ctx.repoId when set, else the directory
// ghyll's Syncer looks in (gitstore.GhyllRepoID of origin's URL); otherwise,
// and without a remote named origin, the id this clone derives
// (DerivedRepoID). "" when none can be derived yet (no commit, no remote):
// the first checkpoint fixes it.
func (w *Workspace) newBranchRepoID(ctx context.Context, layout gitstore.Layout) (string, error) {
	if layout == gitstore.LayoutGhyllV1 {
		over, err := w.Repo.RepoIDOverride()
		if err != nil {
			return "", err
		}
		if over == "" {
			if dir, err := w.GhyllRepoDir(ctx); err != nil || dir != "" {
				return dir, err
			}
		}
	}
	id, err := w.DerivedRepoID(ctx)
	if errors.Is(err, gitrepo.ErrNoRepoID) {
		return "", nil
	}
	return id, err
}

// GhyllRepoDir is the repository directory ghyll's Syncer reads and writes
// for this clone: gitstore.GhyllRepoID of `git remote get-url origin`; ""
// without a remote named origin.
func (w *Workspace) GhyllRepoDir(ctx context.Context) (string, error) {
	u, err := w.Repo.OriginURL(ctx)
	if err != nil || u == "" {
		return "", err
	}
	return gitstore.GhyllRepoID(u), nil
}

// Notes of a ghyll-v1 init (FORMAT §3.4, §4.5).
const (
	noteGhyllEmb = "ghyll-v1 seals checkpoints under ghyll's rule (v2), whose hash leaves \"emb\" out: " +
		"embeddings on this branch are unauthenticated, and 'git ctx similar' uses them only with --include-unauthenticated"
	noteGhyllDir    = "repository directory repos/%s: SHA-256 of 'git remote get-url origin', where ghyll's Syncer looks"
	noteGhyllNoDir  = "no remote named origin: repository directory repos/%s is git-ctx's own id, which ghyll's Syncer does not look in (it uses SHA-256 of 'git remote get-url origin'); to share with ghyll, add origin, then 'git branch -D ghyll/memory' and init again before the first checkpoint"
	noteGhyllLater  = "no remote named origin: the first checkpoint fixes git-ctx's own id as the repository directory, which ghyll's Syncer does not look in (it uses SHA-256 of 'git remote get-url origin'); to share with ghyll, add origin, then 'git branch -D ghyll/memory' and init again"
	noteGhyllRepoID = "git config ctx.repoId names the repository directory repos/%s; ghyll's Syncer looks in repos/%s (SHA-256 of 'git remote get-url origin')"
)

// ghyllNotes says what a ghyll-v1 branch means for "emb" and, for a branch
// this run created, where the records go and
// whether ghyll finds them there.
func (w *Workspace) ghyllNotes(ctx context.Context, rep InitReport) ([]string, error) {
	notes := []string{noteGhyllEmb}
	if !rep.Created {
		return notes, nil
	}
	dir, err := w.GhyllRepoDir(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case rep.RepoID == "":
		notes = append(notes, noteGhyllLater)
	case dir == rep.RepoID:
		notes = append(notes, fmt.Sprintf(noteGhyllDir, rep.RepoID))
	case dir == "":
		notes = append(notes, fmt.Sprintf(noteGhyllNoDir, rep.RepoID))
	default:
		notes = append(notes, fmt.Sprintf(noteGhyllRepoID, rep.RepoID, dir))
	}
	return notes, nil
}
