package chain

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sort"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/snapshot"
)

// LineAuth is the verdict of CheckTimelineLines on one timeline.
type LineAuth struct {
	// Attested: lines [0, Attested) are vouched for by the owner: each is
	// signed, or lies before a signed line, whose prev chains over it.
	Attested int
	// Good: lines [0, Good) pass the line checks; [Attested, Good) are
	// legacy lines no signed line covers (only when the timeline holds no
	// signed line at all). Line Good, when Good < len(lines), fails with
	// Reason and Detail.
	Good   int
	Reason Reason
	Detail string
}

// CheckTimelineLines checks the line signatures of device's timeline in
// repoID under the device's published key (nil when it has none): every
// signed line verifies, its seq is its 0-based position and its prev is the
// chained hash of the lines before it (snapshot.NextPrev from GenesisPrev).
// Unsigned (legacy) lines are accepted only before a signed line, which then
// covers them, or in a timeline with no signed line at all; an unsigned line
// after the last signed one is UnsignedTimelineEntry. It does not look at the
// snapshot files (CheckTimelineEntry does).
func CheckTimelineLines(repoID, device string, lines []snapshot.TimelineLine, key ed25519.PublicKey) LineAuth {
	a := LineAuth{Good: len(lines)}
	prev := snapshot.GenesisPrev
	for i, l := range lines {
		if l.LineSigned() {
			fail := func(reason Reason, format string, args ...any) LineAuth {
				a.Good, a.Reason, a.Detail = i, reason, fmt.Sprintf(format, args...)
				return a
			}
			if key == nil {
				return fail(UnknownKey, "no public key for %s on the branch to check its timeline lines", device)
			}
			if !l.VerifyLine(key, repoID, device) {
				return fail(BadTimelineSignature, "the line is not signed by %s's key for this position of its timeline", device)
			}
			if l.Seq != uint64(i) || l.Prev != prev {
				return fail(MisplacedTimelineEntry, "%s signed this line for position %d after other lines; here it is line %d", device, l.Seq+1, i+1)
			}
			a.Attested = i + 1
		}
		prev = snapshot.NextPrev(prev, l.Bytes())
	}
	if a.Attested > 0 && a.Attested < len(lines) {
		a.Good, a.Reason = a.Attested, UnsignedTimelineEntry
		a.Detail = fmt.Sprintf("an unsigned line after %s's signed lines (no signed line of %s vouches for it)", device, device)
	}
	return a
}

// Vouched is the pull's stricter line rule: line i is taken only when the
// device vouches for it (i < Attested). It returns "" for such a line, else
// the reason and detail the line is rejected with.
func (a LineAuth) Vouched(i int, device string) (Reason, string) {
	if i < a.Attested {
		return "", ""
	}
	if i < a.Good || a.Reason == "" {
		return UnsignedTimelineEntry, fmt.Sprintf("no line signed by %s vouches for this entry", device)
	}
	return a.Reason, a.Detail
}

// SignerDevice finds the device whose published key is pub ("" if none).
type SignerDevice func(pub ed25519.PublicKey) string

// KeySigner returns a SignerDevice over keys (device id → key); when
// several ids hold pub, the first in sorted order.
func KeySigner(keys map[string]ed25519.PublicKey) SignerDevice {
	return func(pub ed25519.PublicKey) string {
		ids := make([]string, 0, len(keys))
		for id := range keys {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if keys[id].Equal(pub) {
				return id
			}
		}
		return ""
	}
}

// CheckTimelineEntry verifies one timeline entry of device against the
// snapshot file it names (raw; nil when missing): the file parses, its id
// is the entry's and verifies (integrity), it is signed by a key published
// on the branch — device's own, or (an imported snapshot) another device's —
// and every field of the entry matches the snapshot. It returns a reason and
// a detail, or "" when the entry verifies.
func CheckTimelineEntry(e snapshot.TimelineEntry, raw []byte, device string, deviceKey ed25519.PublicKey, signer SignerDevice) (Reason, string) {
	if raw == nil {
		return MissingSnapshot, "the timeline names a snapshot file that does not exist"
	}
	s, err := snapshot.ParseFile(raw)
	if err != nil {
		return MalformedSnapshot, err.Error()
	}
	if s.SnapshotID != e.SnapshotID {
		return IDMismatch, fmt.Sprintf("the file holds snapshot %s", snapshot.ShortID(s.SnapshotID))
	}
	if err := s.VerifyIntegrity(); err != nil {
		return BadID, err.Error()
	}
	if s.Signature == nil {
		return Unsigned, "the snapshot carries no signature"
	}
	ok, err := s.Verify(nil)
	if err != nil {
		return BadSignature, err.Error()
	}
	if !ok {
		return BadSignature, "signature verification failed"
	}
	key, _ := s.SignerKey()
	if deviceKey == nil || !ed25519.PublicKey(key).Equal(deviceKey) {
		if signer == nil || signer(key) == "" {
			return UnknownSigner, fmt.Sprintf("signed by %s, not by %s's key nor any device key on the branch", checkpoint.Fingerprint(key), device)
		}
	}
	if got := s.TimelineEntry(); !EntryEqual(got, e) {
		return EntryMismatch, "the timeline entry's fields do not match the snapshot"
	}
	return "", ""
}

// EntryEqual reports whether two timeline entries are identical.
func EntryEqual(a, b snapshot.TimelineEntry) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.SnapshotID == b.SnapshotID && eq(a.ParentID, b.ParentID) && a.CreatedAt == b.CreatedAt &&
		eq(a.GitCommit, b.GitCommit) && eq(a.GitBranch, b.GitBranch) && a.TokensSaved == b.TokensSaved && a.Signed == b.Signed
}

// TimelineFailure names the first bad entry of a timeline.
type TimelineFailure struct {
	Index    int // 0-based; -1 when the timeline itself is unreadable
	Snapshot string
	Reason   Reason
	Detail   string
}

func (f *TimelineFailure) Error() string {
	if f.Index < 0 {
		return fmt.Sprintf("%s: %s", f.Reason, f.Detail)
	}
	return fmt.Sprintf("entry %d (snapshot %s): %s: %s", f.Index+1, snapshot.ShortID(f.Snapshot), f.Reason, f.Detail)
}

// TimelineVerdict is VerifyTimeline's verdict on one device's timeline.
type TimelineVerdict struct {
	Entries  int
	Verified int
	// Unsigned counts the verified entries on legacy lines that no line
	// signature of the device vouches for.
	Unsigned int
	Failure  *TimelineFailure
	// Named: the snapshot ids the timeline names (read before any
	// failure, and past it).
	Named []string
}

// snapshotBytes reads the snapshot file id for CheckTimelineEntry: nil
// when it is missing, empty when it is too large (it then fails
// MalformedSnapshot); err is a failure of the store.
func snapshotBytes(t Tree, repo, id string) ([]byte, error) {
	raw, err := t.SnapshotFile(repo, id)
	switch {
	case errors.Is(err, ErrMissing):
		return nil, nil
	case errors.Is(err, ErrTooLarge):
		return []byte{}, nil
	}
	return raw, err
}

// VerifyTimeline reads device's timeline in repo from t and verifies every
// entry (`git ctx verify`): the line checks (CheckTimelineLines under the
// device's key in keys), then the snapshot file each names
// (CheckTimelineEntry, signers among keys). A timeline with no signed line
// passes, its entries counted Unsigned.
func VerifyTimeline(t Tree, repo, device string, keys map[string]ed25519.PublicKey) (TimelineVerdict, error) {
	var out TimelineVerdict
	lines, err := t.TimelineLines(repo, device)
	if err != nil {
		if !unreadable(err) {
			return out, err
		}
		out.Failure = &TimelineFailure{Index: -1, Reason: MalformedTimeline, Detail: err.Error()}
	}
	auth := CheckTimelineLines(repo, device, lines, keys[device])
	signer := KeySigner(keys)
	out.Entries = len(lines)
	for i, l := range lines {
		te := l.Entry
		out.Named = append(out.Named, te.SnapshotID)
		if out.Failure != nil {
			continue
		}
		if i == auth.Good {
			out.Failure = &TimelineFailure{Index: i, Snapshot: te.SnapshotID, Reason: auth.Reason, Detail: auth.Detail}
			continue
		}
		raw, err := snapshotBytes(t, repo, te.SnapshotID)
		if err != nil {
			return out, err
		}
		if reason, detail := CheckTimelineEntry(te, raw, device, keys[device], signer); reason != "" {
			out.Failure = &TimelineFailure{Index: i, Snapshot: te.SnapshotID, Reason: reason, Detail: detail}
			continue
		}
		out.Verified++
		if i >= auth.Attested {
			out.Unsigned++
		}
	}
	return out, nil
}

// TimelineCompare asks ContinueTimeline about one device's timeline.
type TimelineCompare struct {
	Repo, Device  string
	Key           ed25519.PublicKey // the device's key (nil: none on either branch)
	Signer        SignerDevice      // every key a snapshot's signer may hold
	Local, Remote []snapshot.TimelineLine
	// Snapshot returns the snapshot file id as it will be on the merged
	// branch (nil when missing, empty when unusable); err stops the merge.
	Snapshot func(id string) ([]byte, error)
}

// TimelineContinuation is ContinueTimeline's verdict.
type TimelineContinuation struct {
	// Shared: the lines both timelines begin with, byte for byte.
	Shared int
	// Accepted: the fetched lines [0, Accepted) may be merged (Accepted ≥
	// Shared; equal when nothing new is taken).
	Accepted int
	// Fork: the fetched timeline diverges from the local one at Shared.
	Fork bool
	// Failure: the first fetched entry that is not taken (nil when every
	// new one is, or at a fork).
	Failure *TimelineFailure
}

// ContinueTimeline decides what of a fetched timeline (Remote) may join
// the local one (Local) — the pull's rule, like Continue for chains: a
// timeline that extends the local one (its first lines byte-identical) is
// checked entry by entry past the shared prefix and taken up to the first
// failure; one that diverges is a fork. A new line is taken only when the
// device vouches for it (LineAuth.Vouched) and the snapshot file it names
// verifies (CheckTimelineEntry).
func ContinueTimeline(c TimelineCompare) (TimelineContinuation, error) {
	n := 0
	for n < len(c.Local) && n < len(c.Remote) && bytes.Equal(c.Local[n].Bytes(), c.Remote[n].Bytes()) {
		n++
	}
	out := TimelineContinuation{Shared: n, Accepted: n}
	if n == len(c.Remote) {
		return out, nil
	}
	if n < len(c.Local) {
		out.Fork = true
		return out, nil
	}
	auth := CheckTimelineLines(c.Repo, c.Device, c.Remote, c.Key)
	for i := n; i < len(c.Remote); i++ {
		e := c.Remote[i].Entry
		raw, err := c.Snapshot(e.SnapshotID)
		if err != nil {
			return out, err
		}
		reason, detail := timelineEntryVerdict(c, auth, i, raw)
		if reason != "" {
			out.Failure = &TimelineFailure{Index: i, Snapshot: e.SnapshotID, Reason: reason, Detail: detail}
			return out, nil
		}
		out.Accepted = i + 1
	}
	return out, nil
}

// timelineEntryVerdict is the pull's check of fetched line i.
func timelineEntryVerdict(c TimelineCompare, auth LineAuth, i int, raw []byte) (Reason, string) {
	if c.Key == nil {
		return UnknownKey, fmt.Sprintf("no public key for %s on either branch", c.Device)
	}
	if reason, detail := auth.Vouched(i, c.Device); reason != "" {
		return reason, detail
	}
	return CheckTimelineEntry(c.Remote[i].Entry, raw, c.Device, c.Key, c.Signer)
}
