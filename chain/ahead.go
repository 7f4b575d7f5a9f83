package chain

import (
	"sync"
	"sync/atomic"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// aheadBatch is how many records one batch of the look-ahead checks: two
// batches at most are held (the one being walked and the next), so a
// chain of any length is verified in bounded memory.
var aheadBatch = 256

// checked is Input.record's verdict on one entry.
type checked struct {
	cp     *checkpoint.Checkpoint
	rule   checkpoint.Rule
	reason Reason
	detail string
}

// ahead runs Input.record on the entries of a chain before Verify's
// in-order walk reaches them: batch by batch, each batch on in.Workers
// goroutines, the next batch while the walk is in the current one. The
// walk reads the verdicts in chain order and decides everything else
// (linkage, duplicates, the binding, Verified) itself, so its outcome is
// the sequential one's; records past a chain's first failure may have been
// checked for nothing. With Workers ≤ 1 there is no look-ahead.
type ahead struct {
	in      *Input
	entries []checkpoint.ChainEntry
	stop    atomic.Bool // the walk returned: abandon the batches
	cur     []checked
	curLo   int
	next    chan []checked // the batch from nextLo on (nil: none started)
	nextLo  int
}

func newAhead(in *Input) *ahead {
	a := &ahead{in: in, entries: in.Entries}
	if in.Workers > 1 {
		a.start(0)
	}
	return a
}

// start checks the batch of entries from lo on, in the background.
func (a *ahead) start(lo int) {
	hi := min(lo+aheadBatch, len(a.entries))
	ch := make(chan []checked, 1)
	a.next, a.nextLo = ch, lo
	go func() {
		out := make([]checked, hi-lo)
		var wg sync.WaitGroup
		var n atomic.Int64
		for range min(a.in.Workers, hi-lo) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					j := int(n.Add(1) - 1)
					if j >= len(out) || a.stop.Load() {
						return
					}
					out[j] = a.in.check(a.entries[lo+j])
				}
			}()
		}
		wg.Wait()
		ch <- out
	}()
}

// get returns the verdict on entry i; the walk asks for 0, 1, 2, … in order.
func (a *ahead) get(i int) checked {
	if a.in.Workers <= 1 {
		return a.in.check(a.entries[i])
	}
	if i >= a.curLo+len(a.cur) {
		a.cur, a.curLo = <-a.next, a.nextLo
		a.next = nil
		if end := a.curLo + len(a.cur); end < len(a.entries) {
			a.start(end)
		}
	}
	return a.cur[i-a.curLo]
}

// close abandons the batches still being checked.
func (a *ahead) close() { a.stop.Store(true) }

func (in *Input) check(e checkpoint.ChainEntry) checked {
	cp, rule, r, detail := in.record(e)
	return checked{cp: cp, rule: rule, reason: r, detail: detail}
}
