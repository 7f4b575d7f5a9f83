package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// RepoCount is a repository directory on the branch and how many
// checkpoints the cache holds for it.
type RepoCount struct {
	ID          string `json:"id"`
	Checkpoints int    `json:"checkpoints"`
}

// AdoptedRepos returns the ids the branch's REPO file adopts with a valid
// signature (sorted; none without a branch or a REPO file).
func (m *Memory) AdoptedRepos(ctx context.Context) ([]string, error) {
	v, err := m.Store.View()
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

// repoIDs is this repository's id followed by its adopted ids.
func (m *Memory) repoIDs(ctx context.Context) ([]string, error) {
	id, err := m.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	adopted, err := m.AdoptedRepos(ctx)
	if err != nil {
		return nil, err
	}
	return append([]string{id}, adopted...), nil
}

// OtherRepos lists the repository directories on the branch that are
// neither this repository's id nor adopted: their records are not this
// repository's until 'git ctx adopt ID'.
func (m *Memory) OtherRepos(ctx context.Context) ([]RepoCount, error) {
	v, err := m.Store.View()
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ours, err := m.repoIDs(ctx)
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
func (m *Memory) RepoIDOverride() (string, error) {
	over := strings.TrimSpace(m.Repo.Config("ctx.repoId"))
	if over == "" {
		return "", nil
	}
	id, err := m.BranchRepoID()
	if err != nil || id == "" || id == over {
		return "", err
	}
	return over, nil
}

// Adopt lists another repository id's records as this repository's, with
// an adoption signed by this device on the branch. The records stay where
// they are, byte for byte, so they keep verifying.
func (m *Memory) Adopt(ctx context.Context, id string) error {
	if err := gitrepo.ValidSegment(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	v, err := m.Store.View()
	if err != nil {
		return err
	}
	if list, err := v.List(gitstore.RepoDir(id)); err != nil {
		return err
	} else if list == nil {
		return fmt.Errorf("%w: no directory repos/%s on the memory branch", ErrNotFound, id)
	}
	this, err := m.RepoID(ctx)
	if err != nil {
		return err
	}
	dev, err := m.device()
	if err != nil {
		return err
	}
	_, err = m.Store.Adopt(ctx, gitstore.AdoptRequest{RepoID: this, Adopted: id, Device: dev, Author: m.author()})
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
