package sync

import (
	"context"
	"errors"
	gosync "sync"

	"github.com/git-ctx/git-ctx/cache"
)

// errChainRefused: the plan took none of a chain, or never decided it.
var errChainRefused = errors.New("the pull did not take this chain")

// verdicts hands a cache built ahead of a first pull's merge
// (cache.Mirror.BuildAhead) each chain's records as soon as the plan has
// verified and taken them (planChains), so that the cache writes one chain
// while the plan verifies the next.
type verdicts struct {
	mu     gosync.Mutex
	chains map[chainKey]*verdict
	closed bool
}

// verdict is one chain's: done is closed once accepted and err are set.
type verdict struct {
	done     chan struct{}
	accepted map[string]cache.Preverified
	err      error
}

func newVerdicts() *verdicts {
	return &verdicts{chains: map[chainKey]*verdict{}}
}

// entry returns the verdict of k, made if no one asked for it yet; nil
// once the verdicts are closed and k was never asked for or settled.
func (vs *verdicts) entry(k chainKey) *verdict {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.entryLocked(k)
}

func (vs *verdicts) entryLocked(k chainKey) *verdict {
	v := vs.chains[k]
	if v == nil && !vs.closed {
		v = &verdict{done: make(chan struct{})}
		vs.chains[k] = v
	}
	return v
}

// settle records the outcome of one chain's merge: its records for the
// cache when the whole chain was taken, else errChainRefused.
func (vs *verdicts) settle(k chainKey, o *chainOutcome) {
	if vs == nil {
		return
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	v := vs.entryLocked(k)
	if v == nil || isClosed(v.done) {
		return
	}
	if o.err != nil || len(o.rejected) > 0 || o.result.Rejected {
		v.err = errChainRefused
	} else {
		v.accepted = o.accepted
	}
	close(v.done)
}

// isClosed reports whether done is closed.
func isClosed(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// close ends the plan: a chain not settled by now never will be.
func (vs *verdicts) close() {
	if vs == nil {
		return
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.closed = true
	for _, v := range vs.chains {
		if !isClosed(v.done) {
			v.err = errChainRefused
			close(v.done)
		}
	}
}

// wait is a cache.Settled: the records of the chain of device in repoID,
// once the plan has settled it (or ctx ends).
func (vs *verdicts) wait(ctx context.Context, repoID, device string) (map[string]cache.Preverified, error) {
	v := vs.entry(chainKey{repo: repoID, device: device})
	if v == nil {
		return nil, errChainRefused
	}
	select {
	case <-v.done:
		return v.accepted, v.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
