package main

import (
	"context"
	"errors"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/memory"
)

// classify maps the errors of lower packages to exit codes.
func classify(err error) int {
	switch {
	case errors.Is(err, memory.ErrInput), errors.Is(err, checkpoint.ErrTooLarge),
		errors.Is(err, checkpoint.ErrUnencodable), errors.Is(err, gitstore.ErrTooLarge):
		return exitRefused
	case errors.Is(err, memory.ErrNotFound):
		return exitFailed
	case errors.Is(err, memory.ErrAmbiguous), errors.Is(err, memory.ErrLayoutMismatch):
		return exitUsage
	case errors.Is(err, gitstore.ErrConflict):
		return exitConflict
	case errors.Is(err, gitstore.ErrNotInitialized), errors.Is(err, gitrepo.ErrNotARepo),
		errors.Is(err, gitrepo.ErrNoRepoID), errors.Is(err, gitstore.ErrKeyConflict),
		errors.Is(err, gitstore.ErrUnsupported), errors.Is(err, identity.ErrInsecure),
		errors.Is(err, identity.ErrCorrupt), errors.Is(err, identity.ErrInvalidID):
		return exitConfig
	case errors.Is(err, gitstore.ErrCorrupt):
		return exitFailed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return exitFailed
	}
	return exitFailed
}
