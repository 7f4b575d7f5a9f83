package chain

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/formats/snapshot"
)

// memTree is a hand-made Tree: a branch held in maps, with the error
// contract of Tree (ErrMissing, ErrTooLarge, ErrUnreadable).
type memTree struct {
	keys        map[string]ed25519.PublicKey
	chains      map[string][]byte // repo/device → chain bytes
	checkpoints map[string][]byte // repo/hash → file
	timelines   map[string][]snapshot.TimelineLine
	snapshots   map[string][]byte // repo/id → file
	tooLarge    map[string]bool   // keys of the maps above whose object is too large
	unreadable  map[string]bool   // chains and timelines not in the layout's form
}

func newMemTree() *memTree {
	return &memTree{keys: map[string]ed25519.PublicKey{}, chains: map[string][]byte{}, checkpoints: map[string][]byte{},
		timelines: map[string][]snapshot.TimelineLine{}, snapshots: map[string][]byte{}, tooLarge: map[string]bool{}, unreadable: map[string]bool{}}
}

func (t *memTree) refuse(k string) error {
	switch {
	case t.tooLarge[k]:
		return fmt.Errorf("%w: %s is 99999999 bytes", ErrTooLarge, k)
	case t.unreadable[k]:
		return fmt.Errorf("%w: %s: segment 00000001.jsonl holds 0 lines", ErrUnreadable, k)
	}
	return nil
}

func (t *memTree) DeviceKey(d string) (ed25519.PublicKey, error) {
	if k, ok := t.keys[d]; ok {
		return k, nil
	}
	return nil, ErrMissing
}

func (t *memTree) ChainBytes(repo, dev string) ([]byte, error) {
	if err := t.refuse(repo + "/" + dev); err != nil {
		return nil, err
	}
	return t.chains[repo+"/"+dev], nil
}

func (t *memTree) ChainFrom(repo, dev string, start int) ([]checkpoint.ChainEntry, error) {
	b, err := t.ChainBytes(repo, dev)
	if err != nil {
		return nil, err
	}
	all, _, err := checkpoint.ParseChain(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	return all[min(start, len(all)):], nil
}

// file is m's file at key (repository/name), unless refuse says no;
// ErrMissing when there is none.
func (t *memTree) file(m map[string][]byte, key string) ([]byte, error) {
	if err := t.refuse(key); err != nil {
		return nil, err
	}
	if b, ok := m[key]; ok {
		return b, nil
	}
	return nil, ErrMissing
}

func (t *memTree) CheckpointFile(repo, hash string) ([]byte, error) {
	return t.file(t.checkpoints, repo+"/"+hash)
}

func (t *memTree) TimelineLines(repo, dev string) ([]snapshot.TimelineLine, error) {
	if err := t.refuse(repo + "/" + dev); err != nil {
		return nil, err
	}
	return t.timelines[repo+"/"+dev], nil
}

func (t *memTree) SnapshotFile(repo, id string) ([]byte, error) {
	return t.file(t.snapshots, repo+"/"+id)
}

const testRepo = "custom-id"

var (
	devKey   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	otherKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{4}, 32))
)

// chainWorld is a memTree holding device "dev"'s chain of n records in
// testRepo; edit, when set, changes record i before it is sealed.
func chainWorld(t *testing.T, n int, edit func(i int, cp *checkpoint.Checkpoint)) (*memTree, []*checkpoint.Checkpoint) {
	t.Helper()
	tr := newMemTree()
	tr.keys["dev"] = devKey.Public().(ed25519.PublicKey)
	var cps []*checkpoint.Checkpoint
	var lines []byte
	parent := checkpoint.ZeroHash
	for i := 0; i < n; i++ {
		cp := &checkpoint.Checkpoint{ParentHash: parent, DeviceID: "dev", RepoRemote: testRepo, Timestamp: int64(1000 + i), Turn: i + 1, Summary: fmt.Sprint("s", i)}
		if edit != nil {
			edit(i, cp)
		}
		if err := cp.Seal(devKey); err != nil {
			t.Fatal(err)
		}
		b, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		tr.checkpoints[testRepo+"/"+cp.Hash] = b
		lines = append(lines, cp.Entry().MarshalLine()...)
		cps = append(cps, cp)
		parent = cp.Hash
	}
	tr.chains[testRepo+"/dev"] = lines
	return tr, cps
}

// setChain replaces dev's chain by entries.
func (t *memTree) setChain(entries []checkpoint.ChainEntry) {
	var b []byte
	for _, e := range entries {
		b = append(b, e.MarshalLine()...)
	}
	t.chains[testRepo+"/dev"] = b
}

func entries(cps []*checkpoint.Checkpoint) []checkpoint.ChainEntry {
	out := make([]checkpoint.ChainEntry, len(cps))
	for i, cp := range cps {
		out[i] = cp.Entry()
	}
	return out
}

// TestStoredChainReasons: every reason of a stored chain is reached by a
// minimal hand-made tree through Tree (VerifyStored, as `git ctx verify`
// reads a chain), at the expected entry, with the entries before it
// verified.
func TestStoredChainReasons(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, s *Stored)
		reason  Reason
		index   int
		entries int
	}{
		// A chain that cannot be read verifies nothing: Verified is
		// max(index, 0) only for failures of one record.
		{"valid", func(*testing.T, *memTree, []*checkpoint.Checkpoint, *Stored) {}, "", -1, 4},
		{"no key", func(_ *testing.T, tr *memTree, _ []*checkpoint.Checkpoint, s *Stored) { s.Key = nil }, UnknownKey, 0, 4},
		{"chain line garbage", func(_ *testing.T, tr *memTree, _ []*checkpoint.Checkpoint, _ *Stored) {
			tr.chains[testRepo+"/dev"] = append(tr.chains[testRepo+"/dev"], "{not a chain line\n"...)
		}, Malformed, 4, 4},
		{"chain unreadable", func(_ *testing.T, tr *memTree, _ []*checkpoint.Checkpoint, _ *Stored) {
			tr.unreadable[testRepo+"/dev"] = true
		}, Malformed, -1, 0},
		{"chain too large", func(_ *testing.T, tr *memTree, _ []*checkpoint.Checkpoint, _ *Stored) {
			tr.tooLarge[testRepo+"/dev"] = true
		}, Malformed, -1, 0},
		{"entry dropped", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			e := entries(cps)
			tr.setChain(append(e[:1:1], e[2:]...))
		}, BrokenChain, 1, 3},
		{"entry repeated", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			e := entries(cps)
			tr.setChain(append(e, checkpoint.ChainEntry{Hash: e[2].Hash, Parent: e[3].Hash, TS: e[2].TS}))
		}, Duplicate, 4, 5},
		{"file missing", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			delete(tr.checkpoints, testRepo+"/"+cps[2].Hash)
		}, MissingCheckpoint, 2, 4},
		{"file too large", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			tr.tooLarge[testRepo+"/"+cps[1].Hash] = true
		}, TooLarge, 1, 4},
		{"file garbage", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			tr.checkpoints[testRepo+"/"+cps[3].Hash] = []byte("{")
		}, Malformed, 3, 4},
		{"content edited", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			k := testRepo + "/" + cps[2].Hash
			tr.checkpoints[k] = bytes.Replace(tr.checkpoints[k], []byte(`"s2"`), []byte(`"s9"`), 1)
		}, HashMismatch, 2, 4},
		{"another record's file", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			tr.checkpoints[testRepo+"/"+cps[1].Hash] = tr.checkpoints[testRepo+"/"+cps[0].Hash]
		}, HashMismatch, 1, 4},
		{"signed by another key", func(_ *testing.T, _ *memTree, _ []*checkpoint.Checkpoint, s *Stored) {
			s.Key = otherKey.Public().(ed25519.PublicKey)
		}, BadSignature, 0, 4},
		{"another device's chain", func(_ *testing.T, tr *memTree, _ []*checkpoint.Checkpoint, s *Stored) {
			tr.chains[testRepo+"/thief"], tr.keys["thief"] = tr.chains[testRepo+"/dev"], tr.keys["dev"]
			s.Device = "thief"
		}, WrongDevice, 0, 4},
		{"chain line ts edited", func(_ *testing.T, tr *memTree, cps []*checkpoint.Checkpoint, _ *Stored) {
			e := entries(cps)
			e[3].TS++
			tr.setChain(e)
		}, EntryMismatch, 3, 4},
		{"foreign directory", func(_ *testing.T, _ *memTree, _ []*checkpoint.Checkpoint, s *Stored) { s.Foreign = true }, WrongRepo, -1, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, cps := chainWorld(t, 4, nil)
			s := Stored{Repo: testRepo, Device: "dev", Key: tr.keys["dev"]}
			c.setup(t, tr, cps, &s)
			res, err := VerifyStored(tr, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.List) != c.entries {
				t.Errorf("%d entries, want %d", len(res.List), c.entries)
			}
			if c.reason == "" {
				if res.Failure != nil || res.Verified != 4 {
					t.Fatalf("valid chain: %+v", res)
				}
				return
			}
			verified := max(c.index, 0)
			if c.name == "chain line garbage" || strings.HasPrefix(c.name, "chain unreadable") || strings.HasPrefix(c.name, "chain too") {
				verified = 0
			}
			if res.Failure == nil || res.Failure.Reason != c.reason || res.Failure.Index != c.index || res.Verified != verified {
				t.Fatalf("got %+v (verified %d), want %s at %d", res.Failure, res.Verified, c.reason, c.index)
			}
		})
	}
}

// TestWrongRepoRecord: an authentic record whose repo field names another
// repository fails wrong_repo after its signature verified.
func TestWrongRepoRecord(t *testing.T) {
	tr, _ := chainWorld(t, 3, func(i int, cp *checkpoint.Checkpoint) {
		if i == 2 {
			cp.RepoRemote = "github.com/example/other"
		}
	})
	res, err := VerifyStored(tr, Stored{Repo: testRepo, Device: "dev", Key: tr.keys["dev"]})
	if err != nil || res.Failure == nil || res.Failure.Reason != WrongRepo || res.Failure.Index != 2 || res.Verified != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestVerifyNew: the cache's incremental read verifies only the records
// past the known ones, continuing the known tip; keeps the readable
// records after a failure; reports a rewritten chain and an unreadable one.
func TestVerifyNew(t *testing.T) {
	tr, cps := chainWorld(t, 5, nil)
	var seqs []int
	res, err := VerifyNew(tr, Increment{Repo: testRepo, Device: "dev", Have: 2, LastHash: cps[1].Hash,
		Verified: func(i int, cp *checkpoint.Checkpoint, _ checkpoint.Rule) error {
			if cp.Hash != cps[i].Hash {
				t.Errorf("record %d is %s", i, cp.Hash)
			}
			seqs = append(seqs, i)
			return nil
		}})
	if err != nil || res.Failure != nil || fmt.Sprint(seqs) != "[2 3 4]" {
		t.Fatalf("%+v %v %v", res, err, seqs)
	}
	// A tampered record: it and the readable ones after it come back
	// unverified, with their positions.
	k := testRepo + "/" + cps[3].Hash
	tr.checkpoints[k] = bytes.Replace(tr.checkpoints[k], []byte(`"s3"`), []byte(`"s9"`), 1)
	res, err = VerifyNew(tr, Increment{Repo: testRepo, Device: "dev", Have: 2, LastHash: cps[1].Hash})
	if err != nil || res.Failure == nil || res.Failure.Reason != HashMismatch || res.Failure.Index != 1 ||
		len(res.After) != 2 || res.After[0].Seq != 3 || res.After[1].Seq != 4 || res.After[0].Rule != "" || res.After[1].Rule != checkpoint.RuleSeedV1 {
		t.Fatalf("tampered: %+v %v", res, err)
	}
	// The known tip is gone from its place: the history was rewritten.
	_, err = VerifyNew(tr, Increment{Repo: testRepo, Device: "dev", Have: 2, LastHash: cps[0].Hash})
	var de *DivergedError
	if !errors.As(err, &de) || de.Position != 2 || !strings.Contains(err.Error(), "no longer holds checkpoint "+cps[0].Hash[:12]+" at position 2") {
		t.Fatalf("rewritten: %v", err)
	}
	tr.unreadable[testRepo+"/dev"] = true
	if res, err = VerifyNew(tr, Increment{Repo: testRepo, Device: "dev"}); err != nil || res.Unreadable == "" {
		t.Fatalf("unreadable: %+v %v", res, err)
	}
}

// continued is what the pull's rule (Continue, ContinueTimeline) decides
// for a fetched chain or timeline: the shared prefix, the entries taken, a
// fork, and the reason of the first entry not taken.
type continued struct {
	shared, taken int
	fork          bool
	reason        Reason
}

// TestContinue: the pull's rule for a fetched chain.
func TestContinue(t *testing.T) {
	tr, cps := chainWorld(t, 4, nil)
	all := entries(cps)
	load := Records(tr, testRepo)
	key := tr.keys["dev"]
	// Our own: a fork at entry 3 signed by the device.
	_, ours := chainWorld(t, 3, func(i int, cp *checkpoint.Checkpoint) {
		if i == 2 {
			cp.Summary = "ours"
		}
	})
	forked := entries(ours)
	cases := []struct {
		name          string
		local, remote []checkpoint.ChainEntry
		key           ed25519.PublicKey
		want          continued
	}{
		{"nothing new", all, all[:2], key, continued{2, 0, false, ""}},
		{"extends ours", all[:1], all, key, continued{1, 3, false, ""}},
		{"first pull", nil, all, key, continued{0, 4, false, ""}},
		{"fork", forked, all, key, continued{2, 0, true, ""}},
		{"rewrite not signed by the device", forked, all, otherKey.Public().(ed25519.PublicKey), continued{2, 0, false, BadSignature}},
		{"extension with a dropped entry", all[:1], append(all[:2:2], all[3]), key, continued{1, 1, false, BrokenChain}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, workers := range []int{0, 1, 2, 3, 8} { // a pull checks on GOMAXPROCS workers
				got := Continue(Compare{Device: "dev", Repo: testRepo, Key: c.key, Local: c.local, Remote: c.remote, Load: load, Workers: workers})
				have := continued{shared: got.Shared, taken: got.Result.Verified, fork: got.Fork}
				if got.Result.Failure != nil {
					have.reason = got.Result.Failure.Reason
				}
				if have != c.want {
					t.Fatalf("%d workers: got %+v; want %+v", workers, have, c.want)
				}
				if c.want.fork && got.Local != forked[2].Hash {
					t.Fatalf("%d workers: fork names local %s", workers, got.Local)
				}
			}
		})
	}
}

// --- timelines ---

func testSnap(t *testing.T, n int, key ed25519.PrivateKey) *snapshot.Snapshot {
	t.Helper()
	s := snapshot.New(fmt.Sprintf("2026-01-01T00:00:%02d.000000+00:00", n), "test")
	s.ROI.TokensSaved = uint64(n)
	var err error
	if key != nil {
		err = s.Sign(key)
	} else {
		err = s.Finalize()
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func snapFile(t *testing.T, s *snapshot.Snapshot) []byte {
	t.Helper()
	b, err := s.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// timelineWorld: dev's timeline of n signed lines naming signed snapshots.
func timelineWorld(t *testing.T, n int) (*memTree, []*snapshot.Snapshot) {
	t.Helper()
	tr := newMemTree()
	tr.keys["dev"] = devKey.Public().(ed25519.PublicKey)
	var snaps []*snapshot.Snapshot
	var lines []snapshot.TimelineLine
	for i := 0; i < n; i++ {
		s := testSnap(t, i, devKey)
		tr.snapshots[testRepo+"/"+s.SnapshotID] = snapFile(t, s)
		lines = append(lines, signLine(t, devKey, "dev", lines, s.TimelineEntry()))
		snaps = append(snaps, s)
	}
	tr.timelines[testRepo+"/dev"] = lines
	return tr, snaps
}

// signLine signs e for device as the line after prefix.
func signLine(t *testing.T, key ed25519.PrivateKey, device string, prefix []snapshot.TimelineLine, e snapshot.TimelineEntry) snapshot.TimelineLine {
	t.Helper()
	prev := snapshot.GenesisPrev
	for _, l := range prefix {
		prev = snapshot.NextPrev(prev, l.Bytes())
	}
	l, err := snapshot.SignTimelineLine(key, testRepo, device, uint64(len(prefix)), prev, e)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func legacyLine(t *testing.T, e snapshot.TimelineEntry) snapshot.TimelineLine {
	t.Helper()
	l, err := snapshot.LegacyTimelineLine(e)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// secondSnapshotSignedBy is a TestTimelineReasons set-up: the timeline's
// second snapshot is replaced by one signed with key (nil: unsigned), the
// device's timeline lines signed again over it.
func secondSnapshotSignedBy(key ed25519.PrivateKey) func(*testing.T, *memTree, []*snapshot.Snapshot) {
	return func(t *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
		s := testSnap(t, 1, key)
		tr.snapshots[testRepo+"/"+s.SnapshotID] = snapFile(t, s)
		l := tr.timelines[testRepo+"/dev"]
		l[1] = signLine(t, devKey, "dev", l[:1], s.TimelineEntry())
		l[2] = signLine(t, devKey, "dev", l[:2], snaps[2].TimelineEntry())
	}
}

// TestTimelineReasons: every timeline reason is reached by a minimal
// hand-made tree through Tree (VerifyTimeline, as `git ctx verify` reads a
// timeline), at the expected entry.
func TestTimelineReasons(t *testing.T) {
	stranger := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32))
	cases := []struct {
		name   string
		setup  func(t *testing.T, tr *memTree, snaps []*snapshot.Snapshot)
		reason Reason
		index  int
	}{
		{"valid", func(*testing.T, *memTree, []*snapshot.Snapshot) {}, "", 0},
		{"timeline unreadable", func(_ *testing.T, tr *memTree, _ []*snapshot.Snapshot) { tr.unreadable[testRepo+"/dev"] = true }, MalformedTimeline, -1},
		{"no key for signed lines", func(_ *testing.T, tr *memTree, _ []*snapshot.Snapshot) { delete(tr.keys, "dev") }, UnknownKey, 0},
		{"line signed by another key", func(t *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			l := tr.timelines[testRepo+"/dev"]
			l[2] = signLine(t, otherKey, "dev", l[:2], snaps[2].TimelineEntry())
		}, BadTimelineSignature, 2},
		{"lines swapped", func(_ *testing.T, tr *memTree, _ []*snapshot.Snapshot) {
			l := tr.timelines[testRepo+"/dev"]
			l[1], l[2] = l[2], l[1]
		}, MisplacedTimelineEntry, 1},
		{"unsigned line after signed ones", func(t *testing.T, tr *memTree, _ []*snapshot.Snapshot) {
			s := testSnap(t, 7, devKey)
			tr.snapshots[testRepo+"/"+s.SnapshotID] = snapFile(t, s)
			tr.timelines[testRepo+"/dev"] = append(tr.timelines[testRepo+"/dev"], legacyLine(t, s.TimelineEntry()))
		}, UnsignedTimelineEntry, 3},
		{"snapshot missing", func(_ *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			delete(tr.snapshots, testRepo+"/"+snaps[1].SnapshotID)
		}, MissingSnapshot, 1},
		{"snapshot garbage", func(_ *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			tr.snapshots[testRepo+"/"+snaps[1].SnapshotID] = []byte("{")
		}, MalformedSnapshot, 1},
		{"snapshot too large", func(_ *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			tr.tooLarge[testRepo+"/"+snaps[0].SnapshotID] = true
		}, MalformedSnapshot, 0},
		{"another snapshot's file", func(_ *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			tr.snapshots[testRepo+"/"+snaps[2].SnapshotID] = tr.snapshots[testRepo+"/"+snaps[0].SnapshotID]
		}, IDMismatch, 2},
		{"content edited", func(t *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			k := testRepo + "/" + snaps[1].SnapshotID
			before := len(tr.snapshots[k])
			tr.snapshots[k] = bytes.Replace(tr.snapshots[k], []byte(`"tokens_saved": 1`), []byte(`"tokens_saved": 9`), 1)
			if len(tr.snapshots[k]) != before || bytes.Equal(tr.snapshots[k], snapFile(t, snaps[1])) {
				t.Fatal("the edit did not apply")
			}
		}, BadID, 1},
		{"snapshot unsigned", secondSnapshotSignedBy(nil), Unsigned, 1},
		{"snapshot signed by a stranger", secondSnapshotSignedBy(stranger), UnknownSigner, 1},
		{"entry fields edited", func(t *testing.T, tr *memTree, snaps []*snapshot.Snapshot) {
			e := snaps[2].TimelineEntry()
			e.TokensSaved++
			l := tr.timelines[testRepo+"/dev"]
			l[2] = signLine(t, devKey, "dev", l[:2], e)
		}, EntryMismatch, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, snaps := timelineWorld(t, 3)
			c.setup(t, tr, snaps)
			v, err := VerifyTimeline(tr, testRepo, "dev", tr.keys)
			if err != nil {
				t.Fatal(err)
			}
			if c.reason == "" {
				if v.Failure != nil || v.Verified != 3 || v.Unsigned != 0 || len(v.Named) != 3 {
					t.Fatalf("valid timeline: %+v", v)
				}
				return
			}
			if v.Failure == nil || v.Failure.Reason != c.reason || v.Failure.Index != c.index || v.Verified != max(c.index, 0) {
				t.Fatalf("got %+v (verified %d), want %s at %d", v.Failure, v.Verified, c.reason, c.index)
			}
		})
	}
}

// TestSnapshotSignatureReason: a snapshot whose signature does not verify
// over its id fails bad_signature.
func TestSnapshotSignatureReason(t *testing.T) {
	s := testSnap(t, 1, devKey)
	raw := snapFile(t, s)
	sig := regexp.MustCompile(`"value": "[0-9a-f]{2}`)
	loc := sig.FindIndex(raw)
	if loc == nil {
		t.Fatalf("no signature value in %s", raw)
	}
	bad := append([]byte{}, raw...)
	if bad[loc[1]-1] == '0' {
		bad[loc[1]-1] = '1'
	} else {
		bad[loc[1]-1] = '0'
	}
	reason, detail := CheckTimelineEntry(s.TimelineEntry(), bad, "dev", devKey.Public().(ed25519.PublicKey), nil)
	if reason != BadSignature {
		t.Fatalf("%s: %s", reason, detail)
	}
}

// TestContinueTimeline: the pull's rule for a fetched timeline.
func TestContinueTimeline(t *testing.T) {
	tr, snaps := timelineWorld(t, 3)
	lines := tr.timelines[testRepo+"/dev"]
	key := tr.keys["dev"]
	load := func(id string) ([]byte, error) { return snapshotBytes(tr, testRepo, id) }
	legacy := []snapshot.TimelineLine{legacyLine(t, snaps[0].TimelineEntry())}
	other := testSnap(t, 9, devKey)
	tr.snapshots[testRepo+"/"+other.SnapshotID] = snapFile(t, other)
	diverged := []snapshot.TimelineLine{lines[0], signLine(t, devKey, "dev", lines[:1], other.TimelineEntry())}
	cases := []struct {
		name          string
		local, remote []snapshot.TimelineLine
		key           ed25519.PublicKey
		want          continued // taken: the lines accepted
	}{
		{"nothing new", lines, lines[:2], key, continued{2, 2, false, ""}},
		{"extends ours", lines[:1], lines, key, continued{1, 3, false, ""}},
		{"fork", diverged, lines, key, continued{1, 1, true, ""}},
		{"no key", nil, lines, nil, continued{0, 0, false, UnknownKey}},
		{"legacy line nobody vouches for", nil, legacy, key, continued{0, 0, false, UnsignedTimelineEntry}},
		{"line moved", nil, []snapshot.TimelineLine{lines[1]}, key, continued{0, 0, false, MisplacedTimelineEntry}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ContinueTimeline(TimelineCompare{Repo: testRepo, Device: "dev", Key: c.key, Signer: KeySigner(tr.keys),
				Local: c.local, Remote: c.remote, Snapshot: load})
			if err != nil {
				t.Fatal(err)
			}
			have := continued{shared: got.Shared, taken: got.Accepted, fork: got.Fork}
			if got.Failure != nil {
				have.reason = got.Failure.Reason
			}
			if have != c.want {
				t.Fatalf("got %+v (%+v); want %+v", have, got, c.want)
			}
		})
	}
}

// --- packages ---

func testPkg(t *testing.T, name, version string) []byte {
	t.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	task := "task"
	p := &ctxpkg.Package{
		Manifest: ctxpkg.Manifest{SchemaVersion: 1, Name: name, Version: version, Description: "d", CreatedAt: t0,
			Layers: []ctxpkg.Layer{ctxpkg.LayerSession}, Provenance: ctxpkg.Provenance{Tool: "test", ToolVersion: "1"}},
		Content: ctxpkg.Content{Session: &ctxpkg.SessionLayer{TaskDescription: &task, ExportedAt: t0}},
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPackageReasons: every package reason, from CheckPackage with a
// placer like gitstore's (names holding ".." cannot be stored).
func TestPackageReasons(t *testing.T) {
	place := func(name, version string) (string, error) {
		if strings.Contains(name, "..") {
			return "", errors.New("unsafe name")
		}
		return "packages/" + name + "/" + version + ".ctxpkg", nil
	}
	good := testPkg(t, "auth", "1.0.0")
	tooBig := append(bytes.Repeat([]byte(" "), ctxpkg.MaxFileSize), good...)
	cases := []struct {
		name   string
		raw    []byte
		at     string
		place  PackagePlace
		reason Reason
	}{
		{"valid", good, "packages/auth/1.0.0.ctxpkg", place, ""},
		{"garbage", []byte("{"), "packages/auth/1.0.0.ctxpkg", place, MalformedPackage},
		{"too large", tooBig, "packages/auth/1.0.0.ctxpkg", place, TooLarge},
		{"content edited", bytes.Replace(good, []byte(`"task"`), []byte(`"tusk"`), 1), "packages/auth/1.0.0.ctxpkg", place, BadPackage},
		{"name not storable", good, "packages/auth/1.0.0.ctxpkg", func(string, string) (string, error) { return "", errors.New("no") }, UnsafeName},
		{"moved", good, "packages/auth/2.0.0.ctxpkg", place, PathMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, reason, detail := CheckPackage(c.raw, c.at, c.place)
			if reason != c.reason || (reason == "") != (detail == "") {
				t.Fatalf("got %q (%s), want %q", reason, detail, c.reason)
			}
		})
	}
}

// TestReasonsDocumented: docs/FORMAT.md §10a lists exactly the reasons of
// this package, in the order of Reasons, and no two constants share a
// string.
func TestReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n### 10a. Rejection reasons")
	if !ok {
		t.Fatal("docs/FORMAT.md has no section 10a")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `chain\\.([A-Za-z]+)` \\| (.*) \\|$")
	docs := constDocs(t)
	var listed []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
		want := m[2] + ": " + strings.ReplaceAll(m[3], "\\|", "|")
		if got := docs[m[2]]; got != want {
			t.Errorf("chain.%s is documented\n%q\nin chain/reasons.go, and\n%q\nin docs/FORMAT.md §10a", m[2], got, want)
		}
	}
	var want []string
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("reason %q twice", r)
		}
		seen[r] = true
		want = append(want, string(r))
	}
	if strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Fatalf("docs/FORMAT.md §10a lists\n%v\nchain.Reasons() is\n%v", listed, want)
	}
}

// constDocs returns the doc comment of each constant of reasons.go, on one
// line.
func constDocs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "reasons.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			out[vs.Names[0].Name] = strings.Join(strings.Fields(vs.Doc.Text()), " ")
		}
	}
	return out
}
