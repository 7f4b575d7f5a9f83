package chain

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// sessLine is one line of a hand-made ghyll-v1 chain: label names the
// record, session is its session ("" for ghyll's compaction records),
// parent the label of its parent ("" for the zero hash, "?" for a hash
// that is no record of the chain).
type sessLine struct{ label, session, parent string }

// sessChain builds dev's chain in testRepo from lines, each record made as
// ghyll's library makes one (v 2, hashed under ghyll's code rule, repo ""),
// signed with devKey. A label may repeat (the same record twice).
func sessChain(t *testing.T, lines []sessLine) (*memTree, []checkpoint.ChainEntry) {
	t.Helper()
	tr := newMemTree()
	tr.keys["dev"] = devKey.Public().(ed25519.PublicKey)
	byLabel := map[string]checkpoint.ChainEntry{}
	var list []checkpoint.ChainEntry
	for i, l := range lines {
		if e, ok := byLabel[l.label]; ok {
			list = append(list, e)
			continue
		}
		parent := checkpoint.ZeroHash
		switch l.parent {
		case "":
		case "?":
			parent = fmt.Sprintf("%064x", 0xbad)
		default:
			p, ok := byLabel[l.parent]
			if !ok {
				t.Fatalf("line %d: no record %q before it", i, l.parent)
			}
			parent = p.Hash
		}
		cp := &checkpoint.Checkpoint{Version: 2, ParentHash: parent, DeviceID: "dev", AuthorID: "dev",
			Timestamp: int64(1712345678000000000 + i), SessionID: l.session, Turn: 5 * (i + 1), ActiveModel: "m25",
			Summary: "turn " + l.label}
		h, err := cp.ComputeHash(checkpoint.RuleGhyllV2)
		if err != nil {
			t.Fatal(err)
		}
		cp.Hash, cp.Signature = h, hex.EncodeToString(ed25519.Sign(devKey, []byte(h)))
		b, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		tr.checkpoints[testRepo+"/"+h] = b
		byLabel[l.label] = cp.Entry()
		list = append(list, cp.Entry())
	}
	tr.setChain(list)
	return tr, list
}

// sessVerdict is a verdict on a whole chain: the reason and 0-based index
// of its first failure ("" and -1: every entry verified) and how many
// entries verified before it.
type sessVerdict struct {
	reason   Reason
	index    int
	verified int
}

func (v sessVerdict) String() string {
	return fmt.Sprintf("%q at %d, %d verified", v.reason, v.index, v.verified)
}

func storedVerdict(t *testing.T, tr *memTree, sessionRoots bool) sessVerdict {
	t.Helper()
	res, err := VerifyStored(tr, Stored{Repo: testRepo, Device: "dev", Key: tr.keys["dev"], SessionRoots: sessionRoots})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil {
		return sessVerdict{"", -1, res.Verified}
	}
	return sessVerdict{res.Failure.Reason, res.Failure.Index, res.Verified}
}

// newVerdict is VerifyNew's verdict when the first have entries are
// cached already (their verdict added: they verified).
func newVerdict(t *testing.T, tr *memTree, list []checkpoint.ChainEntry, have int, sessionRoots bool) sessVerdict {
	t.Helper()
	in := Increment{Repo: testRepo, Device: "dev", Have: have, SessionRoots: sessionRoots}
	if have > 0 {
		in.LastHash = list[have-1].Hash
	}
	n := 0
	in.Verified = func(i int, cp *checkpoint.Checkpoint, _ checkpoint.Rule) error {
		if i != have+n || cp.Hash != list[i].Hash {
			t.Fatalf("Verified(%d, %s) after %d of %d", i, short(cp.Hash), n, have)
		}
		n++
		return nil
	}
	res, err := VerifyNew(tr, in)
	if err != nil || res.Unreadable != "" {
		t.Fatalf("VerifyNew from %d: %v %q", have, err, res.Unreadable)
	}
	if res.Failure == nil {
		return sessVerdict{"", -1, have + n}
	}
	return sessVerdict{res.Failure.Reason, have + res.Failure.Index, have + n}
}

// continueVerdict is Continue's verdict when the local chain holds the
// first have entries and the fetched one all of them.
func continueVerdict(t *testing.T, tr *memTree, list []checkpoint.ChainEntry, have int, sessionRoots bool) sessVerdict {
	t.Helper()
	c := Continue(Compare{Device: "dev", Repo: testRepo, Key: tr.keys["dev"], Local: list[:have], Remote: list,
		Load: Records(tr, testRepo), SessionRoots: sessionRoots})
	if c.Fork || c.Shared != have {
		t.Fatalf("Continue from %d: fork %v, shared %d", have, c.Fork, c.Shared)
	}
	if c.Result.Failure == nil {
		return sessVerdict{"", -1, have + c.Result.Verified}
	}
	return sessVerdict{c.Result.Failure.Reason, have + c.Result.Failure.Index, have + c.Result.Verified}
}

// TestSessionRoots: the ghyll-v1 linkage rule (a root per session) gives
// the same verdict through `git ctx verify` (VerifyStored), the cache
// (VerifyNew) and a pull (Continue), whichever prefix of the chain is
// already known; without SessionRoots (ctx-v1) a new root is broken_chain.
func TestSessionRoots(t *testing.T) {
	cases := []struct {
		name  string
		lines []sessLine
		want  sessVerdict // with SessionRoots
		// linear: the verdict without SessionRoots (ctx-v1's rule).
		linear sessVerdict
	}{
		{"one session", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"a3", "A", "a2"}},
			sessVerdict{"", -1, 3}, sessVerdict{"", -1, 3}},
		{"two sessions, one after the other", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"b2", "B", "b1"}},
			sessVerdict{"", -1, 4}, sessVerdict{BrokenChain, 2, 2}},
		{"interleaved sessions", []sessLine{{"a1", "A", ""}, {"b1", "B", ""}, {"a2", "A", "a1"}, {"b2", "B", "b1"}, {"a3", "A", "a2"}, {"b3", "B", "b2"}},
			sessVerdict{"", -1, 6}, sessVerdict{BrokenChain, 1, 1}},
		{"compaction records", []sessLine{{"c0", "", ""}, {"a1", "A", ""}, {"a2", "A", "a1"}, {"c1", "", "a2"}, {"c2", "", "a2"}, {"a3", "A", "a2"}, {"a4", "A", "a3"}},
			sessVerdict{"", -1, 7}, sessVerdict{BrokenChain, 1, 1}},
		{"git-ctx's linear chain across sessions", []sessLine{{"a1", "A", ""}, {"b1", "B", "a1"}, {"a2", "A", "b1"}, {"n1", "", "a2"}, {"n2", "", "n1"}, {"a3", "A", "n2"}},
			sessVerdict{"", -1, 6}, sessVerdict{"", -1, 6}},
		{"git-ctx appends after ghyll's sessions", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"x1", "X", "b1"}, {"b2", "B", "b1"}},
			sessVerdict{"", -1, 5}, sessVerdict{BrokenChain, 2, 2}},
		{"fork within a session", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"a2x", "A", "a1"}},
			sessVerdict{SessionFork, 3, 3}, sessVerdict{BrokenChain, 2, 2}},
		{"fork within a session, right after the parent", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"a3", "A", "a2"}, {"a3x", "A", "a2"}},
			sessVerdict{SessionFork, 3, 3}, sessVerdict{BrokenChain, 3, 3}},
		{"second root for a session", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"a9", "A", ""}},
			sessVerdict{SessionFork, 3, 3}, sessVerdict{BrokenChain, 2, 2}},
		{"second root right after the session", []sessLine{{"a1", "A", ""}, {"a9", "A", ""}},
			sessVerdict{SessionFork, 1, 1}, sessVerdict{BrokenChain, 1, 1}},
		{"links to another session's record", []sessLine{{"a1", "A", ""}, {"b1", "B", ""}, {"b2", "B", "b1"}, {"a2", "A", "b1"}},
			sessVerdict{BrokenChain, 3, 3}, sessVerdict{BrokenChain, 1, 1}},
		{"continues a compaction record", []sessLine{{"a1", "A", ""}, {"c1", "", "a1"}, {"a2", "A", "a1"}, {"a3", "A", "c1"}},
			sessVerdict{BrokenChain, 3, 3}, sessVerdict{BrokenChain, 2, 2}},
		{"compaction off a stale record", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"c1", "", "a1"}},
			sessVerdict{BrokenChain, 2, 2}, sessVerdict{BrokenChain, 2, 2}},
		{"parent is no record of the chain", []sessLine{{"a1", "A", ""}, {"b1", "B", ""}, {"a2", "A", "?"}},
			sessVerdict{BrokenChain, 2, 2}, sessVerdict{BrokenChain, 1, 1}},
		{"first entry not a root", []sessLine{{"a1", "A", "?"}},
			sessVerdict{BrokenChain, 0, 0}, sessVerdict{BrokenChain, 0, 0}},
		{"a line written twice", []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"a2", "A", "a1"}},
			sessVerdict{Duplicate, 3, 3}, sessVerdict{BrokenChain, 2, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, list := sessChain(t, c.lines)
			sessWantRule(t, tr, list, c.want, c.linear)
		})
	}
}

// TestSessionRootsReordered: a session's records in another order than
// they were written (each still validly signed) break the session's chain.
func TestSessionRootsReordered(t *testing.T) {
	tr, list := sessChain(t, []sessLine{{"a1", "A", ""}, {"b1", "B", ""}, {"a2", "A", "a1"}, {"a3", "A", "a2"}, {"b2", "B", "b1"}})
	list[2], list[3] = list[3], list[2]
	tr.setChain(list)
	sessWantRule(t, tr, list, sessVerdict{BrokenChain, 2, 2}, sessVerdict{BrokenChain, 1, 1})
}

// sessWantRule checks the verdicts on tr's chain (list) with session roots
// (want) and without (linear) through VerifyStored, and through VerifyNew
// and Continue from every prefix of what verifies.
func sessWantRule(t *testing.T, tr *memTree, list []checkpoint.ChainEntry, want, linear sessVerdict) {
	t.Helper()
	for _, roots := range []bool{true, false} {
		want := want
		if !roots {
			want = linear
		}
		if got := storedVerdict(t, tr, roots); got != want {
			t.Errorf("VerifyStored (session roots %v): %v, want %v", roots, got, want)
		}
		// Every prefix of what verified may be known already.
		for have := 0; have <= want.verified; have++ {
			if got := newVerdict(t, tr, list, have, roots); got != want {
				t.Errorf("VerifyNew with %d cached (session roots %v): %v, want %v", have, roots, got, want)
			}
			if got := continueVerdict(t, tr, list, have, roots); got != want {
				t.Errorf("Continue from %d local entries (session roots %v): %v, want %v", have, roots, got, want)
			}
		}
	}
}

// TestSessionRootsTruncation: what per-session roots leave of truncation
// detection (docs/SECURITY.md). A chain with a whole session or a
// session's tail dropped is still a valid chain on its own; only the local
// chain, which held the dropped records, tells: a drop from the middle
// diverges from it (a fork at the first dropped entry, nothing past the
// shared prefix taken), a drop at the end adds nothing and keeps what the
// local chain has.
func TestSessionRootsTruncation(t *testing.T) {
	lines := []sessLine{{"a1", "A", ""}, {"a2", "A", "a1"}, {"b1", "B", ""}, {"b2", "B", "b1"}, {"a3", "A", "a2"}, {"c1", "C", ""}, {"c2", "C", "c1"}}
	tr, full := sessChain(t, lines)
	drop := func(idx ...int) []checkpoint.ChainEntry {
		out := []checkpoint.ChainEntry{}
		for i, e := range full {
			keep := true
			for _, d := range idx {
				keep = keep && i != d
			}
			if keep {
				out = append(out, e)
			}
		}
		return out
	}
	cases := []struct {
		name     string
		remote   []checkpoint.ChainEntry
		forkAt   int // -1: no fork
		newCount int // entries the pull would take
	}{
		{"session B dropped from the middle", drop(2, 3), 2, 0},
		{"session A's tail dropped", drop(4), 4, 0},
		{"trailing session C dropped", drop(5, 6), -1, 0},
		{"nothing dropped", full, -1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr.setChain(c.remote)
			// A clone that never saw the dropped records cannot tell.
			if got := storedVerdict(t, tr, true); got != (sessVerdict{"", -1, len(c.remote)}) {
				t.Fatalf("truncated chain on its own: %v", got)
			}
			cont := Continue(Compare{Device: "dev", Repo: testRepo, Key: tr.keys["dev"], Local: full, Remote: c.remote,
				Load: Records(tr, testRepo), SessionRoots: true})
			if c.forkAt < 0 {
				if cont.Fork || cont.Shared != len(c.remote) || cont.Result.Verified != 0 || cont.Result.Failure != nil {
					t.Fatalf("got %+v, want nothing new", cont)
				}
				return
			}
			if !cont.Fork || cont.Shared != c.forkAt || cont.Local != full[c.forkAt].Hash || cont.Result.Verified != 0 {
				t.Fatalf("got %+v, want a fork at entry %d", cont, c.forkAt)
			}
		})
	}
}

// TestSessionRootsPriorFiles: the shared prefix's sessions are read from
// the local branch when the caller gives its files (LocalLoad), and a
// prefix record whose file is gone fails the record whose linkage needs
// it; VerifyNew reports a rewritten prefix as DivergedError.
func TestSessionRootsPriorFiles(t *testing.T) {
	tr, list := sessChain(t, []sessLine{{"a1", "A", ""}, {"b1", "B", ""}, {"a2", "A", "a1"}, {"b2", "B", "b1"}})
	local := map[string][]byte{}
	for k, v := range tr.checkpoints {
		local[k] = v
	}
	delete(tr.checkpoints, testRepo+"/"+list[0].Hash) // the fetched side lost a1's file
	cmp := Compare{Device: "dev", Repo: testRepo, Key: tr.keys["dev"], Local: list[:2], Remote: list,
		Load: Records(tr, testRepo), SessionRoots: true}
	if c := Continue(cmp); c.Result.Failure == nil || c.Result.Failure.Reason != MissingCheckpoint || c.Result.Failure.Index != 0 {
		t.Fatalf("prefix file missing on both sides: %+v", c.Result.Failure)
	}
	cmp.LocalLoad = func(h string) ([]byte, error) {
		if b, ok := local[testRepo+"/"+h]; ok {
			return b, nil
		}
		return nil, ErrMissing
	}
	if c := Continue(cmp); c.Result.Failure != nil || c.Result.Verified != 2 {
		t.Fatalf("prefix read from the local branch: %+v", c.Result)
	}
	_, err := VerifyNew(tr, Increment{Repo: testRepo, Device: "dev", Have: 2, LastHash: list[0].Hash, SessionRoots: true})
	var d *DivergedError
	if !errors.As(err, &d) || d.Position != 2 {
		t.Fatalf("VerifyNew with another entry at position 2: %v", err)
	}
	_, err = VerifyNew(tr, Increment{Repo: testRepo, Device: "dev", Have: 5, LastHash: list[3].Hash, SessionRoots: true})
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("VerifyNew past the chain's end: %v", err)
	}
}
