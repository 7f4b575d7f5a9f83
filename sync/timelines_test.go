package sync

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/gitstore"
)

// TestPullTimelineLegacyLines: pull takes a device's unsigned legacy
// timeline lines only once a signed line of that device vouches for them
// (its prev chains over them); alone they are rejected
// unsigned_timeline_entry, whether or not the clone has a branch yet.
func TestPullTimelineLegacyLines(t *testing.T) {
	w := newPkgWorld(t)
	priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat("k", 32)))
	const dev = "dev-a"
	var (
		files = map[string][]byte{
			gitstore.LayoutFile:         []byte(string(gitstore.LayoutCtxV1) + "\n"),
			gitstore.DeviceKeyPath(dev): checkpoint.EncodePublicKey(priv.Public().(ed25519.PublicKey)),
		}
		lines []snapshot.TimelineLine
		head  *string
	)
	prev := snapshot.GenesisPrev
	for i := 0; i < 3; i++ {
		sn := snapshot.New("2026-01-01T00:00:0"+string(rune('0'+i))+"Z", "test")
		sn.ParentID = head
		if err := sn.Sign(priv); err != nil {
			t.Fatal(err)
		}
		body, err := sn.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		files[gitstore.SnapshotPath(testRepoID, sn.SnapshotID)] = body
		var l snapshot.TimelineLine
		if i < 2 {
			l, err = snapshot.LegacyTimelineLine(sn.TimelineEntry())
		} else {
			l, err = snapshot.SignTimelineLine(priv, testRepoID, dev, uint64(i), prev, sn.TimelineEntry())
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
		prev = snapshot.NextPrev(prev, l.Bytes())
		id := sn.SnapshotID
		head = &id
	}
	seg := gitstore.TimelineSegmentPath(testRepoID, dev, 0)
	branch := func(parent plumbing.Hash, n int, withFiles bool) *gitstore.View {
		t.Helper()
		fs := map[string][]byte{seg: gitstore.MarshalTimeline(lines[:n])}
		if withFiles {
			for p, d := range files {
				fs[p] = d
			}
		}
		var parents []plumbing.Hash
		if !parent.IsZero() {
			parents = []plumbing.Hash{parent}
		}
		c := w.commit(parents, fs)
		w.setBranch(c)
		v, err := w.st.ViewAt(c)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := branch(plumbing.ZeroHash, 1, true) // the clone holds legacy line 0
	legacyOnly := branch(base.Commit, 2, false)
	vouched := branch(legacyOnly.Commit, 3, false)
	pol := Policy{Mode: TrustTOFU}
	for _, c := range []struct {
		name         string
		local        *gitstore.View
		remote       *gitstore.View
		take         int
		rejectReason chain.Reason
	}{
		{"new legacy line, no signed line", base, legacyOnly, 0, chain.UnsignedTimelineEntry},
		{"legacy line vouched for by a signed line", base, vouched, 2, ""},
		{"first pull: legacy lines alone", nil, legacyOnly, 0, chain.UnsignedTimelineEntry},
		{"first pull: legacy lines vouched for", nil, vouched, 3, ""},
	} {
		p, err := makePlan(w.st, c.local, c.remote, pol, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var reasons []chain.Reason
		for _, r := range p.rejected {
			if r.Device == dev {
				reasons = append(reasons, chain.Reason(r.Reason))
			}
		}
		if p.snapshots != c.take || c.rejectReason == "" && len(reasons) != 0 ||
			c.rejectReason != "" && (len(reasons) != 1 || reasons[0] != c.rejectReason) {
			t.Errorf("%s: took %d entries (want %d), rejections %v (want %q); all: %+v", c.name, p.snapshots, c.take, reasons, c.rejectReason, p.rejected)
		}
	}
}
