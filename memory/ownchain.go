package memory

import (
	"context"
	"errors"
	"strings"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
)

// OwnDeviceID is this device's id in this repository, read without
// creating an identity ("" when there is none yet).
func (m *Memory) OwnDeviceID() string {
	if m.ident != nil {
		return m.ident.DeviceID
	}
	if !m.ownIDRead {
		m.ownIDRead = true
		if home, err := identity.Home(); err == nil {
			m.ownID = identity.CurrentID(home, strings.TrimSpace(m.Repo.Config("ctx.device")))
		}
	}
	return m.ownID
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

// OwnChainFailure verifies this device's chain of this repository on the
// memory branch and returns its first failure (nil when it verifies, or
// when the device has no chain here yet).
func (m *Memory) OwnChainFailure(ctx context.Context) (*chain.Failure, error) {
	id := m.OwnDeviceID()
	if id == "" {
		return nil, nil
	}
	repoID, err := m.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	v, err := m.Store.View()
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
	in := chain.Input{Device: id, Entries: entries, Load: func(hash string) ([]byte, error) {
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
