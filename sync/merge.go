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
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Rejection is something a fetch brought that was not merged.
type Rejection struct {
	Repo   string
	Device string
	Record string // a checkpoint hash, or a path
	Reason string
	Detail string
}

// DeviceResult is the outcome for one device's chain in one repository.
type DeviceResult struct {
	Repo     string
	Device   string
	Added    int
	Rejected bool
	Fork     bool
	Reason   string
	Record   string
	Local    string // our record at a fork
}

// plan is what a merge of a fetched tip would take.
type plan struct {
	edits     map[string]plumbing.Hash
	accepted  map[string]cache.Preverified // the checkpoints verified and merged, by hash
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
	// carry: how many more parsed records the plan may keep for the cache
	// (maxCarried in all).
	carry atomic.Int64
	// verdicts, when set, is told each chain's outcome as it is decided
	// (a cache built ahead of the merge reads it).
	verdicts *verdicts
}

// maxCarried bounds the parsed records a pull keeps for the cache to index
// without reading, parsing and hashing them again (cache.Preverified.CP):
// past it, the cache reads them again and skips only their signatures, so
// a pull's memory stays bounded however much it brings.
const maxCarried = 16384

// verifiedRecord is one record chain.Continue verified.
type verifiedRecord struct {
	cp   *checkpoint.Checkpoint // nil: not carried (maxCarried)
	rule checkpoint.Rule
}

// SharedKey is one public key published under several device ids.
type SharedKey struct {
	Fingerprint string
	Devices     []string // every id holding the key, sorted
	New         []string // those this pull accepted, sorted
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
//
// The steps, in order: sort the fetched paths by what they are (classify),
// fix the device id rule (deviceIDRule), pin or refuse the new keys
// (planKeys), decide the REPO file and the repository ids records may come
// from (planRepoFile), then merge chains (planChains), timelines
// (planSnapshots) and packages (planPackages) — every record checked by
// package chain — and reject checkpoint files no chain names.
func makePlan(st *gitstore.Store, local, remote *gitstore.View, pol Policy, published publishedFunc) (*plan, error) {
	return makePlanTelling(st, local, remote, pol, published, nil)
}

// makePlanTelling is makePlan telling vs (when set) each chain's outcome
// as soon as it is decided, and closing it when the plan is over.
func makePlanTelling(st *gitstore.Store, local, remote *gitstore.View, pol Policy, published publishedFunc, vs *verdicts) (*plan, error) {
	defer vs.close()
	p := &plan{edits: map[string]plumbing.Hash{}, accepted: map[string]cache.Preverified{}, verdicts: vs}
	p.carry.Store(maxCarried)
	if local != nil && (local.Layout != remote.Layout || local.Fanout != remote.Fanout) {
		p.reject("", "", gitstore.LayoutFile, chain.LayoutMismatch, "remote uses layout %s, this branch %s: nothing merged", remote.LayoutName(), local.LayoutName())
		return p, nil
	}
	changes, err := st.Diff(local, remote)
	if err != nil {
		return nil, err
	}
	f := newFetched()
	for _, c := range changes {
		f.classify(p, local, remote, c)
	}
	if p.badID, err = deviceIDRule(local, f.keys); err != nil {
		return nil, err
	}
	keys, badDevice, err := p.planKeys(local, remote, f.keys, pol)
	if err != nil {
		return nil, err
	}
	// Which repository directories hold this repository's records.
	if pol.repos, err = planRepoFile(st, local, remote, f.repoFile, keys, pol, p, p.reject); err != nil {
		return nil, err
	}
	used, err := p.planChains(st, local, remote, f.chains, keys, badDevice, pol)
	if err != nil {
		return nil, err
	}
	if err := planSnapshots(st, local, remote, &f.snaps, keys, badDevice, pol, p); err != nil {
		return nil, err
	}
	if err := planPackages(remote, &f.pkgs, published, p); err != nil {
		return nil, err
	}
	for path := range f.checkpoints {
		if !used[path] {
			p.reject(strings.Split(path, "/")[1], "", path, chain.OrphanFile, "checkpoint file named by no chain: not merged")
		}
	}
	sort.Slice(p.rejected, func(i, j int) bool {
		a, b := p.rejected[i], p.rejected[j]
		return a.Device < b.Device || a.Device == b.Device && a.Record < b.Record
	})
	return p, nil
}

// fetched sorts the paths a fetch changed by what they are.
type fetched struct {
	keys        map[string]gitstore.Change // device id → its key file
	chains      map[chainKey]bool          // chains with a changed file
	checkpoints map[string]gitstore.Change // new checkpoint files by path
	repoFile    bool                       // REPO changed
	snaps       snapshotChanges
	pkgs        packageChanges
}

func newFetched() *fetched {
	return &fetched{keys: map[string]gitstore.Change{}, chains: map[chainKey]bool{}, checkpoints: map[string]gitstore.Change{}}
}

// classify files one changed path, rejecting what is outside the layout.
func (f *fetched) classify(p *plan, local, remote *gitstore.View, c gitstore.Change) {
	// Before anything reads it: a path naming .git (any alias) or a
	// component git's fsck refuses is never merged.
	if err := gitname.CheckPath(c.Path); err != nil {
		p.reject("", "", c.Path, chain.UnsafePath, "%v: not merged", err)
		return
	}
	if f.snaps.classify(remote, c, p.reject) || f.pkgs.classify(c, p.reject) {
		return
	}
	parts := strings.Split(c.Path, "/")
	regular := c.Mode == filemode.Regular
	switch {
	case c.Path == gitstore.LayoutFile && regular && local == nil:
		p.edits[c.Path] = c.Hash
		p.layoutNew = true
	case c.Path == gitstore.RepoFile && regular:
		f.repoFile = true
	case regular && isDeviceFile(parts, ".pub"):
		f.keys[strings.TrimSuffix(parts[1], ".pub")] = c
	case regular && isDeviceFile(parts, "") && parts[1] == ".gitkeep":
	case regular && isRepoPath(parts, "chains"):
		f.classifyChain(p, remote.Layout, c, parts)
	case regular && isRepoPath(parts, "checkpoints"):
		if !c.Old.IsZero() {
			p.reject(parts[1], "", c.Path, chain.RewritesRecord, "the remote changed a checkpoint file this branch already holds")
			return
		}
		f.checkpoints[c.Path] = c
	default:
		p.reject("", "", c.Path, chain.UnexpectedPath, "%s: not merged", unexpectedWhat(c.Mode))
	}
}

// isDeviceFile: parts is devices/<name> with name ending in suffix.
func isDeviceFile(parts []string, suffix string) bool {
	return len(parts) == 2 && parts[0] == "devices" && strings.HasSuffix(parts[1], suffix)
}

// isRepoPath: parts lies under repos/<id>/<dir>/.
func isRepoPath(parts []string, dir string) bool {
	return len(parts) >= 4 && parts[0] == "repos" && parts[2] == dir
}

// unexpectedWhat names what a path outside the layout is.
func unexpectedWhat(mode filemode.FileMode) string {
	switch mode {
	case filemode.Symlink:
		return "a symbolic link"
	case filemode.Submodule:
		return "a gitlink (submodule)"
	case filemode.Executable:
		return "an executable file"
	}
	return "not part of the layout"
}

// classifyChain files a changed chain file (a ghyll-v1 chain file or a
// ctx-v1 segment) under its chain.
func (f *fetched) classifyChain(p *plan, layout gitstore.Layout, c gitstore.Change, parts []string) {
	dev := parts[3]
	if layout == gitstore.LayoutGhyllV1 {
		if len(parts) != 4 || !strings.HasSuffix(dev, ".jsonl") {
			p.reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a chain file of the %s layout", layout)
			return
		}
		dev = strings.TrimSuffix(dev, ".jsonl")
	} else if len(parts) != 5 {
		p.reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a chain segment of the %s layout", layout)
		return
	}
	f.chains[chainKey{parts[1], dev}] = true
}

// deviceIDRule returns the pull's device id rule: the branch rule
// (identity.ValidBranchDeviceID), and no id that a case-insensitive file
// system would confuse with a pinned one or another arriving one (a device
// pinned here already is exempt). It returns why dev is refused, or nil.
func deviceIDRule(local *gitstore.View, arriving map[string]gitstore.Change) (func(dev string) error, error) {
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
	for d := range arriving {
		if !pinned[d] {
			folded[identity.DeviceIDFoldKey(d)] = append(folded[identity.DeviceIDFoldKey(d)], d)
		}
	}
	return func(dev string) error {
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
	}, nil
}

// planKeys decides each fetched key: a pinned key never changes; a new one
// is pinned if its id passes the rule, it parses and trust allows the
// device. It returns the keys taken and, for each refused device, the
// reason (none of its records are merged).
func (p *plan) planKeys(local, remote *gitstore.View, changes map[string]gitstore.Change, pol Policy) (map[string]ed25519.PublicKey, map[string]chain.Reason, error) {
	keys := map[string]ed25519.PublicKey{}
	badDevice := map[string]chain.Reason{}
	for dev, c := range changes {
		pub, reason, detail := p.checkKey(local, remote, dev, pol)
		if reason != "" {
			p.reject("", dev, c.Path, reason, "%s", detail)
			badDevice[dev] = reason
			continue
		}
		keys[dev] = pub
		p.edits[c.Path] = c.Hash
		p.newKeys = append(p.newKeys, dev)
	}
	sort.Strings(p.newKeys)
	if err := p.findSharedKeys(local, keys); err != nil {
		return nil, nil, err
	}
	return keys, badDevice, nil
}

// checkKey returns dev's fetched key, or why it is refused.
func (p *plan) checkKey(local, remote *gitstore.View, dev string, pol Policy) (ed25519.PublicKey, chain.Reason, string) {
	if err := p.badID(dev); err != nil {
		return nil, chain.BadDeviceID, fmt.Sprintf("%v: its key and records are not merged", err)
	}
	if local != nil {
		if _, _, err := local.DeviceKey(dev); err == nil || !errors.Is(err, gitstore.ErrNotExist) {
			return nil, chain.KeyChanged, fmt.Sprintf("the remote replaces the key pinned for %s: its records are not merged", dev)
		}
	}
	pub, _, err := remote.DeviceKey(dev)
	if errors.Is(err, gitstore.ErrTooLarge) {
		return nil, chain.TooLarge, err.Error()
	}
	if err != nil {
		return nil, chain.BadKey, err.Error()
	}
	if ok, why := pol.Allows(dev); !ok {
		return nil, chain.Untrusted, why
	}
	return pub, "", ""
}

// planChains merges the fetched chains (mergeChain), verified in parallel
// (GOMAXPROCS chains at a time, each chain's records on GOMAXPROCS
// look-ahead workers: a pull of one long chain uses every core), and returns the checkpoint paths they name.
func (p *plan) planChains(st *gitstore.Store, local, remote *gitstore.View, chains map[chainKey]bool, keys map[string]ed25519.PublicKey,
	badDevice map[string]chain.Reason, pol Policy) (map[string]bool, error) {
	work := sortedKeys(chains)
	results := make([]chainOutcome, len(work))
	var wg gosync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, k := range work {
		wg.Add(1)
		go func(i int, k chainKey) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = mergeChain(st, local, remote, k, keys, badDevice, pol, p.badID, &p.carry)
			p.verdicts.settle(k, &results[i])
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
		for h, r := range o.accepted {
			p.accepted[h] = r
		}
		p.devices = append(p.devices, o.result)
		p.rejected = append(p.rejected, o.rejected...)
		p.added += o.result.Added
		if o.result.Fork {
			p.forks++
		}
	}
	return used, nil
}

// sortedKeys returns the keys of m by repository, then device.
func sortedKeys(m map[chainKey]bool) []chainKey {
	work := make([]chainKey, 0, len(m))
	for k := range m {
		work = append(work, k)
	}
	sort.Slice(work, func(i, j int) bool {
		return work[i].repo < work[j].repo || work[i].repo == work[j].repo && work[i].device < work[j].device
	})
	return work
}

type chainOutcome struct {
	result    DeviceResult
	edits     map[string]plumbing.Hash
	rejected  []Rejection
	mentioned []string                     // checkpoint paths the remote chain names beyond the shared prefix
	accepted  map[string]cache.Preverified // the records verified and taken, by hash
	// verified: what chain.Continue verified past the shared prefix, in
	// chain order (records not carried for the cache: nil).
	verified []verifiedRecord
	err      error
}

// reject marks the device's chain rejected at record.
func (o *chainOutcome) reject(record string, reason chain.Reason, format string, args ...any) chainOutcome {
	o.result.Rejected, o.result.Reason, o.result.Record = true, string(reason), record
	o.rejected = append(o.rejected, Rejection{Repo: o.result.Repo, Device: o.result.Device, Record: record, Reason: string(reason), Detail: fmt.Sprintf(format, args...)})
	return *o
}

// mergeChain merges one device's chain: the checks that refuse the whole
// chain (its repository and device ids, its directory, its key, the trust
// policy), then chain.Continue decides, through the remote's chain.Tree,
// what of the fetched chain may join the local one: a chain that extends
// ours is verified from our last entry on and taken up to its first
// failure; a chain that diverges from ours is a fork (if the divergent
// record is validly signed) or tampering, and nothing past the shared
// prefix is taken.
func mergeChain(st *gitstore.Store, local, remote *gitstore.View, k chainKey, keys map[string]ed25519.PublicKey,
	badDevice map[string]chain.Reason, pol Policy, badID func(string) error, carry *atomic.Int64) chainOutcome {
	out := chainOutcome{result: DeviceResult{Repo: k.repo, Device: k.device}, edits: map[string]plumbing.Hash{}, accepted: map[string]cache.Preverified{}}
	if err := gitrepo.ValidSegment(k.repo); err != nil {
		return out.reject("repos/"+k.repo, chain.BadRepoID, "%v", err)
	}
	if err := badID(k.device); err != nil {
		return out.reject("", chain.BadDeviceID, "%v: none of its records are merged", err)
	}
	rt := remote.ChainTree()
	rc, rcErr := rt.ChainFrom(k.repo, k.device, 0)
	for _, e := range rc {
		out.mentioned = append(out.mentioned, remote.CheckpointPath(k.repo, e.Hash))
	}
	if pol.repos != nil && !pol.repos[k.repo] && len(rc) > 0 {
		return out.reject(rc[0].Hash, chain.WrongRepo, "repos/%s is neither this repository's id nor an adopted one: none of its records are merged", k.repo)
	}
	if why, bad := badDevice[k.device]; bad {
		return out.reject("", why, "the device's key was not accepted, so none of its records are merged")
	}
	if ok, why := pol.Allows(k.device); !ok {
		return out.reject("", chain.Untrusted, "%s", why)
	}
	lc, key, err := localChain(local, k, keys[k.device])
	if err != nil {
		out.err = err
		return out
	}
	if rcErr != nil {
		return out.fetchedChainError(k, rcErr)
	}
	if key == nil {
		if pub, _, err := remote.DeviceKey(k.device); err == nil && local == nil {
			key = pub
		} else if len(rc) > 0 {
			return out.reject(rc[0].Hash, chain.UnknownKey, "no public key for %s on either branch", k.device)
		}
	}
	cmp := chain.Compare{Device: k.device, Repo: k.repo, Key: key, Local: lc, Remote: rc, Load: chain.Records(rt, k.repo),
		SessionRoots: remote.Layout.SessionRoots(), Workers: runtime.GOMAXPROCS(0),
		Verified: func(_ int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error {
			if carry.Add(-1) < 0 {
				cp = nil
			}
			out.verified = append(out.verified, verifiedRecord{cp: cp, rule: rule})
			return nil
		}}
	if local != nil {
		cmp.LocalLoad = chain.Records(local.ChainTree(), k.repo)
	}
	cont := chain.Continue(cmp)
	return out.take(st, remote, k, key, lc, rc, cont)
}

// localChain reads device's local chain and the key its records must be
// signed with: the one pinned here, else the one this pull accepted.
func localChain(local *gitstore.View, k chainKey, accepted ed25519.PublicKey) ([]checkpoint.ChainEntry, ed25519.PublicKey, error) {
	if local == nil {
		return nil, accepted, nil
	}
	lc, err := local.Chain(k.repo, k.device)
	if err != nil && !errors.Is(err, gitstore.ErrNotExist) {
		return nil, nil, fmt.Errorf("read local chain of %s: %w", k.device, err)
	}
	if pub, _, err := local.DeviceKey(k.device); err == nil {
		return lc, pub, nil
	}
	return lc, accepted, nil
}

// fetchedChainError rejects a fetched chain that cannot be read: too_large
// (the path of the segment at fault), malformed_chain; any other error
// stops the pull.
func (o *chainOutcome) fetchedChainError(k chainKey, err error) chainOutcome {
	var tl *gitstore.TooLargeError
	if errors.As(err, &tl) {
		return o.reject(tl.Path, chain.TooLarge, "%v", err)
	}
	if errors.Is(err, gitstore.ErrCorrupt) || errors.Is(err, gitstore.ErrTooLarge) {
		return o.reject("", chain.MalformedChain, "%v", err)
	}
	o.err = fmt.Errorf("read fetched chain of %s: %w", k.device, err)
	return *o
}

// take turns chain.Continue's verdict into edits and rejections.
func (o *chainOutcome) take(st *gitstore.Store, remote *gitstore.View, k chainKey, key ed25519.PublicKey, lc, rc []checkpoint.ChainEntry, cont chain.Continuation) chainOutcome {
	n, res := cont.Shared, cont.Result
	switch {
	case n == len(rc):
		return *o // the remote adds nothing to this chain
	case cont.Fork:
		o.result.Fork, o.result.Local = true, cont.Local
		return o.reject(rc[n].Hash, chain.Fork, "fork at entry %d: the remote has %s, this branch %s; nothing past entry %d merged",
			n+1, short(rc[n].Hash), short(cont.Local), n)
	case n < len(lc):
		return o.reject(res.Failure.Hash, res.Failure.Reason, "the remote rewrites this device's history at entry %d: %s", n+1, res.Failure.Detail)
	}
	if res.Verified > 0 {
		if err := o.takeVerified(st, remote, k, key, rc[:n+res.Verified], n); err != nil {
			o.err = err
			return *o
		}
	}
	if res.Failure != nil {
		return o.reject(res.Failure.Hash, res.Failure.Reason, "%s (entry %d): this record and the %d after it are not merged",
			res.Failure.Detail, n+res.Failure.Index+1, len(rc)-n-res.Failure.Index-1)
	}
	return *o
}

// takeVerified adds the checkpoint files of accepted[n:] and the chain
// files holding accepted to the edits, and keeps what the cache needs to
// index them without verifying them again (o.accepted: verified under key,
// on the blob taken).
func (o *chainOutcome) takeVerified(st *gitstore.Store, remote *gitstore.View, k chainKey, key ed25519.PublicKey, accepted []checkpoint.ChainEntry, n int) error {
	if len(o.verified) != len(accepted)-n {
		return fmt.Errorf("chain of %s: %d records verified, %d taken", k.device, len(o.verified), len(accepted)-n)
	}
	for i, e := range accepted[n:] {
		path := remote.CheckpointPath(k.repo, e.Hash)
		h, err := remote.BlobHash(path)
		if err != nil {
			return err
		}
		o.edits[path] = h
		pre := cache.Preverified{Key: key, Blob: h}
		if v := o.verified[i]; v.cp != nil && v.cp.Hash == e.Hash {
			pre.CP, pre.Rule = v.cp, v.rule
		}
		o.accepted[e.Hash] = pre
	}
	if err := chainEdits(st, remote.Layout, k, accepted, n, o.edits); err != nil {
		return err
	}
	o.result.Added = len(accepted) - n
	return nil
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
