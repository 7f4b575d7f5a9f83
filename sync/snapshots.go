package sync

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sort"
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

// planSnapshots merges the fetched timelines like chains: a timeline that
// extends ours (its first lines byte-identical to ours) is verified entry by
// entry from our last one and taken up to its first failure; one that
// diverges is a fork and nothing past the shared prefix is taken. Each new
// line must be vouched for by the timeline's device (its line signature, or
// a later one whose prev covers it: gitstore.CheckTimelineLines), so no
// other device's line, moved line or unsigned line is taken. Each new entry
// must also name a snapshot file (fetched or
// already here) whose id verifies, which is signed by the device's pinned
// key (or, for an imported snapshot, another device's key on the branch) and
// whose fields match the entry. Snapshot files no fetched timeline names are
// rejected as orphans.
func planSnapshots(st *gitstore.Store, local, remote *gitstore.View, sc *snapshotChanges, newKeys map[string]ed25519.PublicKey,
	badDevice map[string]chain.Reason, pol Policy, p *plan) error {
	if len(sc.timelines) == 0 && len(sc.files) == 0 {
		return nil
	}
	reject := p.reject
	// Every key a signer may hold: pinned here, or accepted in this pull.
	keys := map[string]ed25519.PublicKey{}
	if local != nil {
		devs, err := local.Devices()
		if err != nil {
			return err
		}
		for _, d := range devs {
			if pub, _, err := local.DeviceKey(d); err == nil {
				keys[d] = pub
			}
		}
	} else {
		devs, err := remote.Devices()
		if err != nil {
			return err
		}
		for _, d := range devs {
			if _, bad := badDevice[d]; bad {
				continue
			}
			if pub, _, err := remote.DeviceKey(d); err == nil {
				keys[d] = pub
			}
		}
	}
	for d, k := range newKeys {
		keys[d] = k
	}
	signer := chain.KeySigner(keys)
	work := make([]chainKey, 0, len(sc.timelines))
	for k := range sc.timelines {
		work = append(work, k)
	}
	sort.Slice(work, func(i, j int) bool {
		return work[i].repo < work[j].repo || work[i].repo == work[j].repo && work[i].device < work[j].device
	})
	mentioned := map[string]bool{}
	for _, k := range work {
		if err := gitrepo.ValidSegment(k.repo); err != nil {
			reject(k.repo, k.device, "repos/"+k.repo, chain.BadRepoID, "%v", err)
			continue
		}
		if err := p.badID(k.device); err != nil {
			reject(k.repo, k.device, "", chain.BadDeviceID, "%v: none of its snapshots are merged", err)
			continue
		}
		rl, rtErr := remote.TimelineLines(k.repo, k.device)
		rt := gitstore.TimelineEntries(rl)
		for _, e := range rt {
			mentioned[gitstore.SnapshotPath(k.repo, e.SnapshotID)] = true
		}
		if why, bad := badDevice[k.device]; bad {
			reject(k.repo, k.device, "", why, "the device's key was not accepted, so none of its snapshots are merged")
			continue
		}
		if ok, why := pol.Allows(k.device); !ok {
			reject(k.repo, k.device, "", chain.Untrusted, "%s", why)
			continue
		}
		if rtErr != nil {
			var tl *gitstore.TooLargeError
			if errors.As(rtErr, &tl) {
				reject(k.repo, k.device, tl.Path, chain.TooLarge, "%v", rtErr)
				continue
			}
			if errors.Is(rtErr, gitstore.ErrCorrupt) || errors.Is(rtErr, gitstore.ErrTooLarge) {
				reject(k.repo, k.device, "", chain.MalformedChain, "%v", rtErr)
				continue
			}
			return fmt.Errorf("read fetched timeline of %s: %w", k.device, rtErr)
		}
		var ll []snapshot.TimelineLine
		if local != nil {
			var err error
			if ll, err = local.TimelineLines(k.repo, k.device); err != nil {
				return fmt.Errorf("read local timeline of %s: %w", k.device, err)
			}
		}
		lt := gitstore.TimelineEntries(ll)
		n := 0
		for n < len(ll) && n < len(rl) && bytes.Equal(ll[n].Bytes(), rl[n].Bytes()) {
			n++
		}
		if n == len(rt) {
			continue
		}
		if n < len(lt) {
			reject(k.repo, k.device, rt[n].SnapshotID, chain.Fork, "the remote's timeline diverges from this branch's at entry %d (%s here, %s there); nothing past entry %d merged",
				n+1, short(lt[n].SnapshotID), short(rt[n].SnapshotID), n)
			continue
		}
		// The file an entry names, as it will be on the merged branch.
		load := func(id string) ([]byte, plumbing.Hash, bool, error) {
			if local != nil {
				if b, err := local.SnapshotFile(k.repo, id); err == nil {
					return b, plumbing.ZeroHash, false, nil
				} else if !errors.Is(err, gitstore.ErrNotExist) {
					return nil, plumbing.ZeroHash, false, err
				}
			}
			h, err := remote.BlobHash(gitstore.SnapshotPath(k.repo, id))
			if errors.Is(err, gitstore.ErrNotExist) {
				return nil, plumbing.ZeroHash, false, nil
			}
			if errors.Is(err, gitstore.ErrCorrupt) {
				// Not a regular file (a symlink, gitlink or directory):
				// that path is rejected as unexpected on its own, and this
				// entry as malformed; the rest of the pull goes on.
				return []byte{}, plumbing.ZeroHash, false, nil
			}
			if err != nil {
				return nil, plumbing.ZeroHash, false, err
			}
			b, err := remote.ReadBlob(h, snapshot.MaxFileSize)
			if errors.Is(err, gitstore.ErrTooLarge) {
				return []byte{}, h, true, nil
			}
			return b, h, true, err
		}
		key := keys[k.device]
		// A new line is taken only when the device vouches for it: it is
		// signed by the device for its position, or lies before such a
		// line (whose prev chains over it). Legacy unsigned lines no signed
		// line covers are never taken.
		auth := chain.CheckTimelineLines(k.repo, k.device, rl, key)
		accepted := n
		fileEdits := map[string]plumbing.Hash{}
		for i := n; i < len(rt); i++ {
			e := rt[i]
			raw, h, fetched, err := load(e.SnapshotID)
			if err != nil {
				return err
			}
			if key == nil {
				reject(k.repo, k.device, e.SnapshotID, chain.UnknownKey, "no public key for %s on either branch", k.device)
				break
			}
			if i >= auth.Attested {
				reason, detail := auth.Reason, auth.Detail
				if i < auth.Good || reason == "" {
					reason, detail = chain.UnsignedTimelineEntry, fmt.Sprintf("no line signed by %s vouches for this entry", k.device)
				}
				reject(k.repo, k.device, e.SnapshotID, reason, "%s (timeline entry %d): this snapshot and the %d after it are not merged", detail, i+1, len(rt)-i-1)
				break
			}
			if reason, detail := chain.CheckTimelineEntry(e, raw, k.device, key, signer); reason != "" {
				reject(k.repo, k.device, e.SnapshotID, reason, "%s (timeline entry %d): this snapshot and the %d after it are not merged", detail, i+1, len(rt)-i-1)
				break
			}
			if fetched {
				fileEdits[gitstore.SnapshotPath(k.repo, e.SnapshotID)] = h
			}
			accepted = i + 1
		}
		if accepted == n {
			continue
		}
		for path, h := range fileEdits {
			p.edits[path] = h
		}
		for seg := n / gitstore.SegmentLines; seg*gitstore.SegmentLines < accepted; seg++ {
			end := min((seg+1)*gitstore.SegmentLines, accepted)
			h, err := st.WriteBlob(gitstore.MarshalTimeline(rl[seg*gitstore.SegmentLines : end]))
			if err != nil {
				return err
			}
			p.edits[gitstore.TimelineSegmentPath(k.repo, k.device, seg)] = h
		}
		p.snapshots += accepted - n
	}
	for path := range sc.files {
		if !mentioned[path] {
			reject(strings.Split(path, "/")[1], "", path, chain.OrphanFile, "snapshot file named by no timeline: not merged")
		}
	}
	return nil
}
