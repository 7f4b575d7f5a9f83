package checkpoints

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// Verify checks the whole memory branch, including that every repository
// directory is this repository's id or an adopted one.
func Verify(ctx context.Context, w *workspace.Workspace) (*gitstore.Report, error) {
	v, err := w.Store.View()
	if err != nil {
		return nil, err
	}
	fallback, err := w.UnfixedRepoID(ctx)
	if err != nil && !errors.Is(err, gitrepo.ErrNoRepoID) {
		return nil, err
	}
	return v.VerifyFor(fallback)
}
