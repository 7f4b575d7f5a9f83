package sync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
)

// TestVerdicts: a chain's records reach a waiter whether it asked before
// or after the plan settled the chain; a chain the plan refused, or never
// settled before it closed, gives errChainRefused; a settle after close
// changes nothing (and does not panic); a cancelled pull releases a waiter.
func TestVerdicts(t *testing.T) {
	taken := func() *chainOutcome {
		return &chainOutcome{accepted: map[string]cache.Preverified{"h1": {}}}
	}
	refused := &chainOutcome{rejected: []Rejection{{Reason: "hash_mismatch"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	vs := newVerdicts()

	vs.settle(chainKey{"r", "early"}, taken())
	if got, err := vs.wait(ctx, "r", "early"); err != nil || len(got) != 1 {
		t.Errorf("settled before the wait: %v %v", got, err)
	}

	type answer struct {
		got map[string]cache.Preverified
		err error
	}
	waitFor := func(dev string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			got, err := vs.wait(ctx, "r", dev)
			ch <- answer{got, err}
		}()
		return ch
	}
	late, bad, never := waitFor("late"), waitFor("bad"), waitFor("never")
	time.Sleep(10 * time.Millisecond) // let them block
	vs.settle(chainKey{"r", "late"}, taken())
	vs.settle(chainKey{"r", "bad"}, refused)
	if a := <-late; a.err != nil || len(a.got) != 1 {
		t.Errorf("settled after the wait: %v %v", a.got, a.err)
	}
	if a := <-bad; !errors.Is(a.err, errChainRefused) {
		t.Errorf("a refused chain: %v %v", a.got, a.err)
	}
	vs.close()
	if a := <-never; !errors.Is(a.err, errChainRefused) {
		t.Errorf("a chain never settled: %v %v", a.got, a.err)
	}
	vs.settle(chainKey{"r", "never"}, taken()) // after close: ignored
	vs.settle(chainKey{"r", "other"}, taken())
	if _, err := vs.wait(ctx, "r", "other"); !errors.Is(err, errChainRefused) {
		t.Errorf("a chain settled after close: %v", err)
	}
	vs.close() // twice: no panic

	vs2 := newVerdicts()
	stuck := make(chan error, 1)
	go func() { _, err := vs2.wait(ctx, "r", "x"); stuck <- err }()
	cancel()
	if err := <-stuck; !errors.Is(err, context.Canceled) {
		t.Errorf("a wait when the pull is cancelled: %v", err)
	}
	var nilVS *verdicts
	nilVS.settle(chainKey{"r", "x"}, taken()) // a plan without verdicts
	nilVS.close()
}
