package memory

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
)

// Status summarises the memory as seen from here.
type Status struct {
	Initialized       bool
	Tip               string
	Layout            gitstore.Layout
	RepoID            string
	KeyPublished      bool
	Checkpoints       int // in this repository, all devices
	DeviceCheckpoints int // in this repository, this device
	Devices           int // keys on the branch
	Quarantined       int // records that failed verification
}

// Status reads the branch tip, the chains of this repository and the keys.
func (m *Memory) Status(ctx context.Context) (*Status, error) {
	st := &Status{}
	repoID, err := m.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	st.RepoID = repoID
	id, err := m.Identity()
	if err != nil {
		return nil, err
	}
	v, err := m.Store.View()
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	st.Initialized, st.Tip, st.Layout = true, v.Commit.String(), v.Layout
	devices, err := v.Devices()
	if err != nil {
		return nil, err
	}
	st.Devices = len(devices)
	if pub, _, err := v.DeviceKey(id.DeviceID); err == nil && pub.Equal(id.Public) {
		st.KeyPublished = true
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	total, by, err := db.Counts(ctx, repoID)
	if err != nil {
		return nil, err
	}
	st.Checkpoints, st.DeviceCheckpoints = total, by[id.DeviceID]
	q, err := db.Quarantine(ctx, repoID)
	if err != nil {
		return nil, err
	}
	st.Quarantined = len(q)
	return st, nil
}

// SetConfig writes key=value into the repository's local git config.
func (m *Memory) SetConfig(ctx context.Context, key, value string) error {
	if _, err := gitexec.Git(ctx, m.Repo.Dir, "config", "--local", key, value); err != nil {
		return err
	}
	return m.Repo.ReloadConfig(ctx)
}
