package gitstore

import (
	"fmt"
	"runtime"
	gosync "sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// serialCheckpointsWalk makes gatherCheckpointsDir walk on the calling
// goroutine alone, as it did before it had workers (tests compare the two).
var serialCheckpointsWalk = false

// walkAhead bounds how many entries of a checkpoints directory the workers
// of gatherCheckpointsDir run ahead of the one merged last, which bounds
// the results held at once.
const walkAhead = 16

// walkPart is what the walk below one entry of a checkpoints directory
// found, held until it is merged in the entries' order.
type walkPart struct {
	problems []Problem
	bad      []string
	files    []walkFile
	err      error
}

type walkFile struct {
	hash string
	blob plumbing.Hash
}

// gatherCheckpointsDir is unsafeAndCheckpoints over the checkpoints
// directory tree at p (repos/<repoID>/checkpoints) into w, with the same
// problems, bad paths and files in the same order, and the same error (the
// first in the walk's order): its fan-out directories are walked on
// GOMAXPROCS workers, each with its own treeReader (git packs each
// directory's trees together, in the walk's order), while this goroutine
// merges their results in the order of the entries. The walk was serial
// before the chains' workers started: ~11% of verify's CPU with one core
// idle.
func (v *View) gatherCheckpointsDir(tree plumbing.Hash, p, repoID string, w *checkpointWalk, problem func(string, string, ...any)) error {
	found := func(_, hash string, blob plumbing.Hash) { w.files[hash] = blob }
	workers := runtime.GOMAXPROCS(0)
	if serialCheckpointsWalk || workers < 2 {
		return v.unsafeAndCheckpoints(tree, p, p, repoID, 0, true, found, &w.bad, problem, nil)
	}
	t, err := v.readWalkedTree(tree, p, problem, nil)
	if err != nil {
		return err
	}
	entries := t.Entries
	sc := walkSchedule{parts: map[int]*walkPart{}, n: len(entries)}
	sc.cond = gosync.NewCond(&sc.mu)
	var wg gosync.WaitGroup
	for range min(workers, len(entries)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &treeReader{}
			defer func() { v.s.treeWindowReads.Add(int64(tr.reads)) }()
			for {
				i, ok := sc.claim()
				if !ok {
					return
				}
				part := &walkPart{}
				keep := func(hp, format string, args ...any) {
					part.problems = append(part.problems, newProblem(hp, format, args...))
				}
				keepFile := func(_, hash string, blob plumbing.Hash) {
					part.files = append(part.files, walkFile{hash, blob})
				}
				part.err = v.unsafeAndCheckpointsEntry(entries[i], p, p, repoID, 0, true, keepFile, &part.bad, keep, tr)
				sc.done(i, part)
			}
		}()
	}
	defer wg.Wait()
	for i := range entries {
		part := sc.take(i)
		for _, pr := range part.problems {
			problem(pr.Path, "%s", pr.Reason)
		}
		w.bad = append(w.bad, part.bad...)
		for _, f := range part.files {
			w.files[f.hash] = f.blob
		}
		if part.err != nil {
			sc.halt()
			return part.err
		}
	}
	return nil
}

// newProblem is the Problem VerifyFor's problem function records.
func newProblem(p, format string, args ...any) Problem {
	return Problem{Path: p, Reason: fmt.Sprintf(format, args...)}
}

// walkSchedule hands gatherCheckpointsDir's workers the entries in order,
// at most walkAhead past the next one to merge, and its merger their parts.
type walkSchedule struct {
	mu      gosync.Mutex
	cond    *gosync.Cond
	n       int
	next    int // the next entry to claim
	merged  int // the next entry to take
	stopped bool
	parts   map[int]*walkPart
}

// claim returns the next entry to walk; false: none is left (or the walk
// stopped on an error).
func (sc *walkSchedule) claim() (int, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for !sc.stopped && sc.next < sc.n && sc.next >= sc.merged+walkAhead {
		sc.cond.Wait()
	}
	if sc.stopped || sc.next >= sc.n {
		return 0, false
	}
	i := sc.next
	sc.next++
	return i, true
}

// done hands over entry i's part.
func (sc *walkSchedule) done(i int, part *walkPart) {
	sc.mu.Lock()
	sc.parts[i] = part
	if part.err != nil {
		sc.stopped = true // no entry after i is needed
	}
	sc.cond.Broadcast()
	sc.mu.Unlock()
}

// take waits for entry i's part (every entry before it taken).
func (sc *walkSchedule) take(i int) *walkPart {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for sc.parts[i] == nil {
		sc.cond.Wait()
	}
	part := sc.parts[i]
	delete(sc.parts, i)
	sc.merged = i + 1
	sc.cond.Broadcast()
	return part
}

// halt stops the workers claiming entries.
func (sc *walkSchedule) halt() {
	sc.mu.Lock()
	sc.stopped = true
	sc.cond.Broadcast()
	sc.mu.Unlock()
}
