package chain

import (
	"crypto/ed25519"
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
