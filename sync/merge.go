package sync

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	gosync "sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Rejection is something a fetch brought that was not merged.
type Rejection struct {
	Repo   string `json:"repo"`
	Device string `json:"device"`
	Record string `json:"record"` // a checkpoint hash, or a path
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// DeviceResult is the outcome for one device's chain in one repository.
type DeviceResult struct {
	Repo     string `json:"repo"`
	Device   string `json:"device"`
	Added    int    `json:"added"`
	Rejected bool   `json:"rejected"`
	Fork     bool   `json:"fork"`
	Reason   string `json:"reason,omitempty"`
	Record   string `json:"record,omitempty"`
	Local    string `json:"local,omitempty"` // our record at a fork
}

// plan is what a merge of a fetched tip would take.
type plan struct {
	edits     map[string]plumbing.Hash
	accepted  []string // hashes of the checkpoints verified and merged
	devices   []DeviceResult
	rejected  []Rejection
	newKeys   []string
	added     int
	snapshots int // timeline entries taken (sync/snapshots.go)
	packages  int // package files taken (sync/packages.go)
	// superseded: this branch's unpushed packages replaced by the remote's
	// copies (sync/packages.go).
	superseded []Superseded
	forks      int
	layoutNew  bool // the local branch did not exist
	// sharedKeys: keys accepted in this pull that are also published under
	// another id (pinned here, or arriving in the same pull).
	sharedKeys []SharedKey
	// badID reports why a device id from the remote is refused
	// (chain.BadDeviceID), or nil.
	badID func(dev string) error
}

// SharedKey is one public key published under several device ids.
type SharedKey struct {
	Fingerprint string   `json:"fingerprint"`
	Devices     []string `json:"devices"` // every id holding the key, sorted
	New         []string `json:"new"`     // those this pull accepted, sorted
}

type chainKey struct{ repo, device string }

// rejectFunc records a rejection of record (a hash or a path) of dev in repo.
type rejectFunc func(repo, dev, record string, reason chain.Reason, format string, args ...any)

// reject records a rejection in the plan (a rejectFunc).
func (p *plan) reject(repo, dev, record string, reason chain.Reason, format string, args ...any) {
	p.rejected = append(p.rejected, Rejection{Repo: repo, Device: dev, Record: record, Reason: string(reason), Detail: fmt.Sprintf(format, args...)})
}

// makePlan decides what of remote may be merged into local (nil: no local
// branch). Nothing that fails a check is taken; everything else is.
// published answers what the remote ever held at package paths (nil: treat
// every package this branch holds as published there).
func makePlan(st *gitstore.Store, local, remote *gitstore.View, pol Policy, published publishedFunc) (*plan, error) {
	p := &plan{edits: map[string]plumbing.Hash{}}
	reject := p.reject
	if local != nil && local.Layout != remote.Layout {
		reject("", "", gitstore.LayoutFile, chain.LayoutMismatch, "remote uses layout %s, this branch %s: nothing merged", remote.Layout, local.Layout)
		return p, nil
	}
	changes, err := st.Diff(local, remote)
	if err != nil {
		return nil, err
	}
	keyChanges := map[string]gitstore.Change{}
	chains := map[chainKey]bool{}
	cpFiles := map[string]gitstore.Change{}
	repoFileChanged := false
	var snaps snapshotChanges
	var pkgs packageChanges
	for _, c := range changes {
		// Before anything reads it: a path naming .git (any alias) or a
		// component git's fsck refuses is never merged.
		if err := gitname.CheckPath(c.Path); err != nil {
			reject("", "", c.Path, chain.UnsafePath, "%v: not merged", err)
			continue
		}
		if snaps.classify(remote, c, reject) || pkgs.classify(c, reject) {
			continue
		}
		parts := strings.Split(c.Path, "/")
		regular := c.Mode == filemode.Regular
		switch {
		case c.Path == gitstore.LayoutFile && regular && local == nil:
			p.edits[c.Path] = c.Hash
			p.layoutNew = true
		case c.Path == gitstore.RepoFile && regular:
			repoFileChanged = true
		case len(parts) == 2 && parts[0] == "devices" && regular && strings.HasSuffix(parts[1], ".pub"):
			keyChanges[strings.TrimSuffix(parts[1], ".pub")] = c
		case len(parts) == 2 && parts[0] == "devices" && parts[1] == ".gitkeep" && regular:
		case len(parts) >= 4 && parts[0] == "repos" && parts[2] == "chains" && regular:
			dev := parts[3]
			if remote.Layout == gitstore.LayoutGhyllV1 {
				if len(parts) != 4 || !strings.HasSuffix(dev, ".jsonl") {
					reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a chain file of the %s layout", remote.Layout)
					continue
				}
				dev = strings.TrimSuffix(dev, ".jsonl")
			} else if len(parts) != 5 {
				reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a chain segment of the %s layout", remote.Layout)
				continue
			}
			chains[chainKey{parts[1], dev}] = true
		case len(parts) >= 4 && parts[0] == "repos" && parts[2] == "checkpoints" && regular:
			if !c.Old.IsZero() {
				reject(parts[1], "", c.Path, chain.RewritesRecord, "the remote changed a checkpoint file this branch already holds")
				continue
			}
			cpFiles[c.Path] = c
		default:
			what := "not part of the layout"
			switch c.Mode {
			case filemode.Symlink:
				what = "a symbolic link"
			case filemode.Submodule:
				what = "a gitlink (submodule)"
			case filemode.Executable:
				what = "an executable file"
			}
			reject("", "", c.Path, chain.UnexpectedPath, "%s: not merged", what)
		}
	}

	// Device ids: the branch rule (identity.ValidBranchDeviceID), and no id
	// that a case-insensitive file system would confuse with a pinned one or
	// another arriving one (a device pinned here already is exempt).
	pinned := map[string]bool{}
	if local != nil {
		devs, err := local.Devices()
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			pinned[d] = true
		}
	}
	folded := map[string][]string{}
	for d := range pinned {
		folded[identity.DeviceIDFoldKey(d)] = append(folded[identity.DeviceIDFoldKey(d)], d)
	}
	for d := range keyChanges {
		if !pinned[d] {
			folded[identity.DeviceIDFoldKey(d)] = append(folded[identity.DeviceIDFoldKey(d)], d)
		}
	}
	p.badID = func(dev string) error {
		if err := identity.ValidBranchDeviceID(dev); err != nil {
			return err
		}
		if pinned[dev] {
			return nil
		}
		for _, other := range folded[identity.DeviceIDFoldKey(dev)] {
			if other == dev {
				continue
			}
			if pinned[other] {
				return fmt.Errorf("%q differs from the pinned device %q only in letter case or trailing dots", dev, other)
			}
			return fmt.Errorf("%q and %q arrive together and differ only in letter case or trailing dots", dev, other)
		}
		return nil
	}

	// Keys: a pinned key never changes; a new one is pinned if trusted.
	keys := map[string]ed25519.PublicKey{}
	badDevice := map[string]chain.Reason{}
	for dev, c := range keyChanges {
		if err := p.badID(dev); err != nil {
			reject("", dev, c.Path, chain.BadDeviceID, "%v: its key and records are not merged", err)
			badDevice[dev] = chain.BadDeviceID
			continue
		}
		if local != nil {
			if _, _, err := local.DeviceKey(dev); err == nil || !errors.Is(err, gitstore.ErrNotExist) {
				reject("", dev, c.Path, chain.KeyChanged, "the remote replaces the key pinned for %s: its records are not merged", dev)
				badDevice[dev] = chain.KeyChanged
				continue
			}
		}
		pub, _, err := remote.DeviceKey(dev)
		if errors.Is(err, gitstore.ErrTooLarge) {
			reject("", dev, c.Path, chain.TooLarge, "%v", err)
			badDevice[dev] = chain.TooLarge
			continue
		}
		if err != nil {
			reject("", dev, c.Path, chain.BadKey, "%v", err)
			badDevice[dev] = chain.BadKey
			continue
		}
		if ok, why := pol.Allows(dev); !ok {
			reject("", dev, c.Path, chain.Untrusted, "%s", why)
			badDevice[dev] = chain.Untrusted
			continue
		}
		keys[dev] = pub
		p.edits[c.Path] = c.Hash
		p.newKeys = append(p.newKeys, dev)
	}
	sort.Strings(p.newKeys)
	if err := p.findSharedKeys(local, keys); err != nil {
		return nil, err
	}
	// Which repository directories hold this repository's records.
	if pol.repos, err = planRepoFile(st, local, remote, repoFileChanged, keys, pol, p, reject); err != nil {
		return nil, err
	}

	// Chains, verified in parallel, one device at a time each.
	var work []chainKey
	for k := range chains {
		work = append(work, k)
	}
	sort.Slice(work, func(i, j int) bool {
		return work[i].repo < work[j].repo || work[i].repo == work[j].repo && work[i].device < work[j].device
	})
	results := make([]chainOutcome, len(work))
	var wg gosync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, k := range work {
		wg.Add(1)
		go func(i int, k chainKey) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = mergeChain(st, local, remote, k, keys, badDevice, pol, p.badID)
		}(i, k)
	}
	wg.Wait()
	used := map[string]bool{}
	for _, o := range results {
		if o.err != nil {
			return nil, o.err
		}
		for path, h := range o.edits {
			p.edits[path] = h
		}
		for _, path := range o.mentioned {
			used[path] = true
		}
		p.accepted = append(p.accepted, o.accepted...)
		p.devices = append(p.devices, o.result)
		p.rejected = append(p.rejected, o.rejected...)
		p.added += o.result.Added
		if o.result.Fork {
			p.forks++
		}
	}
	if err := planSnapshots(st, local, remote, &snaps, keys, badDevice, pol, p); err != nil {
		return nil, err
	}
	if err := planPackages(remote, &pkgs, published, p); err != nil {
		return nil, err
	}
	for path := range cpFiles {
		if !used[path] {
			reject(strings.Split(path, "/")[1], "", path, chain.OrphanFile, "checkpoint file named by no chain: not merged")
		}
	}
	sort.Slice(p.rejected, func(i, j int) bool {
		a, b := p.rejected[i], p.rejected[j]
		return a.Device < b.Device || a.Device == b.Device && a.Record < b.Record
	})
	return p, nil
}

type chainOutcome struct {
	result    DeviceResult
	edits     map[string]plumbing.Hash
	rejected  []Rejection
	mentioned []string // checkpoint paths the remote chain names beyond the shared prefix
	accepted  []string // hashes of the records verified and taken
	err       error
}

// mergeChain compares one device's chain on both sides. A chain that
// extends ours is verified from our last entry on and taken up to its first
// failure; a chain that diverges from ours is a fork (if the divergent record
// is validly signed) or tampering, and nothing past the shared prefix is
// taken.
func mergeChain(st *gitstore.Store, local, remote *gitstore.View, k chainKey, keys map[string]ed25519.PublicKey,
	badDevice map[string]chain.Reason, pol Policy, badID func(string) error) chainOutcome {
	out := chainOutcome{result: DeviceResult{Repo: k.repo, Device: k.device}, edits: map[string]plumbing.Hash{}}
	reject := func(record string, reason chain.Reason, format string, args ...any) chainOutcome {
		out.result.Rejected, out.result.Reason, out.result.Record = true, string(reason), record
		out.rejected = append(out.rejected, Rejection{Repo: k.repo, Device: k.device, Record: record, Reason: string(reason), Detail: fmt.Sprintf(format, args...)})
		return out
	}
	if err := gitrepo.ValidSegment(k.repo); err != nil {
		return reject("repos/"+k.repo, chain.BadRepoID, "%v", err)
	}
	if err := badID(k.device); err != nil {
		return reject("", chain.BadDeviceID, "%v: none of its records are merged", err)
	}
	rc, rcErr := remote.Chain(k.repo, k.device)
	for _, e := range rc {
		out.mentioned = append(out.mentioned, remote.Layout.CheckpointPath(k.repo, e.Hash))
	}
	if pol.repos != nil && !pol.repos[k.repo] && len(rc) > 0 {
		return reject(rc[0].Hash, chain.WrongRepo, "repos/%s is neither this repository's id nor an adopted one: none of its records are merged", k.repo)
	}
	if why, bad := badDevice[k.device]; bad {
		return reject("", why, "the device's key was not accepted, so none of its records are merged")
	}
	if ok, why := pol.Allows(k.device); !ok {
		return reject("", chain.Untrusted, "%s", why)
	}
	var lc []checkpoint.ChainEntry
	key := keys[k.device]
	if local != nil {
		var err error
		lc, err = local.Chain(k.repo, k.device)
		if err != nil && !errors.Is(err, gitstore.ErrNotExist) {
			out.err = fmt.Errorf("read local chain of %s: %w", k.device, err)
			return out
		}
		if pub, _, err := local.DeviceKey(k.device); err == nil {
			key = pub
		}
	}
	if err := rcErr; err != nil {
		var tl *gitstore.TooLargeError
		if errors.As(err, &tl) {
			return reject(tl.Path, chain.TooLarge, "%v", err)
		}
		if errors.Is(err, gitstore.ErrCorrupt) || errors.Is(err, gitstore.ErrTooLarge) {
			return reject("", chain.MalformedChain, "%v", err)
		}
		out.err = fmt.Errorf("read fetched chain of %s: %w", k.device, err)
		return out
	}
	if key == nil {
		if pub, _, err := remote.DeviceKey(k.device); err == nil && local == nil {
			key = pub
		} else if len(rc) > 0 {
			return reject(rc[0].Hash, chain.UnknownKey, "no public key for %s on either branch", k.device)
		}
	}
	n := 0
	for n < len(lc) && n < len(rc) && lc[n] == rc[n] {
		n++
	}
	if n == len(rc) {
		return out // the remote adds nothing to this chain
	}
	load := func(hash string) ([]byte, error) {
		b, err := remote.CheckpointFile(k.repo, hash)
		if errors.Is(err, gitstore.ErrNotExist) {
			return nil, chain.ErrMissing
		}
		if errors.Is(err, gitstore.ErrTooLarge) {
			return nil, fmt.Errorf("%w: %w", chain.ErrTooLarge, err)
		}
		return b, err
	}
	var trusted *checkpoint.ChainEntry
	if n > 0 {
		trusted = &rc[n-1]
	}
	if n < len(lc) {
		// Divergence: is the remote's record at n validly signed?
		res := chain.Verify(chain.Input{Device: k.device, Repo: k.repo, Key: key, Entries: rc[n : n+1], Trusted: trusted, Load: load})
		if res.Failure == nil {
			out.result.Fork, out.result.Local = true, lc[n].Hash
			return reject(rc[n].Hash, chain.Fork, "fork at entry %d: the remote has %s, this branch %s; nothing past entry %d merged",
				n+1, short(rc[n].Hash), short(lc[n].Hash), n)
		}
		return reject(res.Failure.Hash, res.Failure.Reason, "the remote rewrites this device's history at entry %d: %s", n+1, res.Failure.Detail)
	}
	res := chain.Verify(chain.Input{Device: k.device, Repo: k.repo, Key: key, Entries: rc[n:], Trusted: trusted, Load: load})
	accepted := rc[:n+res.Verified]
	if res.Verified > 0 {
		for _, e := range rc[n : n+res.Verified] {
			path := remote.Layout.CheckpointPath(k.repo, e.Hash)
			h, err := remote.BlobHash(path)
			if err != nil {
				out.err = err
				return out
			}
			out.edits[path] = h
			out.accepted = append(out.accepted, e.Hash)
		}
		if err := chainEdits(st, remote.Layout, k, accepted, n, out.edits); err != nil {
			out.err = err
			return out
		}
		out.result.Added = res.Verified
	}
	if res.Failure != nil {
		return reject(res.Failure.Hash, res.Failure.Reason, "%s (entry %d): this record and the %d after it are not merged",
			res.Failure.Detail, n+res.Failure.Index+1, len(rc)-n-res.Failure.Index-1)
	}
	return out
}

// chainEdits writes the chain files holding accepted (whose first n entries
// the local branch already has) and adds them to edits.
func chainEdits(st *gitstore.Store, layout gitstore.Layout, k chainKey, accepted []checkpoint.ChainEntry, n int, edits map[string]plumbing.Hash) error {
	write := func(path string, entries []checkpoint.ChainEntry) error {
		var buf bytes.Buffer
		for _, e := range entries {
			buf.Write(e.MarshalLine())
		}
		h, err := st.WriteBlob(buf.Bytes())
		if err != nil {
			return err
		}
		edits[path] = h
		return nil
	}
	if layout == gitstore.LayoutGhyllV1 {
		return write(gitstore.ChainPath(k.repo, k.device), accepted)
	}
	for seg := n / gitstore.SegmentLines; seg*gitstore.SegmentLines < len(accepted); seg++ {
		end := min((seg+1)*gitstore.SegmentLines, len(accepted))
		if err := write(gitstore.SegmentPath(k.repo, k.device, seg), accepted[seg*gitstore.SegmentLines:end]); err != nil {
			return err
		}
	}
	return nil
}

// findSharedKeys records each key accepted in this pull that is also
// published under another id: pinned on the local branch, or another key
// accepted in the same pull. Such a device is still merged (its records
// must carry its own id and be signed by the key, so nothing is forged);
// the pull reports it once, and `git ctx devices` shows it for good.
func (p *plan) findSharedKeys(local *gitstore.View, accepted map[string]ed25519.PublicKey) error {
	if len(accepted) == 0 {
		return nil
	}
	holders := map[string][]string{} // fingerprint → ids
	isNew := map[string]bool{}
	for dev, pub := range accepted {
		fp := checkpoint.Fingerprint(pub)
		holders[fp] = append(holders[fp], dev)
		isNew[dev] = true
	}
	if local != nil {
		devs, err := local.Devices()
		if err != nil {
			return err
		}
		for _, d := range devs {
			pub, _, err := local.DeviceKey(d)
			if err != nil || isNew[d] {
				continue
			}
			if fp := checkpoint.Fingerprint(pub); holders[fp] != nil {
				holders[fp] = append(holders[fp], d)
			}
		}
	}
	for fp, ids := range holders {
		if len(ids) < 2 {
			continue
		}
		sort.Strings(ids)
		sk := SharedKey{Fingerprint: fp, Devices: ids}
		for _, d := range ids {
			if isNew[d] {
				sk.New = append(sk.New, d)
			}
		}
		p.sharedKeys = append(p.sharedKeys, sk)
	}
	sort.Slice(p.sharedKeys, func(i, j int) bool { return p.sharedKeys[i].Devices[0] < p.sharedKeys[j].Devices[0] })
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
