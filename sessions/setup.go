package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// SetupOptions says how Setup finds the store and the profile.
type SetupOptions struct {
	// Store is the store URL (--store); "" takes git config
	// ctx.sessionStore, and "" or "git" there is the git store on the
	// memory remote.
	Store string
	// Profile is the profile UUID (--profile); "" takes git config
	// ctx.sessionProfile, else the store's only profile.
	Profile string
	// Create: a push may make a new profile when the store has none.
	Create bool
	// LocalOnly: without a profile in the store, go on with an empty one
	// (list and status show local sessions only) instead of ErrNotFound.
	LocalOnly bool
	// Remote resolves the memory remote for the git store.
	Remote func(*gitrepo.Repo) (string, error)
	// Warn receives warnings (nil: dropped).
	Warn func(string)
}

// Setup is an opened store and profile for this repository's work tree.
type Setup struct {
	Client *Client // without passphrase
	Repo   *gitrepo.Repo
	// Created: the profile is new (the first push makes it).
	Created bool
	// configured: a profile was given or configured, so it need not be
	// remembered.
	configured bool
}

// configError keeps a message as it is while being an ErrConfig.
type configError struct{ err error }

func (e configError) Error() string   { return e.err.Error() }
func (e configError) Unwrap() []error { return []error{e.err, ErrConfig} }

// Open reads this repository's session configuration: the work tree and
// repository id of dir, the store (opened) and the profile. It is the one
// place this package reads git configuration (ctx.sessionStore,
// ctx.sessionProfile, ctx.sessionS3Endpoint).
func Open(ctx context.Context, dir string, opt SetupOptions) (*Setup, error) {
	repo, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	wt, err := repo.WorkTree(ctx)
	if err != nil {
		return nil, err
	}
	if wt == "" {
		return nil, configError{errors.New("git ctx session needs a work tree: run it inside a checkout of the project")}
	}
	repoID, err := repo.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	spec := opt.Store
	if spec == "" {
		spec = repo.Config("ctx.sessionStore")
	}
	remote := ""
	if spec == "" || spec == "git" {
		if remote, err = opt.Remote(repo); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, spec, store.Options{Repo: repo, Remote: remote, S3: store.S3Options{Endpoint: repo.Config("ctx.sessionS3Endpoint")}})
	if err != nil {
		return nil, configError{fmt.Errorf("open the session store: %w", err)}
	}
	configured := repo.Config("ctx.sessionProfile")
	profile, created, err := ResolveProfile(ctx, st, opt.Profile, configured, opt.Create)
	if err != nil && (!errors.Is(err, ErrNotFound) || !opt.LocalOnly) {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	cl := &Client{
		Store: st, Profile: profile, ProjectID: repoID, WorkTree: wt, Home: home,
		StateDir: filepath.Join(repo.CommonDir, "ctx", "sessions"), Warn: opt.Warn,
	}
	return &Setup{Client: cl, Repo: repo, Created: created, configured: configured != "" || opt.Profile != ""}, nil
}

// HasProfile reports whether the store has a profile to use (false only
// with LocalOnly when the store has none: nothing needs a passphrase).
func (s *Setup) HasProfile() bool { return s.Client.Profile != "" }

// RememberProfile stores the profile in the local git config when none was
// given or configured (the first push, or a machine that found the store's
// only profile).
func (s *Setup) RememberProfile(ctx context.Context) error {
	if s.configured || s.Client.Profile == "" {
		return nil
	}
	if err := s.Repo.SetConfig(ctx, "ctx.sessionProfile", s.Client.Profile); err != nil {
		return configError{fmt.Errorf("store the profile in git config: %w", err)}
	}
	return nil
}
