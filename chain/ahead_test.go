package chain

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// verdictTrace is everything a verification tells its caller: the result
// and the records handed to Verified, in the order they were handed.
type verdictTrace struct {
	res  Result
	seen []string
}

// traced runs VerifyStored on tr with workers, recording Verified's calls
// through a Verified hook on a second run of Verify over the same list.
func traced(t *testing.T, tr *memTree, sessionRoots bool, workers int) verdictTrace {
	t.Helper()
	st, err := VerifyStored(tr, Stored{Repo: testRepo, Device: "dev", Key: tr.keys["dev"], SessionRoots: sessionRoots, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	in := Input{Device: "dev", Repo: testRepo, Key: tr.keys["dev"], Entries: st.List, Load: Records(tr, testRepo),
		SessionRoots: sessionRoots, Workers: workers,
		Verified: func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error {
			seen = append(seen, fmt.Sprintf("%d %s %s", i, cp.Hash, rule))
			return nil
		}}
	res := Verify(in)
	if !reflect.DeepEqual(res, st.Result) {
		t.Fatalf("workers %d: Verify %+v, VerifyStored %+v", workers, res, st.Result)
	}
	return verdictTrace{res: res, seen: seen}
}

// TestWorkersSameVerdict: checking records on several workers ahead of the
// walk (Input.Workers) gives exactly the sequential verdict — the same
// first failure (reason, entry, detail), the same count of verified
// entries, rules and head, and the same records handed to Verified in the
// same order — on chains longer than a few look-ahead batches, tampered at
// the start, in the middle, at a batch boundary and at the end, with more
// than one fault (only the first counts), in both linkage rules.
func TestWorkersSameVerdict(t *testing.T) {
	defer func(b int) { aheadBatch = b }(aheadBatch)
	aheadBatch = 16 // several batches in a short chain
	n := 2*aheadBatch + 40
	linear := []struct {
		name   string
		tamper func(tr *memTree, cps []*checkpoint.Checkpoint)
		reason Reason
		index  int
	}{
		{"valid", func(*memTree, []*checkpoint.Checkpoint) {}, "", -1},
		{"first file missing", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			delete(tr.checkpoints, testRepo+"/"+cps[0].Hash)
		}, MissingCheckpoint, 0},
		{"content edited in the middle", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			k := testRepo + "/" + cps[40].Hash
			tr.checkpoints[k] = bytes.Replace(tr.checkpoints[k], []byte(`"s40"`), []byte(`"s999"`), 1)
		}, HashMismatch, 40},
		{"signature by another key at a batch boundary", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			resign(tr, cps[aheadBatch])
		}, BadSignature, aheadBatch},
		{"entry dropped after the boundary", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			e := entries(cps)
			tr.setChain(append(e[:aheadBatch+1:aheadBatch+1], e[aheadBatch+2:]...))
		}, BrokenChain, aheadBatch + 1},
		{"two faults: the earlier one counts", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			resign(tr, cps[60])
			tr.checkpoints[testRepo+"/"+cps[20].Hash] = []byte("{")
		}, Malformed, 20},
		{"line edited at the end", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			e := entries(cps)
			e[n-1].TS++
			tr.setChain(e)
		}, EntryMismatch, n - 1},
		{"duplicate at the end", func(tr *memTree, cps []*checkpoint.Checkpoint) {
			e := entries(cps)
			tr.setChain(append(e, checkpoint.ChainEntry{Hash: e[5].Hash, Parent: e[n-1].Hash, TS: e[5].TS}))
		}, Duplicate, n},
	}
	for _, c := range linear {
		t.Run("ctx-v1/"+c.name, func(t *testing.T) {
			tr, cps := chainWorld(t, n, nil)
			c.tamper(tr, cps)
			sameVerdicts(t, tr, false, c.reason, c.index)
		})
	}

	// ghyll-v1: interleaved sessions, each rooted at the zero hash, with
	// compaction records (no session) after some records.
	var lines []sessLine
	last := map[string]string{}
	for i := 0; len(lines) < n; i++ {
		s := fmt.Sprint("s", i%5)
		l := sessLine{label: fmt.Sprint("r", i), session: s, parent: last[s]}
		if i > 0 && (i%9 == 0 || lines[len(lines)-1].session == "") {
			l.parent = lines[len(lines)-1].label // the previous entry
		}
		lines = append(lines, l)
		last[s] = l.label
		if i%31 == 30 {
			// A compaction record, continued by the next entry.
			lines = append(lines, sessLine{label: fmt.Sprint("c", i), parent: l.label})
		}
	}
	sessions := []struct {
		name   string
		tamper func(lines []sessLine) []sessLine
		reason Reason
		index  int
	}{
		{"valid", func(l []sessLine) []sessLine { return l }, "", -1},
		{"second root of a session in the middle", func(l []sessLine) []sessLine {
			l[40].parent = ""
			return l
		}, SessionFork, 40},
		{"parent outside the chain after a boundary", func(l []sessLine) []sessLine {
			l[aheadBatch+3].parent = "?"
			return l
		}, BrokenChain, aheadBatch + 3},
	}
	for _, c := range sessions {
		t.Run("ghyll-v1/"+c.name, func(t *testing.T) {
			tr, _ := sessChain(t, c.tamper(append([]sessLine(nil), lines...)))
			sameVerdicts(t, tr, true, c.reason, c.index)
		})
	}
}

// resign replaces cp's file with one signed by another key.
func resign(tr *memTree, cp *checkpoint.Checkpoint) {
	c := *cp
	c.Seal(otherKey)
	b, _ := c.MarshalFile()
	tr.checkpoints[testRepo+"/"+cp.Hash] = b
}

// sameVerdicts checks that every number of workers gives the sequential
// verdict, which is reason at index ("" and -1: all verified).
func sameVerdicts(t *testing.T, tr *memTree, sessionRoots bool, reason Reason, index int) {
	t.Helper()
	want := traced(t, tr, sessionRoots, 1)
	got := sessVerdict{"", -1, want.res.Verified}
	if f := want.res.Failure; f != nil {
		got = sessVerdict{f.Reason, f.Index, want.res.Verified}
	}
	if got.reason != reason || got.index != index {
		t.Fatalf("sequential verdict %v, want %q at %d", got, reason, index)
	}
	if len(want.seen) != want.res.Verified {
		t.Fatalf("Verified called %d times for %d verified", len(want.seen), want.res.Verified)
	}
	for _, w := range []int{2, 3, 8} {
		if g := traced(t, tr, sessionRoots, w); !reflect.DeepEqual(g, want) {
			t.Fatalf("workers %d: %+v / %d calls, sequential %+v / %d calls", w, g.res.Failure, len(g.seen), want.res.Failure, len(want.seen))
		}
	}
	// The cache's path: VerifyNew from a known prefix, on workers.
	if have := index / 2; have > 0 {
		list, _, _ := ReadChain(tr, testRepo, "dev")
		var first IncrementResult
		for _, w := range []int{1, 2, 4} {
			in := Increment{Repo: testRepo, Device: "dev", Have: have, LastHash: list[have-1].Hash, SessionRoots: sessionRoots, Workers: w}
			res, err := VerifyNew(tr, in)
			if err != nil || res.Failure == nil {
				t.Fatalf("VerifyNew from %d on %d workers: %+v %v", have, w, res.Failure, err)
			}
			if w == 1 {
				first = res
			} else if !reflect.DeepEqual(res, first) {
				t.Fatalf("VerifyNew from %d on %d workers: %+v, on one %+v", have, w, res.Failure, first.Failure)
			}
		}
	}
}
