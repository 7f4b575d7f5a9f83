package workspace

import (
	"context"

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
