package gitstore

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	gosync "sync"

	"github.com/git-ctx/git-ctx/formats/snapshot"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Problem is something wrong on the branch that is not one device's chain:
// an unexpected path, a checkpoint file no chain names, an unreadable key.
// Its Reason is a sentence for the reader (with the path), not a
// chain.Reason: layout problems are told apart by their path.
type Problem struct {
	Path   string
	Reason string
}

// ChainReport is the verification of one device's chain in one repository.
type ChainReport struct {
	Repo     string
	Device   string
	Entries  int
	Verified int
	Rules    map[checkpoint.Rule]int
	Failure  *chain.Failure
}

// Report is the verification of a whole branch.
type Report struct {
	OK      bool // set by Verify: nothing failed
	Commit  string
	Layout  Layout
	Devices []string
	Chains  []ChainReport
	// Timelines: each device's snapshot timeline (ctx-v1).
	Timelines []TimelineReport
	// Packages: every published package file (both layouts).
	Packages []PackageReport
	Problems []Problem
}

func (r *Report) ok() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, c := range r.Chains {
		if c.Failure != nil {
			return false
		}
	}
	for _, t := range r.Timelines {
		if t.Failure != nil {
			return false
		}
	}
	for _, p := range r.Packages {
		if p.Reason != "" {
			return false
		}
	}
	return true
}

// Verified counts checkpoints that passed.
func (r *Report) Verified() int {
	n := 0
	for _, c := range r.Chains {
		n += c.Verified
	}
	return n
}

// Verify checks the whole branch: every device key parses, every chain links
// from its genesis, every checkpoint it names has a matching file whose hash
// and signature verify under the device's key, no checkpoint file is outside
// a chain, and nothing on the branch lies outside the layout.
//
// gitstore checks the layout (what may sit where: Problems); every record
// is verified by package chain (chain.VerifyStored, chain.VerifyTimeline,
// chain.CheckPackage) through the branch's chain.Tree.
func (v *View) Verify() (*Report, error) { return v.VerifyFor("") }

// VerifyFor is Verify that also checks every repository directory against
// this repository's ids (View.AllowedRepos with fallback, the id this
// clone derives; "" skips the check on a branch without a REPO file): the
// chains of any other directory fail wrong_repo.
func (v *View) VerifyFor(fallback string) (*Report, error) {
	rep := &Report{Commit: v.Commit.String(), Layout: v.Layout, Devices: []string{}, Chains: []ChainReport{}, Timelines: []TimelineReport{}, Packages: []PackageReport{}, Problems: []Problem{}}
	problem := func(p, format string, args ...any) {
		rep.Problems = append(rep.Problems, newProblem(p, format, args...))
	}
	if err := v.checkRoot(problem); err != nil {
		return nil, err
	}
	walks := map[string]*checkpointWalk{}
	if err := v.unsafeNamesGather(v.Root, "", problem, walks); err != nil {
		return nil, err
	}
	keys, err := v.verifyDeviceKeys(rep, problem)
	if err != nil {
		return nil, err
	}
	allowed, err := v.allowedForVerify(fallback, problem)
	if err != nil {
		return nil, err
	}
	repos, err := v.List("repos")
	if err != nil {
		return nil, err
	}
	for _, r := range repos {
		if r.Mode != filemode.Dir {
			problem("repos/"+r.Name, "not a repository directory")
			continue
		}
		if gitname.Check(r.Name) != nil {
			continue // reported by unsafeNamesGather
		}
		if err := v.verifyRepo(r.Name, allowed == nil || allowed[r.Name], keys, walks[r.Name], rep, problem); err != nil {
			return nil, err
		}
	}
	sortReport(rep)
	rep.OK = rep.ok()
	return rep, nil
}

// checkRoot reports root entries outside the layout.
func (v *View) checkRoot(problem func(string, string, ...any)) error {
	root, err := v.List("")
	if err != nil {
		return err
	}
	for _, e := range root {
		switch {
		case e.Name == "devices" && e.Mode == filemode.Dir, e.Name == "repos" && e.Mode == filemode.Dir:
		case e.Name == LayoutFile && e.Mode == filemode.Regular && v.Layout == LayoutCtxV1:
		case e.Name == RepoFile && e.Mode == filemode.Regular:
		default:
			problem(e.Name, "not part of the %s layout", v.Layout)
		}
	}
	return nil
}

// verifyDeviceKeys lists the device keys into rep.Devices, reports files
// of devices/ that are not keys, ids that break the read rule or collide
// (identity.ValidBranchDeviceID, DeviceIDFoldKey) and keys that do not
// parse, and returns the keys that do.
func (v *View) verifyDeviceKeys(rep *Report, problem func(string, string, ...any)) (map[string]ed25519.PublicKey, error) {
	keys := map[string]ed25519.PublicKey{}
	folded := map[string]string{} // identity.DeviceIDFoldKey → the first id
	devEntries, err := v.List("devices")
	if err != nil {
		return nil, err
	}
	for _, e := range devEntries {
		id, ok := strings.CutSuffix(e.Name, ".pub")
		if !ok || e.Mode != filemode.Regular {
			if !(e.Name == ".gitkeep" && e.Mode == filemode.Regular) { // ghyll's init commit
				problem("devices/"+e.Name, "not a device key file")
			}
			continue
		}
		rep.Devices = append(rep.Devices, id)
		if err := identity.ValidBranchDeviceID(id); err != nil {
			problem(DeviceKeyPath(id), "bad device id: %v", err)
		} else if other, dup := folded[identity.DeviceIDFoldKey(id)]; dup {
			problem(DeviceKeyPath(id), "bad device id: %q differs from device %q only in letter case or trailing dots", id, other)
		} else {
			folded[identity.DeviceIDFoldKey(id)] = id
		}
		pub, _, err := v.DeviceKey(id)
		if err != nil {
			problem(DeviceKeyPath(id), "%v", err)
			continue
		}
		keys[id] = pub
	}
	return keys, nil
}

// allowedForVerify returns the repository ids whose directories hold this
// repository's records (nil: no check), reporting a bad REPO file.
func (v *View) allowedForVerify(fallback string, problem func(string, string, ...any)) (map[string]bool, error) {
	if _, err := v.BlobHash(RepoFile); err != nil && fallback == "" {
		return nil, nil
	}
	a, _, err := v.AllowedRepos(fallback)
	switch {
	case errors.Is(err, ErrRepoID):
		problem(RepoFile, "%v", err)
		return nil, nil
	case err != nil:
		return nil, err
	}
	return a, nil
}

func sortReport(rep *Report) {
	sort.Slice(rep.Timelines, func(i, j int) bool {
		a, b := rep.Timelines[i], rep.Timelines[j]
		return a.Repo < b.Repo || a.Repo == b.Repo && a.Device < b.Device
	})
	sort.Slice(rep.Chains, func(i, j int) bool {
		a, b := rep.Chains[i], rep.Chains[j]
		return a.Repo < b.Repo || a.Repo == b.Repo && a.Device < b.Device
	})
}

// checkpointWalk is walkCheckpoints' result for one repository's
// checkpoints directory (the tree tree), gathered by unsafeNamesGather
// while it reads the same trees, so that a whole-branch verify reads each
// of them once (~1 tree per checkpoint with two fan-out levels).
type checkpointWalk struct {
	tree  plumbing.Hash
	files map[string]plumbing.Hash // blob by hash
	bad   []string
	dup   bool // a second directory at that path (hostile tree): walk again
}

// unsafeNamesGather reports every entry of the tree (walked whole) whose
// name git refuses or a checkout would read as .git or .gitmodules
// (gitname.Check), without descending below it; with walks set, it also
// runs walkCheckpoints' visit over every repos/<id>/checkpoints directory
// it meets, into walks[id].
func (v *View) unsafeNamesGather(tree plumbing.Hash, prefix string, problem func(string, string, ...any), walks map[string]*checkpointWalk) error {
	t, err := v.readWalkedTree(tree, prefix, problem, nil)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := childPath(prefix, e.Name)
		if err := gitname.Check(e.Name); err != nil {
			problem(p, "unsafe path: %v", err)
			continue
		}
		if e.Mode != filemode.Dir {
			continue
		}
		if repoID, ok := checkpointsDirRepo(p); ok && walks != nil {
			if w, seen := walks[repoID]; seen {
				w.dup = true
			} else {
				w := &checkpointWalk{tree: e.Hash, files: map[string]plumbing.Hash{}}
				walks[repoID] = w
				if err := v.gatherCheckpointsDir(e.Hash, p, repoID, w, problem); err != nil {
					return err
				}
				continue
			}
		}
		if err := v.unsafeNamesGather(e.Hash, p, problem, walks); err != nil {
			return err
		}
	}
	return nil
}

// readWalkedTree reads a tree of the layout walk at prefix and reports it
// malformed when it names an entry twice or out of git's order
// (treeEntriesProblem): git's path lookup and this walk could then read
// different objects for one path.
//
// tr: the worker's reader (nil: the Store's own, under its lock).
func (v *View) readWalkedTree(tree plumbing.Hash, prefix string, problem func(string, string, ...any), tr *treeReader) (*object.Tree, error) {
	t, err := v.s.readTreeWith(tree, tr)
	if err != nil {
		return nil, err
	}
	if why := treeEntriesProblem(t.Entries); why != "" {
		problem(treeDirPath(prefix), "malformed tree: %s", why)
	}
	return t, nil
}

// checkpointsDirRepo returns id when p is repos/<id>/checkpoints.
func checkpointsDirRepo(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "repos/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/checkpoints")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// unsafeAndCheckpoints is unsafeNamesGather below a checkpoints directory (prefix,
// the unsafe-name paths) and, while inCP, walkCheckpoints' visit of the
// same entries (dir, its paths; depth below the checkpoints directory), in
// the order each of them alone visits them. tr: see readWalkedTree.
func (v *View) unsafeAndCheckpoints(tree plumbing.Hash, prefix, dir, repoID string, depth int, inCP bool,
	found func(full, hash string, blob plumbing.Hash), bad *[]string, problem func(string, string, ...any), tr *treeReader) error {
	t, err := v.readWalkedTree(tree, prefix, problem, tr)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if err := v.unsafeAndCheckpointsEntry(e, prefix, dir, repoID, depth, inCP, found, bad, problem, tr); err != nil {
			return err
		}
	}
	return nil
}

// unsafeAndCheckpointsEntry is unsafeAndCheckpoints' visit of one entry e
// of the tree at prefix (and dir), and of everything below it.
func (v *View) unsafeAndCheckpointsEntry(e object.TreeEntry, prefix, dir, repoID string, depth int, inCP bool,
	found func(full, hash string, blob plumbing.Hash), bad *[]string, problem func(string, string, ...any), tr *treeReader) error {
	p := childPath(prefix, e.Name)
	// dir is prefix, made of names gitname.Check passed (clean): for
	// a plain name path.Join(dir, name) is p, not made again.
	full := p
	if dir != prefix || !plainName(e.Name) {
		full = path.Join(dir, e.Name)
	}
	descend := inCP && v.visitCheckpoint(repoID, e, full, depth, found, bad)
	if err := gitname.Check(e.Name); err != nil {
		problem(p, "unsafe path: %v", err)
		return nil
	}
	if e.Mode != filemode.Dir {
		return nil
	}
	return v.unsafeAndCheckpoints(e.Hash, p, full, repoID, depth+1, descend, found, bad, problem, tr)
}

// verifyRepo checks one repository directory: its layout, its packages,
// its snapshot timelines (ctx-v1) and its chains, and that every
// checkpoint file is named by a chain.
func (v *View) verifyRepo(repoID string, ours bool, keys map[string]ed25519.PublicKey, walked *checkpointWalk, rep *Report, problem func(string, string, ...any)) error {
	if err := v.checkRepoDir(repoID, problem); err != nil {
		return err
	}
	if err := v.verifyPackages(repoID, rep, problem); err != nil {
		return err
	}
	t := &verifyTree{chainTree: chainTree{v}, repo: repoID}
	if v.Layout == LayoutCtxV1 {
		if err := v.verifySnapshots(t, keys, rep, problem); err != nil {
			return err
		}
	}
	// Files by hash, their paths not kept (the layout's path for the
	// hash, as walkCheckpoints checked): a few dozen bytes a record.
	bad, err := v.checkpointFiles(repoID, walked, t)
	if err != nil {
		return err
	}
	for _, b := range bad {
		problem(b, "not a checkpoint file name of the %s layout", v.LayoutName())
	}
	devices, err := v.chainDirDevices(repoID, problem)
	if err != nil {
		return err
	}
	chained, err := verifyChains(t, repoID, ours, v.Layout.SessionRoots(), devices, keys, rep)
	if err != nil {
		return err
	}
	var orphans []string
	for hash := range t.checkpoints {
		if !chained[hash] {
			orphans = append(orphans, v.CheckpointPath(repoID, hash))
		}
	}
	sort.Strings(orphans) // in tree order, as the walk found them
	for _, p := range orphans {
		problem(p, "checkpoint file not named by any chain")
	}
	return nil
}

// checkpointFiles fills t.checkpoints with repoID's checkpoint files and
// returns the paths walkCheckpoints finds outside the layout: walked's,
// when it is the walk of the directory the path resolves to, else from a
// walk of their own.
func (v *View) checkpointFiles(repoID string, walked *checkpointWalk, t *verifyTree) ([]string, error) {
	if walked != nil && !walked.dup {
		e, err := v.entry(path.Join(RepoDir(repoID), "checkpoints"))
		if err == nil && e.Mode == filemode.Dir && e.Hash == walked.tree {
			t.checkpoints = walked.files
			return walked.bad, nil
		}
	}
	t.checkpoints = map[string]plumbing.Hash{}
	return v.walkCheckpoints(repoID, func(_, hash string, blob plumbing.Hash) { t.checkpoints[hash] = blob })
}

// checkRepoDir reports entries of repos/<repoID>/ outside the layout.
func (v *View) checkRepoDir(repoID string, problem func(string, string, ...any)) error {
	dir := RepoDir(repoID)
	entries, err := v.List(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		snapDir := v.Layout == LayoutCtxV1 && (e.Name == SnapshotsDirName || e.Name == TimelinesDirName)
		if (e.Name != "checkpoints" && e.Name != "chains" && e.Name != PackagesDirName && !snapDir) || e.Mode != filemode.Dir {
			problem(path.Join(dir, e.Name), "not part of the %s layout", v.Layout)
		}
	}
	return nil
}

// chainDirDevices lists the devices with a chain of the layout's form in
// repoID, reporting every other entry of its chains directory.
func (v *View) chainDirDevices(repoID string, problem func(string, string, ...any)) ([]string, error) {
	chainEntries, err := v.List(ChainDir(repoID))
	if err != nil {
		return nil, err
	}
	var devices []string
	for _, ce := range chainEntries {
		switch {
		case v.Layout == LayoutCtxV1 && ce.Mode == filemode.Dir:
			devices = append(devices, ce.Name)
		case v.Layout == LayoutGhyllV1 && ce.Mode == filemode.Regular && strings.HasSuffix(ce.Name, ".jsonl"):
			devices = append(devices, strings.TrimSuffix(ce.Name, ".jsonl"))
		default:
			problem(path.Join(ChainDir(repoID), ce.Name), "not a chain of the %s layout", v.Layout)
		}
	}
	return devices, nil
}

// verifyChains verifies the chains of devices in repoID (chain.VerifyStored)
// in parallel — chains are independent; reads are serialised inside the
// store, parsing, hashing and signatures run concurrently — adds their
// reports to rep in order and returns the hashes they name. sessionRoots:
// the layout's linkage rule allows a root per session.
func verifyChains(t chain.Tree, repoID string, ours, sessionRoots bool, devices []string, keys map[string]ed25519.PublicKey, rep *Report) (map[string]bool, error) {
	results := make([]chain.StoredResult, len(devices))
	errs := make([]error, len(devices))
	var wg gosync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, dev := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = chain.VerifyStored(t, chain.Stored{Repo: repoID, Device: dev, Key: keys[dev], Foreign: !ours, SessionRoots: sessionRoots})
		}()
	}
	wg.Wait()
	chained := map[string]bool{}
	for i, r := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		for _, e := range r.List {
			chained[e.Hash] = true
		}
		rep.Chains = append(rep.Chains, ChainReport{Repo: repoID, Device: devices[i], Entries: len(r.List),
			Verified: r.Verified, Rules: r.Rules, Failure: r.Failure})
	}
	return chained, nil
}

// ChainTree is the branch as package chain reads it (chain.Tree): the
// records of View, with gitstore's errors also matching chain's sentinels
// (ErrNotExist is chain.ErrMissing, ErrTooLarge chain.ErrTooLarge,
// ErrCorrupt chain.ErrUnreadable) and their messages unchanged.
func (v *View) ChainTree() chain.Tree { return chainTree{v} }

type chainTree struct{ v *View }

// markedError is err that also matches kind (a chain sentinel).
type markedError struct{ kind, err error }

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() []error { return []error{e.kind, e.err} }

// forChain marks err with the chain sentinel of its kind.
func forChain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotExist):
		return &markedError{chain.ErrMissing, err}
	case errors.Is(err, ErrTooLarge):
		return &markedError{chain.ErrTooLarge, err}
	case errors.Is(err, ErrCorrupt):
		return &markedError{chain.ErrUnreadable, err}
	}
	return err
}

func (t chainTree) DeviceKey(device string) (ed25519.PublicKey, error) {
	k, _, err := t.v.DeviceKey(device)
	return k, forChain(err)
}

func (t chainTree) ChainBytes(repo, device string) ([]byte, error) {
	b, err := t.v.ChainBytes(repo, device)
	return b, forChain(err)
}

func (t chainTree) ChainFrom(repo, device string, start int) ([]checkpoint.ChainEntry, error) {
	e, err := t.v.ChainFrom(repo, device, start)
	return e, forChain(err)
}

// CheckpointFile: a file over its limit fails with "checkpoint file too
// large: <the store's error>", the detail verify and pull have always shown.
func (t chainTree) CheckpointFile(repo, hash string) ([]byte, error) {
	b, err := t.v.CheckpointFile(repo, hash)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", chain.ErrTooLarge, err)
	}
	return b, forChain(err)
}

func (t chainTree) TimelineLines(repo, device string) ([]snapshot.TimelineLine, error) {
	l, err := t.v.TimelineLines(repo, device)
	return l, forChain(err)
}

func (t chainTree) SnapshotFile(repo, id string) ([]byte, error) {
	b, err := t.v.SnapshotFile(repo, id)
	return b, forChain(err)
}

// verifyTree is the chain.Tree of one repository directory under verify:
// checkpoint and snapshot files are the ones the layout walk listed (a file
// at an unexpected path is a layout problem, and for the chain a missing
// file).
type verifyTree struct {
	chainTree
	repo        string
	checkpoints map[string]plumbing.Hash // blob by hash
	snapshots   map[string]plumbing.Hash // blob by id
}

func (t *verifyTree) CheckpointFile(repo, hash string) ([]byte, error) {
	blob, ok := t.checkpoints[hash]
	if repo != t.repo || !ok {
		return nil, chain.ErrMissing
	}
	b, err := t.v.s.readBlob(blob, checkpoint.MaxFileSize)
	if errors.Is(err, ErrTooLarge) {
		// readPath's error, the path made only when it is needed.
		var tl *TooLargeError
		if errors.As(err, &tl) {
			tl.Path = t.v.CheckpointPath(repo, hash)
		}
		return nil, fmt.Errorf("%w: %w", chain.ErrTooLarge, err)
	}
	return b, err
}

func (t *verifyTree) SnapshotFile(repo, id string) ([]byte, error) {
	h, ok := t.snapshots[id]
	if repo != t.repo || !ok {
		return nil, chain.ErrMissing
	}
	b, err := t.v.s.readBlob(h, snapshot.MaxFileSize)
	return b, forChain(err)
}
