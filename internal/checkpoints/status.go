package checkpoints

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
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
	OtherRepos []workspace.RepoCount
	// RepoIDOverride: git config ctx.repoId when it disagrees with the id
	// fixed on the branch (which wins).
	RepoIDOverride string
}

// Status reads the branch tip, the chains of this repository and the keys.
func ReadStatus(ctx context.Context, w *workspace.Workspace) (*Status, error) {
	st := &Status{}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	st.RepoID = repoID
	id, err := w.Identity()
	if err != nil {
		return nil, err
	}
	v, err := w.View()
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
	db, err := w.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if st.Adopted, err = w.AdoptedRepos(ctx); err != nil {
		return nil, err
	}
	for _, rid := range append([]string{repoID}, st.Adopted...) {
		total, by, err := db.Counts(ctx, rid)
		if err != nil {
			return nil, err
		}
		st.Checkpoints, st.DeviceCheckpoints = st.Checkpoints+total, st.DeviceCheckpoints+by[id.DeviceID]
	}
	if st.OtherRepos, err = w.OtherRepos(ctx); err != nil {
		return nil, err
	}
	if st.RepoIDOverride, err = w.RepoIDOverride(); err != nil {
		return nil, err
	}
	q, err := db.Quarantine(ctx, repoID)
	if err != nil {
		return nil, err
	}
	st.Quarantined = len(q)
	return st, nil
}
