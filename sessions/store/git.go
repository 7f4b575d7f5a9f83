package store

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/gitrepo"
)

func openGit(ctx context.Context, repo *gitrepo.Repo, remote string) (Store, error) {
	return nil, errors.New("store: the git store is not implemented yet")
}
