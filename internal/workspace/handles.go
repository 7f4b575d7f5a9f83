package workspace

import (
	"context"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitstore"
)

// DeviceRepo is Device and then RepoID: the signer of a branch write and
// the repository id the records it writes go under.
func (w *Workspace) DeviceRepo(ctx context.Context) (gitstore.Device, string, error) {
	dev, err := w.Device()
	if err != nil {
		return gitstore.Device{}, "", err
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return gitstore.Device{}, "", err
	}
	return dev, repoID, nil
}

// RepoCache is RepoID and then Cache: the repository id and the cache
// brought up to the branch tip, which the caller must Close.
func (w *Workspace) RepoCache(ctx context.Context) (string, *cache.DB, error) {
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return "", nil, err
	}
	db, err := w.Cache(ctx)
	if err != nil {
		return "", nil, err
	}
	return repoID, db, nil
}
