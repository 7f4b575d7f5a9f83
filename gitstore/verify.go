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

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Problem is something wrong on the branch that is not one device's chain:
// an unexpected path, a checkpoint file no chain names, an unreadable key.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// ChainReport is the verification of one device's chain in one repository.
type ChainReport struct {
	Repo     string                  `json:"repo"`
	Device   string                  `json:"device"`
	Entries  int                     `json:"entries"`
	Verified int                     `json:"verified"`
	Rules    map[checkpoint.Rule]int `json:"rules"`
	Failure  *chain.Failure          `json:"failure,omitempty"`
}

// Report is the verification of a whole branch.
type Report struct {
	OK      bool          `json:"ok"` // set by Verify: nothing failed
	Commit  string        `json:"commit"`
	Layout  Layout        `json:"layout"`
	Devices []string      `json:"devices"`
	Chains  []ChainReport `json:"chains"`
	// Timelines: each device's snapshot timeline (ctx-v1).
	Timelines []TimelineReport `json:"timelines"`
	// Packages: every published package file (both layouts).
	Packages []PackageReport `json:"packages"`
	Problems []Problem       `json:"problems"`
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
func (v *View) Verify() (*Report, error) { return v.VerifyFor("") }

// VerifyFor is Verify that also checks every repository directory against
// this repository's ids (View.AllowedRepos with fallback, the id this
// clone derives; "" skips the check on a branch without a REPO file): the
// chains of any other directory fail wrong_repo.
func (v *View) VerifyFor(fallback string) (*Report, error) {
	rep := &Report{Commit: v.Commit.String(), Layout: v.Layout, Devices: []string{}, Chains: []ChainReport{}, Timelines: []TimelineReport{}, Packages: []PackageReport{}, Problems: []Problem{}}
	problem := func(p, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: p, Reason: fmt.Sprintf(format, args...)})
	}
	root, err := v.List("")
	if err != nil {
		return nil, err
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
	if err := v.unsafeNames(v.Root, "", problem); err != nil {
		return nil, err
	}
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
	var allowed map[string]bool
	if _, err := v.BlobHash(RepoFile); err == nil || fallback != "" {
		a, _, err := v.AllowedRepos(fallback)
		switch {
		case errors.Is(err, ErrRepoID):
			problem(RepoFile, "%v", err)
		case err != nil:
			return nil, err
		default:
			allowed = a
		}
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
			continue // reported by unsafeNames
		}
		if err := v.verifyRepo(r.Name, allowed == nil || allowed[r.Name], keys, rep, problem); err != nil {
			return nil, err
		}
	}
	sort.Slice(rep.Timelines, func(i, j int) bool {
		a, b := rep.Timelines[i], rep.Timelines[j]
		return a.Repo < b.Repo || a.Repo == b.Repo && a.Device < b.Device
	})
	sort.Slice(rep.Chains, func(i, j int) bool {
		a, b := rep.Chains[i], rep.Chains[j]
		return a.Repo < b.Repo || a.Repo == b.Repo && a.Device < b.Device
	})
	rep.OK = rep.ok()
	return rep, nil
}

// unsafeNames reports every entry of the tree (walked whole) whose name
// git refuses or a checkout would read as .git or .gitmodules
// (gitname.Check), without descending below it.
func (v *View) unsafeNames(tree plumbing.Hash, prefix string, problem func(string, string, ...any)) error {
	t, err := v.s.readTree(tree)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if err := gitname.Check(e.Name); err != nil {
			problem(p, "unsafe path: %v", err)
			continue
		}
		if e.Mode == filemode.Dir {
			if err := v.unsafeNames(e.Hash, p, problem); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *View) verifyRepo(repoID string, ours bool, keys map[string]ed25519.PublicKey, rep *Report, problem func(string, string, ...any)) error {
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
	if err := v.verifyPackages(repoID, rep, problem); err != nil {
		return err
	}
	if v.Layout == LayoutCtxV1 {
		if err := v.verifySnapshots(repoID, keys, rep, problem); err != nil {
			return err
		}
	}
	files, bad, err := v.WalkCheckpoints(repoID)
	if err != nil {
		return err
	}
	for _, b := range bad {
		problem(b, "not a checkpoint file name of the %s layout", v.Layout)
	}
	blobs := make(map[string]CheckpointEntry, len(files))
	for _, f := range files {
		blobs[f.Hash] = f
	}
	chained := map[string]bool{}
	type task struct {
		cr      ChainReport
		entries []checkpoint.ChainEntry
	}
	var tasks []task
	chainEntries, err := v.List(ChainDir(repoID))
	if err != nil {
		return err
	}
	for _, ce := range chainEntries {
		var device string
		switch {
		case v.Layout == LayoutCtxV1 && ce.Mode == filemode.Dir:
			device = ce.Name
		case v.Layout == LayoutGhyllV1 && ce.Mode == filemode.Regular && strings.HasSuffix(ce.Name, ".jsonl"):
			device = strings.TrimSuffix(ce.Name, ".jsonl")
		default:
			problem(path.Join(ChainDir(repoID), ce.Name), "not a chain of the %s layout", v.Layout)
			continue
		}
		cr := ChainReport{Repo: repoID, Device: device, Rules: map[checkpoint.Rule]int{}}
		raw, err := v.ChainBytes(repoID, device)
		var list []checkpoint.ChainEntry
		if err == nil {
			var line int
			list, line, err = checkpoint.ParseChain(raw)
			if err != nil {
				cr.Failure = &chain.Failure{Device: device, Index: line - 1, Reason: chain.Malformed, Detail: err.Error()}
			}
		} else if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge) {
			cr.Failure = &chain.Failure{Device: device, Index: -1, Reason: chain.Malformed, Detail: err.Error()}
		} else {
			return err
		}
		cr.Entries = len(list)
		if !ours && cr.Failure == nil && len(list) > 0 {
			cr.Failure = &chain.Failure{Device: device, Index: -1, Reason: chain.WrongRepo,
				Detail: "repos/" + repoID + " is neither this repository's id nor an adopted one (git ctx adopt)"}
		}
		for _, e := range list {
			chained[e.Hash] = true
		}
		tasks = append(tasks, task{cr: cr, entries: list})
	}
	// Chains are independent: verify them in parallel (reads are serialised
	// inside the store; parsing, hashing and signatures run concurrently).
	var wg gosync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range tasks {
		if tasks[i].cr.Failure != nil {
			continue
		}
		wg.Add(1)
		go func(t *task) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := chain.Verify(chain.Input{
				Device: t.cr.Device, Repo: repoID, Key: keys[t.cr.Device], Entries: t.entries,
				Load: func(hash string) ([]byte, error) {
					f, ok := blobs[hash]
					if !ok {
						return nil, chain.ErrMissing
					}
					b, err := v.readPath(f.Path, f.Blob, checkpoint.MaxFileSize)
					if errors.Is(err, ErrTooLarge) {
						return nil, fmt.Errorf("%w: %w", chain.ErrTooLarge, err)
					}
					return b, err
				},
			})
			t.cr.Verified, t.cr.Rules, t.cr.Failure = res.Verified, res.Rules, res.Failure
		}(&tasks[i])
	}
	wg.Wait()
	for _, t := range tasks {
		rep.Chains = append(rep.Chains, t.cr)
	}
	for _, f := range files {
		if !chained[f.Hash] {
			problem(f.Path, "checkpoint file not named by any chain")
		}
	}
	return nil
}
