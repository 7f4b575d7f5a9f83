// Package gitrepo finds the git repository a command runs in and answers
// questions about it: its directories, its configuration, its repo id, its
// current branch and what a commit changed. It finds the repository and
// reads its configuration once per process: in process for the common
// layouts, otherwise with one git call each.
package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// ErrNotARepo means the directory is not inside a git repository.
var ErrNotARepo = fault.Sentinel(fault.Config, "not a git repository")

// ErrBadConfig means a git-ctx setting in git config is unusable.
var ErrBadConfig = fault.Sentinel(fault.Config, "bad configuration")

// ErrNoRepoID means no repo id can be derived: no remote, no commit and no
// ctx.repoId.
var ErrNoRepoID = fault.Sentinel(fault.Config, "no remote, no commit and no ctx.repoId: cannot name this repository")

// Repo is one repository as seen from one directory.
type Repo struct {
	Dir        string // where the command runs
	GitDir     string // per-worktree git dir (absolute)
	CommonDir  string // shared git dir: objects, refs/heads (absolute)
	Bare       bool
	InWorkTree bool
	workTree   string // top of the work tree when known without asking git
	config     map[string][]string
}

// Open finds the repository containing dir (or $GIT_DIR) and reads its
// configuration.
//
// The common layouts are answered in process, reading the same files git
// reads, so that a command run from a hook starts no git process at all;
// anything unusual (see discoverInProcess and readConfigInProcess) is asked
// of git itself.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if d, ok := discoverInProcess(dir); ok {
		if cfg, err := readConfigInProcess(d); err == nil {
			return &Repo{Dir: dir, GitDir: d.gitDir, CommonDir: d.commonDir, Bare: d.bare,
				InWorkTree: d.inWorkTree, workTree: d.workTree, config: cfg}, nil
		}
	}
	return openWithGit(ctx, dir)
}

// openWithGit discovers the repository and reads its configuration by
// running git.
func openWithGit(ctx context.Context, dir string) (*Repo, error) {
	out, err := gitexec.Git(ctx, dir, "rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-bare-repository", "--is-inside-work-tree")
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && ge.ExitCode == 128 {
			return nil, fmt.Errorf("%w (or any parent up to /): %s", ErrNotARepo, dir)
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	r := &Repo{Dir: dir, GitDir: lines[0], CommonDir: lines[1], Bare: lines[2] == "true", InWorkTree: lines[3] == "true"}
	if err := r.ReloadConfig(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// ReloadConfig reads every configuration entry git sees (system, global,
// local, worktree, includes) in one call.
func (r *Repo) ReloadConfig(ctx context.Context) error {
	if r.workTree != "" {
		d := discovery{gitDir: r.GitDir, commonDir: r.CommonDir, workTree: r.workTree, inWorkTree: r.InWorkTree}
		if cfg, err := readConfigInProcess(d); err == nil {
			r.config = cfg
			return nil
		}
	}
	out, err := gitexec.Git(ctx, r.Dir, "config", "-z", "--list")
	if err != nil {
		var ge *gitexec.Error
		// An empty configuration exits 1 on some versions.
		if !(errors.As(err, &ge) && ge.ExitCode == 1 && len(out) == 0) {
			return fmt.Errorf("read git config: %w", err)
		}
	}
	r.config = ParseConfigList(out)
	return nil
}

// ParseConfigList parses `git config -z --list` output into a map from
// canonical key (section and name lower-cased, subsection kept) to values.
func ParseConfigList(out []byte) map[string][]string {
	m := map[string][]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		key, val, _ := bytes.Cut(rec, []byte{'\n'})
		k := CanonicalKey(string(key))
		m[k] = append(m[k], string(val))
	}
	return m
}

// CanonicalKey lower-cases the section and the name of a config key and
// keeps a subsection as written.
func CanonicalKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// Config returns the last value of key, or "".
func (r *Repo) Config(key string) string {
	v := r.config[CanonicalKey(key)]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// ConfigAll returns every value of key in order.
func (r *Repo) ConfigAll(key string) []string { return r.config[CanonicalKey(key)] }

// ConfigBool returns key as a git boolean, def when unset or unparsable.
func (r *Repo) ConfigBool(key string, def bool) bool {
	vals := r.ConfigAll(key)
	if len(vals) == 0 {
		return def
	}
	switch strings.ToLower(vals[len(vals)-1]) {
	case "": // "[section] key" without a value means true
		return true
	case "true", "yes", "on", "1":
		return true
	case "false", "no", "off", "0":
		return false
	}
	return def
}

// Remotes lists the configured remote names, sorted.
func (r *Repo) Remotes() []string {
	var names []string
	for k := range r.config {
		if strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".url") {
			names = append(names, k[len("remote."):len(k)-len(".url")])
		}
	}
	sort.Strings(names)
	return names
}

// MemoryRemote returns the remote memory is exchanged with: ctx.remote,
// else "origin" when it exists, else the only remote, else "".
func (r *Repo) MemoryRemote() string {
	if v := r.Config("ctx.remote"); v != "" {
		return v
	}
	remotes := r.Remotes()
	for _, n := range remotes {
		if n == "origin" {
			return n
		}
	}
	if len(remotes) == 1 {
		return remotes[0]
	}
	return ""
}

// RemoteURL returns the URL of the memory remote, normalised, or "".
func (r *Repo) RemoteURL() string {
	name := r.MemoryRemote()
	if name == "" {
		return ""
	}
	// The first URL, the one git fetches from: a push URL added later with
	// `git remote set-url --add` must not rename the repository.
	urls := r.ConfigAll("remote." + name + ".url")
	if len(urls) == 0 || urls[0] == "" {
		return ""
	}
	return NormalizeURL(urls[0])
}

// OriginURL is what `git remote get-url origin` prints, surrounding
// whitespace trimmed and nothing normalised (url.<base>.insteadOf applied,
// as git applies it): the string ghyll names a repository by. "" when there
// is no remote named origin.
func (r *Repo) OriginURL(ctx context.Context) (string, error) {
	if len(r.ConfigAll("remote.origin.url")) == 0 {
		return "", nil
	}
	out, err := gitexec.Git(ctx, r.Dir, "remote", "get-url", "origin")
	if err != nil {
		return "", fmt.Errorf("git remote get-url origin: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// RepoIDOverride returns git config ctx.repoId ("" when unset), or
// ErrBadConfig when it is not a safe path segment: a bad value is refused
// wherever it would count, also when the branch already fixes the id.
func (r *Repo) RepoIDOverride() (string, error) {
	v := strings.TrimSpace(r.Config("ctx.repoId"))
	if v == "" {
		return "", nil
	}
	if err := ValidSegment(v); err != nil {
		return "", fmt.Errorf("%w: git config ctx.repoId: %v: set one path segment, or unset it with 'git config --unset ctx.repoId'", ErrBadConfig, err)
	}
	return v, nil
}

// RepoID names this repository on the memory branch: ctx.repoId when set,
// else the SHA-256 of the normalised memory remote URL, else the SHA-256 of
// the root commit id of HEAD (the smallest, if there are several roots).
func (r *Repo) RepoID(ctx context.Context) (string, error) {
	if v, err := r.RepoIDOverride(); err != nil || v != "" {
		return v, err
	}
	if u := r.RemoteURL(); u != "" {
		return HashID(u), nil
	}
	root, err := r.rootCommit(ctx)
	if err != nil {
		return "", err
	}
	return HashID(root), nil
}

// rootCommitFile caches, under the common git dir, the root commit the
// repo id of a repository without a remote was derived from: finding it
// walks the whole history, and a repo id must not change anyway when
// history is rewritten later. Deleting the file makes git-ctx look again.
const rootCommitFile = "ctx/root-commit"

// rootCommit returns the smallest root commit id of HEAD, from the cache
// file when present.
func (r *Repo) rootCommit(ctx context.Context) (string, error) {
	cache := filepath.Join(r.CommonDir, filepath.FromSlash(rootCommitFile))
	if b, err := os.ReadFile(cache); err == nil {
		if id := strings.TrimSpace(string(b)); isObjectID(id) {
			return id, nil
		}
	}
	out, err := gitexec.Git(ctx, r.Dir, "rev-list", "--max-parents=0", "HEAD")
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return "", ErrNoRepoID
	}
	roots := strings.Fields(string(out))
	sort.Strings(roots)
	// Best effort: a read-only repository still works, only slower.
	_ = atomicfile.WriteFile(cache, []byte(roots[0]+"\n"),
		atomicfile.Options{Perm: 0o644, Replace: true, MkdirPerm: 0o755, NoSync: true})
	return roots[0], nil
}

// isObjectID reports whether s is a full lower-case hex object id (SHA-1
// or SHA-256).
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HashID is the lowercase hex SHA-256 of s.
func HashID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// NormalizeURL maps the spellings of one remote to one string: the scheme,
// user info, a default port and a trailing ".git" or "/" are dropped, the
// host is lower-cased, and scp syntax "user@host:a/b" becomes "host/a/b".
// Local paths are cleaned and keep their leading "/".
func NormalizeURL(raw string) string {
	u := strings.TrimSpace(raw)
	if u == "" {
		return ""
	}
	var host, path string
	if i := strings.Index(u, "://"); i > 0 && !strings.ContainsAny(u[:i], "/@:") {
		scheme := strings.ToLower(u[:i])
		rest := u[i+3:]
		if scheme == "file" {
			return trimRepoSuffix(filepath.Clean("/" + strings.TrimLeft(rest, "/")))
		}
		authority, p, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		host = dropDefaultPort(strings.ToLower(authority))
		path = p
	} else if colon := strings.IndexByte(u, ':'); colon > 0 && !strings.Contains(u[:colon], "/") && !isWindowsDrive(u, colon) {
		authority := u[:colon]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		host = strings.ToLower(authority)
		path = u[colon+1:]
	} else {
		return trimRepoSuffix(filepath.Clean(u))
	}
	path = strings.Trim(path, "/")
	path = strings.TrimPrefix(path, "~/")
	return trimRepoSuffix(host + "/" + path)
}

func trimRepoSuffix(s string) string {
	for {
		t := strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
		if t == s || t == "" {
			return s
		}
		s = t
	}
}

func dropDefaultPort(authority string) string {
	for _, p := range []string{":22", ":80", ":443", ":9418"} {
		if strings.HasSuffix(authority, p) {
			return strings.TrimSuffix(authority, p)
		}
	}
	return authority
}

func isWindowsDrive(u string, colon int) bool {
	return colon == 1 && len(u) > 2 && (u[2] == '\\' || u[2] == '/')
}

// ValidSegment reports whether s can be one path segment on the memory
// branch: non-empty, at most 128 bytes, no "/", "\", NUL, no "..", not ".",
// and nothing git or a checkout would read as .git or .gitmodules (any
// case, NTFS and HFS+ aliases: gitname.Check).
func ValidSegment(s string) error {
	switch {
	case s == "" || s == ".":
		return fmt.Errorf("%q is not a usable name", s)
	case len(s) > 128:
		return fmt.Errorf("name longer than 128 bytes")
	case strings.ContainsAny(s, "/\\\x00") || strings.Contains(s, ".."):
		return fmt.Errorf("%q contains a path separator, NUL or \"..\"", s)
	}
	if err := gitname.Check(s); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}

// CurrentBranch returns the short name of the branch checked out in this
// worktree ("" when detached or bare). During a rebase it returns the branch
// being rebased.
func (r *Repo) CurrentBranch() string {
	if r.Bare {
		return ""
	}
	for _, p := range []string{"rebase-merge/head-name", "rebase-apply/head-name"} {
		if b, err := os.ReadFile(filepath.Join(r.GitDir, p)); err == nil {
			// A rebase of a detached HEAD writes "detached HEAD".
			name, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "refs/heads/")
			if !ok {
				return ""
			}
			return name
		}
	}
	b, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		return strings.TrimPrefix(ref, "refs/heads/")
	}
	return ""
}

// Identity returns user.name and user.email (either may be "").
func (r *Repo) Identity() (name, email string) {
	return r.Config("user.name"), r.Config("user.email")
}

// WorkTree returns the top of the work tree ("" in a bare repository).
func (r *Repo) WorkTree(ctx context.Context) (string, error) {
	if !r.InWorkTree {
		return "", nil
	}
	if r.workTree != "" {
		return r.workTree, nil
	}
	out, err := gitexec.Git(ctx, r.Dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
