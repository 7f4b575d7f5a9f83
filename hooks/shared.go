package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// ErrShared: the place a hook would be written is shared by every
// repository of the user (a hooks directory named by the global or system
// git config, Codex's user configuration) and --global was not given;
// nothing was written.
var ErrShared = fault.Sentinel(fault.Refused, "shared by every repository")

// Options says how far install and uninstall may reach.
type Options struct {
	// Force replaces an edited git-ctx stub, writes despite a hook manager
	// or into a hooks directory inside the work tree, and replaces Codex's
	// notify program.
	Force bool
	// Global allows writing to places every repository of the user shares,
	// and uninstall to remove an entry there that other repositories (or
	// none that git-ctx knows of) still use.
	Global bool
}

// hooksLocation is where git runs this repository's hooks from, and who
// else runs them.
type hooksLocation struct {
	dir string
	// scope is the config scope core.hooksPath comes from ("" when unset).
	scope string
	// shared: core.hooksPath comes from the global or system config, so
	// every repository of the user runs the hooks in dir.
	shared bool
	// inWorkTree: dir lies inside the work tree (typically a directory of
	// the project such as .githooks/): a hook file there is a file of the
	// project.
	inWorkTree bool
}

// locateHooks finds the hooks directory and where its setting comes from.
func locateHooks(ctx context.Context, r *gitrepo.Repo) (hooksLocation, error) {
	dir, err := HooksDir(ctx, r)
	if err != nil {
		return hooksLocation{}, err
	}
	loc := hooksLocation{dir: dir}
	if r.Config("core.hooksPath") == "" {
		return loc, nil
	}
	out, err := gitexec.Git(ctx, r.Dir, "config", "--show-scope", "--get", "core.hooksPath")
	if err == nil {
		loc.scope, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\t")
	}
	switch loc.scope {
	case "global", "system":
		loc.shared = true
	}
	if top, err := r.WorkTree(ctx); err == nil && top != "" {
		loc.inWorkTree = within(dir, top)
	}
	return loc, nil
}

// within reports whether path is dir or lies below it, comparing resolved
// paths when they exist.
func within(path, dir string) bool {
	resolve := func(p string) string {
		if q, err := filepath.EvalSymlinks(p); err == nil {
			return q
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// repoKey names a repository in a users file: its common git directory,
// absolute and resolved, so every worktree of one repository is one user.
func repoKey(r *gitrepo.Repo) string {
	if p, err := filepath.EvalSymlinks(r.CommonDir); err == nil {
		return p
	}
	return filepath.Clean(r.CommonDir)
}

// usersFile records which repositories rely on an entry git-ctx wrote in
// a place several repositories share: one absolute git directory a line.
// An entry is removed only when the last repository that installed it
// uninstalls it.
type usersFile string

// list returns the recorded repositories that still exist.
func (u usersFile) list() ([]string, error) {
	data, err := os.ReadFile(string(u))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" {
			continue
		}
		if _, err := os.Stat(l); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// exists reports whether the users file is there at all (an entry written
// by an older git-ctx has none).
func (u usersFile) exists() bool {
	_, err := os.Lstat(string(u))
	return err == nil
}

// add records repo as a user.
func (u usersFile) add(repo string) error {
	users, err := u.list()
	if err != nil {
		return err
	}
	for _, x := range users {
		if x == repo {
			return u.write(users)
		}
	}
	return u.write(append(users, repo))
}

// remove drops repo and returns whether it was recorded and how many
// users remain.
func (u usersFile) remove(repo string) (was bool, left int, err error) {
	users, err := u.list()
	if err != nil {
		return false, 0, err
	}
	kept := users[:0]
	for _, x := range users {
		if x == repo {
			was = true
		} else {
			kept = append(kept, x)
		}
	}
	if !was {
		return false, len(users), nil
	}
	return true, len(kept), u.write(kept)
}

// release drops repo from the users of a shared entry (what, in path:
// "the notify", "the MCP server") and says why the entry stays, when it
// does: another repository still uses it, or this one never installed it;
// with global the entry goes regardless. keep reports that the caller
// must leave the entry, with msg as its answer.
func (u usersFile) release(repo, path, what string, global bool) (msg string, keep bool, err error) {
	was, left, err := u.remove(repo)
	switch {
	case err != nil:
		return "", true, err
	case !was && !global:
		return fmt.Sprintf("codex: %s in %s (your configuration for every repository) was not installed from this repository: left alone (pass --global to remove it)", what, path), true, nil
	case left > 0 && !global:
		return fmt.Sprintf("codex: %s kept in %s: still used by %s", what, path, otherRepos(left)), true, nil
	}
	return "", false, nil
}

func (u usersFile) write(users []string) error {
	if len(users) == 0 {
		if err := os.Remove(string(u)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	sort.Strings(users)
	var b bytes.Buffer
	for _, x := range users {
		b.WriteString(x + "\n")
	}
	return writeFileAtomic(string(u), b.Bytes(), 0o600)
}

// gitHooksUsers is the users file of hook in a shared hooks directory.
func gitHooksUsers(dir, hook string) usersFile {
	return usersFile(filepath.Join(dir, hook+".git-ctx-users"))
}

// excludeLine keeps the project's local Claude settings out of `git status`.
const excludeLine = "/.claude/settings.local.json"

// excludeMarker records in the state directory that install added
// excludeLine to info/exclude, so uninstall removes only its own line.
func excludeMarker(stateDir string) string {
	return filepath.Join(stateDir, "hooks-backup", "info-exclude.added")
}

// ignoreClaudeSettings adds excludeLine to the repository's info/exclude
// (never to a tracked .gitignore) unless git already ignores the file.
func ignoreClaudeSettings(ctx context.Context, r *gitrepo.Repo, top, stateDir string) (bool, error) {
	if _, err := gitexec.Git(ctx, top, "check-ignore", "-q", "--no-index", ".claude/settings.local.json"); err == nil {
		return false, nil // already ignored
	}
	path := filepath.Join(r.CommonDir, "info", "exclude")
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	out := append([]byte{}, cur...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, excludeLine+"\n"...)
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(excludeMarker(stateDir)), 0o700); err != nil {
		return false, err
	}
	return true, os.WriteFile(excludeMarker(stateDir), nil, 0o600)
}

// unignoreClaudeSettings removes the line ignoreClaudeSettings added.
func unignoreClaudeSettings(r *gitrepo.Repo, stateDir string) error {
	if _, err := os.Stat(excludeMarker(stateDir)); err != nil {
		return nil
	}
	path := filepath.Join(r.CommonDir, "info", "exclude")
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines := strings.SplitAfter(string(cur), "\n")
	for i, l := range lines {
		if strings.TrimRight(l, "\n") == excludeLine {
			lines = append(lines[:i], lines[i+1:]...)
			if err := writeFileAtomic(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
				return err
			}
			break
		}
	}
	return os.Remove(excludeMarker(stateDir))
}

// otherRepos says "1 other repository" or "N other repositories".
func otherRepos(n int) string {
	if n == 1 {
		return "1 other repository"
	}
	return fmt.Sprintf("%d other repositories", n)
}
