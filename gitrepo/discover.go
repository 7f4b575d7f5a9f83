package gitrepo

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
)

// ForceGitEnv, when set to "git" in the environment, makes Open ask the git
// executable for discovery and configuration instead of reading them in
// process. The in-process reading covers the common layouts exactly and
// hands everything else to git; this switch exists for comparison and as an
// escape hatch.
const ForceGitEnv = "GIT_CTX_DISCOVERY"

// discovery is what Open needs to know about where the repository is.
type discovery struct {
	gitDir, commonDir string
	workTree          string // top of the work tree; "" when bare
	bare, inWorkTree  bool
}

// discoverInProcess finds the repository containing dir the way git does,
// for the layouts it can answer with certainty: a work tree with a .git
// directory or a .git file (linked worktrees, submodules), found by walking
// up from dir, or $GIT_DIR alone (as git sets it for hooks in linked
// worktrees). It returns ok=false for everything else (bare repositories,
// a directory inside .git, GIT_WORK_TREE, GIT_COMMON_DIR, ceiling or
// cross-filesystem settings, directories owned by another user, which git
// may refuse under safe.directory), and the caller asks git.
func discoverInProcess(dir string) (d discovery, ok bool) {
	if os.Getenv(ForceGitEnv) == "git" {
		return d, false
	}
	for _, k := range []string{"GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY"} {
		if _, set := os.LookupEnv(k); set {
			return d, false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return d, false
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return d, false
	}
	if gd, set := os.LookupEnv("GIT_DIR"); set {
		// git: with GIT_DIR and no GIT_WORK_TREE (nor core.worktree, which
		// the caller checks), the current directory is the top of the
		// work tree.
		if gd == "" {
			return d, false
		}
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(abs, gd)
		}
		return fromGitDir(gd, abs)
	}
	dev := devOf(abs)
	for cur := abs; ; {
		if filepath.Base(cur) == ".git" {
			return d, false // inside a git dir: rev-parse semantics differ
		}
		dotgit := filepath.Join(cur, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				return fromGitDir(dotgit, cur)
			case fi.Mode().IsRegular():
				target, ok := readGitFile(dotgit)
				if !ok {
					return d, false
				}
				return fromGitDir(target, cur)
			default:
				return d, false // a symlink or something stranger: ask git
			}
		}
		if looksLikeGitDir(cur) {
			return d, false // a bare repository: ask git
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return d, false // git reports "not a repository" in its own words
		}
		if devOf(parent) != dev {
			return d, false // git stops at filesystem boundaries
		}
		cur = parent
	}
}

// fromGitDir completes a discovery from a git dir and the work tree top.
func fromGitDir(gitDir, top string) (d discovery, ok bool) {
	gitDir, err := filepath.EvalSymlinks(gitDir)
	if err != nil || !looksLikeGitDir(gitDir) {
		return d, false
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := string(bytes.TrimRight(b, "\r\n"))
		if c == "" {
			return d, false
		}
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		if common, err = filepath.EvalSymlinks(c); err != nil {
			return d, false
		}
	} else if !os.IsNotExist(err) {
		return d, false
	}
	if !ownedByMe(top) || !ownedByMe(gitDir) || !ownedByMe(common) {
		return d, false // safe.directory rules apply: let git decide
	}
	return discovery{gitDir: gitDir, commonDir: common, workTree: top, inWorkTree: true}, true
}

// readGitFile reads a ".git" file ("gitdir: PATH", relative to the file's
// directory).
func readGitFile(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	if !ok {
		return "", false
	}
	p := string(bytes.TrimRight(rest, "\r\n"))
	if p == "" || bytes.ContainsAny([]byte(p), "\n\x00") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(path), p)
	}
	return p, true
}

// looksLikeGitDir is git's minimal check: HEAD, and objects/ and refs/
// (those two may live in the common dir for a linked worktree).
func looksLikeGitDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// devOf returns the device number of path (0 when unknown).
func devOf(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// ownedByMe reports whether path belongs to the effective user.
func ownedByMe(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
