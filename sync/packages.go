package sync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// Kinds of pull reports that are not rejections.
const (
	// KindPackageSuperseded: the remote published another file under a
	// name@version this branch published but never pushed; the remote's
	// copy was merged and this branch's withdrawn.
	KindPackageSuperseded = "package_superseded"
)

// Superseded is a package file of this branch that was never on the remote
// and that a pull withdrew because the remote had already published another
// file under the same name@version.
type Superseded struct {
	Kind    string // KindPackageSuperseded
	Repo    string
	Path    string
	Package string // name@version
	// Local is the withdrawn blob, Remote the one merged in its place.
	Local  string
	Remote string
	// Commit is a local commit that still holds the withdrawn file.
	Commit string
	Detail string
}

// packageChanges collects the fetched package files (both layouts).
type packageChanges struct {
	files   []gitstore.Change // paths this branch does not have
	changed []gitstore.Change // paths this branch holds with other bytes
}

// classify takes c when it lies under repos/<id>/packages/; it reports
// whether it did (rejecting odd modes itself).
func (pc *packageChanges) classify(c gitstore.Change, reject rejectFunc) bool {
	parts := strings.Split(c.Path, "/")
	if len(parts) < 4 || parts[0] != "repos" || parts[2] != gitstore.PackagesDirName {
		return false
	}
	switch {
	case c.Mode != filemode.Regular:
		reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a package file (mode %o): not merged", uint32(c.Mode))
	case !c.Old.IsZero():
		pc.changed = append(pc.changed, c)
	default:
		pc.files = append(pc.files, c)
	}
	return true
}

// publishedFunc returns, for each of paths, every blob id that path held in
// the remote's history as this clone knows it (see remoteHistoryBlobs).
type publishedFunc func(paths []string) (map[string]map[plumbing.Hash]bool, error)

// planPackages verifies each fetched package file (chain.CheckPackage:
// it parses, validates, its integrity and any signature verify, and its
// path is its manifest's name and version) and takes those that pass.
//
// A fetched file at a path where this branch holds other bytes is decided
// by the remote's history: when this branch's bytes were ever published
// there, the remote rewrote a published package and nothing of it is taken
// (chain.PackageConflict); when they never were, both sides published the
// same name@version concurrently and the remote's copy, published first on
// the shared remote, replaces this branch's (Superseded) if it verifies.
func planPackages(remote *gitstore.View, pc *packageChanges, published publishedFunc, p *plan) error {
	type checked struct {
		c    gitstore.Change
		repo string
		pkg  string // name@version
	}
	check := func(c gitstore.Change) (*checked, error) {
		repo := strings.Split(c.Path, "/")[1]
		reject := func(reason chain.Reason, format string, args ...any) {
			p.reject(repo, "", c.Path, reason, format, args...)
		}
		if err := gitrepo.ValidSegment(repo); err != nil {
			reject(chain.BadRepoID, "%v", err)
			return nil, nil
		}
		raw, err := remote.ReadBlob(c.Hash, ctxpkg.MaxFileSize)
		if errors.Is(err, gitstore.ErrTooLarge) {
			reject(chain.TooLarge, "%v", err)
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("read fetched package %s: %w", c.Path, err)
		}
		pkg, reason, detail := chain.CheckPackage(raw, c.Path, gitstore.PackagePlacer(repo))
		if reason != "" {
			reject(reason, "%s: not merged", detail)
			return nil, nil
		}
		return &checked{c: c, repo: repo, pkg: pkg.Manifest.Name + "@" + pkg.Manifest.Version}, nil
	}

	sort.Slice(pc.files, func(i, j int) bool { return pc.files[i].Path < pc.files[j].Path })
	for _, c := range pc.files {
		ok, err := check(c)
		if err != nil {
			return err
		}
		if ok != nil {
			p.edits[c.Path] = c.Hash
			p.packages++
		}
	}
	if len(pc.changed) == 0 {
		return nil
	}

	sort.Slice(pc.changed, func(i, j int) bool { return pc.changed[i].Path < pc.changed[j].Path })
	seen := map[string]map[plumbing.Hash]bool{}
	if published != nil {
		paths := make([]string, len(pc.changed))
		for i, c := range pc.changed {
			paths[i] = c.Path
		}
		var err error
		if seen, err = published(paths); err != nil {
			return fmt.Errorf("look up the remote's history of %d package file(s): %w", len(paths), err)
		}
	}
	for _, c := range pc.changed {
		if published == nil || seen[c.Path][c.Old] {
			p.rejected = append(p.rejected, Rejection{Repo: strings.Split(c.Path, "/")[1], Record: c.Path, Reason: string(chain.PackageConflict),
				Detail: "the remote rewrote a package it had published with this branch's bytes: not merged (published packages are immutable)"})
			continue
		}
		ok, err := check(c)
		if err != nil {
			return err
		}
		if ok == nil {
			continue // the remote's copy does not verify: this branch's stays
		}
		p.edits[c.Path] = c.Hash
		p.superseded = append(p.superseded, Superseded{Kind: KindPackageSuperseded, Repo: ok.repo, Path: c.Path,
			Package: ok.pkg, Local: c.Old.String(), Remote: c.Hash.String()})
	}
	return nil
}

// supersededDetail is the one-line report of s.
func supersededDetail(s Superseded) string {
	return fmt.Sprintf("package %s: the remote already published a different package under this name and version; "+
		"the remote's copy is kept and yours was withdrawn — publish yours under a new version "+
		"(recover it with: git show %s:%s > FILE)", s.Package, short(s.Commit), s.Path)
}

// trackingHistory lists the commits this clone knows were the remote's
// memory branch: the tracking ref's value before the fetch, the fetched tip
// (tips) and every old and new value in the tracking ref's reflog, so a
// remote that rewrote its history still cannot disown what it once
// published. Without a reflog (core.logAllRefUpdates off) only tips remain.
func trackingHistory(r *gitrepo.Repo, remote string, tips ...plumbing.Hash) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(h plumbing.Hash) {
		if !h.IsZero() && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, h := range tips {
		add(h)
	}
	// Read directly: git's reflog listing gives the new values only, and
	// the first entry's old value may be all that shows the original tip.
	log, err := os.ReadFile(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(TrackingRef(remote))))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		for _, id := range f[:2] {
			if h := plumbing.NewHash(id); len(id) == 40 && h.String() == id {
				add(h)
			}
		}
	}
	return out
}

// remoteHistoryBlobs returns, for each of paths, every blob id the path
// held in any commit reachable from tips (all parents of merges followed).
// Every blob a commit holds at a path appears in the raw diff of the first
// commit that introduced it against its parents (or against nothing, for a
// root commit), so one path-limited log answers for all paths at once.
func remoteHistoryBlobs(ctx context.Context, r *gitrepo.Repo, tips []plumbing.Hash, paths []string) (map[string]map[plumbing.Hash]bool, error) {
	out := map[string]map[plumbing.Hash]bool{}
	if len(tips) == 0 || len(paths) == 0 {
		return out, nil
	}
	// The tips go on stdin (a long reflog would not fit a command line);
	// --ignore-missing (which must come before --stdin) skips reflog
	// values whose commits were pruned.
	args := []string{"log", "--ignore-missing", "--stdin", "--full-history", "-m", "--root", "--no-renames",
		"--raw", "--no-abbrev", "--format=", "-z", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	var in strings.Builder
	for _, h := range tips {
		in.WriteString(h.String() + "\n")
	}
	raw, err := gitexec.Run(ctx, gitexec.Cmd{Dir: r.CommonDir, Args: args, Stdin: strings.NewReader(in.String())})
	if err != nil {
		return nil, err
	}
	fields := strings.Split(string(raw), "\x00")
	for i := 0; i+1 < len(fields); i++ {
		meta := strings.TrimSpace(fields[i])
		if !strings.HasPrefix(meta, ":") {
			continue
		}
		path := fields[i+1]
		i++
		// :<old mode> <new mode> <old blob> <new blob> <status>
		f := strings.Fields(meta)
		if len(f) < 5 {
			continue
		}
		for _, b := range f[2:4] {
			h := plumbing.NewHash(b)
			if h.IsZero() {
				continue
			}
			if out[path] == nil {
				out[path] = map[plumbing.Hash]bool{}
			}
			out[path][h] = true
		}
	}
	return out, nil
}

// checkPushKeepsPackages is Push's last line of defence: a push of tip
// must not replace or withdraw a package the remote publishes (as the
// tracking ref last saw it). Only a push that fast-forwards over the
// tracked tip can; any other is refused by the remote and merged first.
// Files there that do not verify are not protected: a pull rejected them,
// and a push drops them like every other rejected record.
func checkPushKeepsPackages(ctx context.Context, st *gitstore.Store, remote string, tip plumbing.Hash) error {
	tracked, err := st.ResolveRef(TrackingRef(remote))
	if err != nil {
		return fmt.Errorf("read %s: %w", TrackingRef(remote), err)
	}
	if tracked.IsZero() || tracked == tip {
		return nil
	}
	// This runs between the fetch and the push, where every millisecond
	// lets another pusher in: the common case stays in process (the trees
	// are compared first; git is asked about ancestry only on a finding).
	remoteView, err := st.ViewAt(tracked)
	if err != nil {
		return fmt.Errorf("read %s: %w", TrackingRef(remote), err)
	}
	localView, err := st.ViewAt(tip)
	if err != nil {
		return fmt.Errorf("read ghyll/memory: %w", err)
	}
	if same, err := samePackageTrees(localView, remoteView); err != nil || same {
		return err
	}
	changes, err := st.Diff(localView, remoteView) // what the remote has and this branch lacks or changed
	if err != nil {
		return fmt.Errorf("compare packages with %s: %w", TrackingRef(remote), err)
	}
	for _, c := range changes {
		parts := strings.Split(c.Path, "/")
		if len(parts) < 4 || parts[0] != "repos" || parts[2] != gitstore.PackagesDirName || c.Mode != filemode.Regular {
			continue
		}
		raw, err := st.ReadBlob(c.Hash, ctxpkg.MaxFileSize)
		if errors.Is(err, gitstore.ErrTooLarge) {
			continue
		} else if err != nil {
			return fmt.Errorf("read %s of %s: %w", c.Path, TrackingRef(remote), err)
		}
		pkg, reason, _ := chain.CheckPackage(raw, c.Path, gitstore.PackagePlacer(parts[1]))
		if reason != "" {
			continue
		}
		if ff, err := st.IsAncestor(ctx, tracked, tip); err != nil {
			return fmt.Errorf("compare %s with ghyll/memory: %w", TrackingRef(remote), err)
		} else if !ff {
			return nil // the remote refuses this push and it is merged first
		}
		what := "replace"
		if c.Old.IsZero() {
			what = "withdraw"
		}
		return fmt.Errorf("%w: push refused: it would %s package %s@%s that %s publishes (%s), and published packages are immutable; "+
			"run 'git ctx pull' (a package the remote rewrote is reported as %s and must be restored on the remote)",
			ErrPackageConflict, what, pkg.Manifest.Name, pkg.Manifest.Version, remote, c.Path, chain.PackageConflict)
	}
	return nil
}

// samePackageTrees reports whether every packages directory of remote has
// the same tree id in local (the usual case: nothing to compare further).
func samePackageTrees(local, remote *gitstore.View) (bool, error) {
	repos, err := remote.Repos()
	if err != nil {
		return false, fmt.Errorf("list the remote's repositories: %w", err)
	}
	dirHash := func(v *gitstore.View, repo string) (plumbing.Hash, error) {
		es, err := v.List("repos/" + repo)
		for _, e := range es {
			if e.Name == gitstore.PackagesDirName {
				return e.Hash, nil
			}
		}
		return plumbing.ZeroHash, err
	}
	for _, repo := range repos {
		r, err := dirHash(remote, repo)
		if err != nil {
			return false, fmt.Errorf("read the remote's packages of %s: %w", repo, err)
		}
		if r.IsZero() {
			continue
		}
		if l, err := dirHash(local, repo); err != nil || l != r {
			return false, nil // compared in full
		}
	}
	return true, nil
}
