package gitrepo

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/gitexec"
)

// Every write to git config goes through these methods: they run the git
// executable on the repository's local configuration (.git/config), so
// git's own locking, quoting and include rules apply, then reload the
// Repo's view of the configuration so later Config calls see the change.

// SetConfig sets key to value in the local configuration (`git config
// --local key value`), replacing its one existing value.
func (r *Repo) SetConfig(ctx context.Context, key, value string) error {
	return r.writeConfig(ctx, "set "+key, false, key, value)
}

// AddConfig adds value to the multi-valued key in the local configuration
// (`git config --local --add key value`).
func (r *Repo) AddConfig(ctx context.Context, key, value string) error {
	return r.writeConfig(ctx, "add "+key, false, "--add", key, value)
}

// UnsetConfig removes every value of key equal to value from the local
// configuration (`git config --local --fixed-value --unset-all`). Nothing
// to remove is not an error.
func (r *Repo) UnsetConfig(ctx context.Context, key, value string) error {
	return r.writeConfig(ctx, "unset "+key, true, "--fixed-value", "--unset-all", key, value)
}

// RemoveConfigSection removes section (e.g. "hook.name") and every key in
// it from the local configuration (`git config --local --remove-section`).
func (r *Repo) RemoveConfigSection(ctx context.Context, section string) error {
	return r.writeConfig(ctx, "remove section "+section, false, "--remove-section", section)
}

// writeConfig runs `git config --local args...`; with unset, git's exit
// code 5 (nothing to unset) is success.
func (r *Repo) writeConfig(ctx context.Context, what string, unset bool, args ...string) error {
	_, err := gitexec.Git(ctx, r.Dir, append([]string{"config", "--local"}, args...)...)
	var ge *gitexec.Error
	if err != nil && !(unset && errors.As(err, &ge) && ge.ExitCode == 5) {
		return fmt.Errorf("git config: %s: %w", what, err)
	}
	return r.ReloadConfig(ctx)
}
