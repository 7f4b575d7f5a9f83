package main

import (
	"context"
	"errors"
	"strings"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/sessions"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// classify maps the errors of lower packages to exit codes.
func classify(err error) int {
	if strings.HasPrefix(err.Error(), "Required flag") {
		return exitUsage // urfave/cli reports these without OnUsageError
	}
	switch {
	case errors.Is(err, sessions.ErrConflict):
		return exitConflict
	case errors.Is(err, sessions.ErrRefused):
		return exitRefused
	case errors.Is(err, sessions.ErrConfig):
		return exitConfig
	case errors.Is(err, sessions.ErrStore):
		return exitRemote
	case errors.Is(err, sessions.ErrVerification), errors.Is(err, sessions.ErrNotFound):
		return exitFailed
	case errors.Is(err, ctxsync.ErrTransport):
		return exitRemote
	case errors.Is(err, ctxsync.ErrFork), errors.Is(err, ctxsync.ErrRejected),
		errors.Is(err, ctxsync.ErrPackageConflict), errors.Is(err, gitstore.ErrPackageExists):
		return exitConflict
	case errors.Is(err, ctxsync.ErrVerification):
		return exitFailed
	case errors.Is(err, ctxsync.ErrUnknownDevice):
		return exitFailed
	case errors.Is(err, cache.ErrQueryEmbedding):
		return exitRefused
	case errors.Is(err, ctxsync.ErrNoRemote):
		return exitConfig
	case errors.Is(err, ctxsync.ErrEmptyRemote):
		return exitRefused
	case errors.Is(err, workspace.ErrOutputExists):
		return exitRefused
	case errors.Is(err, workspace.ErrInput), errors.Is(err, checkpoint.ErrTooLarge),
		errors.Is(err, checkpoint.ErrUnencodable), errors.Is(err, gitstore.ErrTooLarge),
		errors.Is(err, gitstore.ErrPackagePath), errors.Is(err, ctxpkg.ErrTooLarge), errors.Is(err, ctxpkg.ErrEnvelopeTooLarge):
		return exitRefused
	case errors.Is(err, ctxpackages.ErrPackageFailed), errors.Is(err, gitstore.ErrPackageInvalid):
		return exitFailed
	case errors.Is(err, workspace.ErrNotFound):
		return exitFailed
	case errors.Is(err, workspace.ErrAmbiguous), errors.Is(err, workspace.ErrLayoutMismatch), errors.Is(err, gitstore.ErrAdopt):
		return exitUsage
	case errors.Is(err, gitstore.ErrConflict):
		return exitConflict
	case errors.Is(err, gitstore.ErrSnapshotLayout):
		return exitConfig
	case errors.Is(err, gitstore.ErrNotInitialized), errors.Is(err, gitrepo.ErrNotARepo),
		errors.Is(err, gitrepo.ErrNoRepoID), errors.Is(err, gitstore.ErrKeyConflict), errors.Is(err, gitrepo.ErrBadConfig),
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
