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
	// Adopted: other repository ids whose records are this repository's.
	Adopted []string
	// OtherRepos: repository directories on the branch that are neither
	// this id nor adopted ('git ctx adopt ID' takes them).
	OtherRepos []RepoCount
	// RepoIDOverride: git config ctx.repoId when it disagrees with the id
	// fixed on the branch (which wins).
	RepoIDOverride string
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
	if st.Adopted, err = m.AdoptedRepos(ctx); err != nil {
		return nil, err
	}
	for _, rid := range append([]string{repoID}, st.Adopted...) {
		total, by, err := db.Counts(ctx, rid)
		if err != nil {
			return nil, err
		}
		st.Checkpoints, st.DeviceCheckpoints = st.Checkpoints+total, st.DeviceCheckpoints+by[id.DeviceID]
	}
	if st.OtherRepos, err = m.OtherRepos(ctx); err != nil {
		return nil, err
	}
	if st.RepoIDOverride, err = m.RepoIDOverride(); err != nil {
		return nil, err
	}
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
