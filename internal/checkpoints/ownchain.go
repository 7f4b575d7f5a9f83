package checkpoints

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// OwnChainFailure verifies this device's chain of this repository on the
// memory branch and returns its first failure (nil when it verifies, or
// when the device has no chain here yet).
func OwnChainFailure(ctx context.Context, w *workspace.Workspace) (*chain.Failure, error) {
	id := w.OwnDeviceID()
	if id == "" {
		return nil, nil
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	v, err := w.Store.View()
	if err != nil {
		return nil, err
	}
	entries, err := v.Chain(repoID, id)
	if errors.Is(err, gitstore.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return &chain.Failure{Device: id, Index: -1, Reason: chain.Malformed, Detail: err.Error()}, nil
	}
	in := chain.Input{Device: id, Entries: entries, SessionRoots: v.Layout.SessionRoots(), Load: func(hash string) ([]byte, error) {
		b, err := v.CheckpointFile(repoID, hash)
		if errors.Is(err, gitstore.ErrNotExist) {
			return nil, chain.ErrMissing
		}
		return b, err
	}}
	if k, _, err := v.DeviceKey(id); err == nil {
		in.Key = k
	}
	return chain.Verify(in).Failure, nil
}
