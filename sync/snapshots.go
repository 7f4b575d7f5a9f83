package sync

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// snapshotChanges collects the fetched paths of the snapshot part of the
// ctx-v1 layout: timeline segments and snapshot files.
type snapshotChanges struct {
	timelines map[chainKey]bool
	files     map[string]gitstore.Change
}

// classifySnapshotPath takes c when it is a timeline segment or a snapshot
// file of a ctx-v1 remote; it reports whether it did (rejecting malformed
// paths itself).
func (sc *snapshotChanges) classify(remote *gitstore.View, c gitstore.Change, reject rejectFunc) bool {
	parts := strings.Split(c.Path, "/")
	if remote.Layout != gitstore.LayoutCtxV1 || len(parts) < 4 || parts[0] != "repos" || c.Mode != filemode.Regular {
		return false
	}
	switch parts[2] {
	case gitstore.TimelinesDirName:
		if len(parts) != 5 {
			reject(parts[1], "", c.Path, chain.UnexpectedPath, "not a timeline segment of the %s layout", remote.Layout)
			return true
		}
		if sc.timelines == nil {
			sc.timelines = map[chainKey]bool{}
		}
		sc.timelines[chainKey{parts[1], parts[3]}] = true
	case gitstore.SnapshotsDirName:
		if !c.Old.IsZero() {
			reject(parts[1], "", c.Path, chain.RewritesRecord, "the remote changed a snapshot file this branch already holds")
			return true
		}
		if sc.files == nil {
			sc.files = map[string]gitstore.Change{}
		}
		sc.files[c.Path] = c
	default:
		return false
	}
	return true
}

// planSnapshots merges the fetched timelines like chains (mergeTimeline:
// chain.ContinueTimeline decides): a timeline that extends ours (its first
// lines byte-identical to ours) is verified entry by entry from our last
// one and taken up to its first failure; one that diverges is a fork and
// nothing past the shared prefix is taken. Each new line must be vouched
// for by the timeline's device (its line signature, or a later one whose
// prev covers it: chain.CheckTimelineLines), so no other device's line,
// moved line or unsigned line is taken. Each new entry must also name a
// snapshot file (fetched or already here) whose id verifies, which is
// signed by the device's pinned key (or, for an imported snapshot, another
// device's key on the branch) and whose fields match the entry. Snapshot
// files no fetched timeline names are rejected as orphans.
func planSnapshots(st *gitstore.Store, local, remote *gitstore.View, sc *snapshotChanges, newKeys map[string]ed25519.PublicKey,
	badDevice map[string]chain.Reason, pol Policy, p *plan) error {
	if len(sc.timelines) == 0 && len(sc.files) == 0 {
		return nil
	}
	keys, err := signerKeys(local, remote, newKeys, badDevice)
	if err != nil {
		return err
	}
	mentioned := map[string]bool{}
	for _, k := range sortedKeys(sc.timelines) {
		tm := timelineMerge{st: st, local: local, remote: remote, k: k, keys: keys, p: p}
		if err := tm.run(badDevice, pol, mentioned); err != nil {
			return err
		}
	}
	for path := range sc.files {
		if !mentioned[path] {
			p.reject(strings.Split(path, "/")[1], "", path, chain.OrphanFile, "snapshot file named by no timeline: not merged")
		}
	}
	return nil
}

// signerKeys returns every key a snapshot's signer may hold: pinned here
// (or, on a first pull, published on the remote by a device not refused),
// or accepted in this pull.
func signerKeys(local, remote *gitstore.View, newKeys map[string]ed25519.PublicKey, badDevice map[string]chain.Reason) (map[string]ed25519.PublicKey, error) {
	keys := map[string]ed25519.PublicKey{}
	from := local
	if local == nil {
		from = remote
	}
	devs, err := from.Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if _, bad := badDevice[d]; bad && local == nil {
			continue
		}
		if pub, _, err := from.DeviceKey(d); err == nil {
			keys[d] = pub
		}
	}
	for d, k := range newKeys {
		keys[d] = k
	}
	return keys, nil
}

// timelineMerge merges one device's fetched timeline.
type timelineMerge struct {
	st            *gitstore.Store
	local, remote *gitstore.View
	k             chainKey
	keys          map[string]ed25519.PublicKey
	p             *plan
	// fetched: the blob of each snapshot file read from the remote (not
	// already here), by id.
	fetched map[string]plumbing.Hash
}

func (tm *timelineMerge) reject(record string, reason chain.Reason, format string, args ...any) {
	tm.p.reject(tm.k.repo, tm.k.device, record, reason, format, args...)
}

// run applies the checks that refuse the whole timeline (its repository
// and device ids, the device's key, the trust policy, a timeline that
// cannot be read), then chain.ContinueTimeline's verdict.
func (tm *timelineMerge) run(badDevice map[string]chain.Reason, pol Policy, mentioned map[string]bool) error {
	k := tm.k
	if err := gitrepo.ValidSegment(k.repo); err != nil {
		tm.reject("repos/"+k.repo, chain.BadRepoID, "%v", err)
		return nil
	}
	if err := tm.p.badID(k.device); err != nil {
		tm.reject("", chain.BadDeviceID, "%v: none of its snapshots are merged", err)
		return nil
	}
	rl, rtErr := tm.remote.ChainTree().TimelineLines(k.repo, k.device)
	for _, l := range rl {
		mentioned[gitstore.SnapshotPath(k.repo, l.Entry.SnapshotID)] = true
	}
	if why, bad := badDevice[k.device]; bad {
		tm.reject("", why, "the device's key was not accepted, so none of its snapshots are merged")
		return nil
	}
	if ok, why := pol.Allows(k.device); !ok {
		tm.reject("", chain.Untrusted, "%s", why)
		return nil
	}
	if rtErr != nil {
		return tm.fetchedTimelineError(rtErr)
	}
	var ll []snapshot.TimelineLine
	if tm.local != nil {
		var err error
		if ll, err = tm.local.TimelineLines(k.repo, k.device); err != nil {
			return fmt.Errorf("read local timeline of %s: %w", k.device, err)
		}
	}
	tm.fetched = map[string]plumbing.Hash{}
	cont, err := chain.ContinueTimeline(chain.TimelineCompare{Repo: k.repo, Device: k.device, Key: tm.keys[k.device],
		Signer: chain.KeySigner(tm.keys), Local: ll, Remote: rl, Snapshot: tm.snapshot})
	if err != nil {
		return err
	}
	return tm.take(ll, rl, cont)
}

// fetchedTimelineError rejects a fetched timeline that cannot be read:
// too_large (the path of the segment at fault), malformed_chain; any
// other error stops the pull.
func (tm *timelineMerge) fetchedTimelineError(err error) error {
	var tl *gitstore.TooLargeError
	if errors.As(err, &tl) {
		tm.reject(tl.Path, chain.TooLarge, "%v", err)
		return nil
	}
	if errors.Is(err, gitstore.ErrCorrupt) || errors.Is(err, gitstore.ErrTooLarge) {
		tm.reject("", chain.MalformedChain, "%v", err)
		return nil
	}
	return fmt.Errorf("read fetched timeline of %s: %w", tm.k.device, err)
}

// snapshot returns the file id names as it will be on the merged branch:
// this branch's, else the fetched one (recorded in fetched); nil when
// neither has it, empty when the fetched one is unusable.
func (tm *timelineMerge) snapshot(id string) ([]byte, error) {
	if tm.local != nil {
		if b, err := tm.local.SnapshotFile(tm.k.repo, id); err == nil {
			return b, nil
		} else if !errors.Is(err, gitstore.ErrNotExist) {
			return nil, err
		}
	}
	h, err := tm.remote.BlobHash(gitstore.SnapshotPath(tm.k.repo, id))
	if errors.Is(err, gitstore.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, gitstore.ErrCorrupt) {
		// Not a regular file (a symlink, gitlink or directory): that path
		// is rejected as unexpected on its own, and this entry as
		// malformed; the rest of the pull goes on.
		return []byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	tm.fetched[id] = h
	b, err := tm.remote.ReadBlob(h, snapshot.MaxFileSize)
	if errors.Is(err, gitstore.ErrTooLarge) {
		return []byte{}, nil
	}
	return b, err
}

// take turns chain.ContinueTimeline's verdict into edits and rejections:
// the snapshot files fetched for the accepted entries and the timeline
// segments holding them.
func (tm *timelineMerge) take(ll, rl []snapshot.TimelineLine, cont chain.TimelineContinuation) error {
	n, k := cont.Shared, tm.k
	if cont.Fork {
		tm.reject(rl[n].Entry.SnapshotID, chain.Fork, "the remote's timeline diverges from this branch's at entry %d (%s here, %s there); nothing past entry %d merged",
			n+1, short(ll[n].Entry.SnapshotID), short(rl[n].Entry.SnapshotID), n)
		return nil
	}
	if f := cont.Failure; f != nil {
		if tm.keys[k.device] == nil {
			tm.reject(f.Snapshot, f.Reason, "%s", f.Detail)
		} else {
			tm.reject(f.Snapshot, f.Reason, "%s (timeline entry %d): this snapshot and the %d after it are not merged", f.Detail, f.Index+1, len(rl)-f.Index-1)
		}
	}
	if cont.Accepted == n {
		return nil
	}
	for _, l := range rl[n:cont.Accepted] {
		if h, ok := tm.fetched[l.Entry.SnapshotID]; ok {
			tm.p.edits[gitstore.SnapshotPath(k.repo, l.Entry.SnapshotID)] = h
		}
	}
	for seg := n / gitstore.SegmentLines; seg*gitstore.SegmentLines < cont.Accepted; seg++ {
		end := min((seg+1)*gitstore.SegmentLines, cont.Accepted)
		h, err := tm.st.WriteBlob(gitstore.MarshalTimeline(rl[seg*gitstore.SegmentLines : end]))
		if err != nil {
			return err
		}
		tm.p.edits[gitstore.TimelineSegmentPath(k.repo, k.device, seg)] = h
	}
	tm.p.snapshots += cont.Accepted - n
	return nil
}
