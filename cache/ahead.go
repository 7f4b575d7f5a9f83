package cache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// Settled gives the records of one device's chain in one repository that a
// pull verified and took (Preverified, by hash), waiting until the pull has
// decided that chain. An error means it never will (the pull took none of
// it, or stopped; or ctx ended): a build ahead then stops.
type Settled func(ctx context.Context, repoID, device string) (map[string]Preverified, error)

// errNotSettled: a build ahead was told a chain's records would not come.
var errNotSettled = errors.New("a chain of the build ahead was not settled")

// Ahead is the cache of a commit the memory branch does not point at yet,
// being built beside the cache file (BuildAhead).
type Ahead struct {
	cancel  context.CancelFunc
	install chan bool
	done    chan struct{}
	once    sync.Once
	err     error
}

// BuildAhead starts building, on a goroutine of its own, the cache of
// commit tip while a pull still verifies and merges it: the first pull of
// a clone that has neither a branch nor a cache, which would otherwise
// build the whole cache after its merge. settled hands the build each
// chain's records as the pull decides them, so their signatures are
// checked once, and the build writes one chain while the pull verifies the
// next. The new file replaces nothing until Finish says the branch points
// at tip; else it is removed and the next open of the cache builds one as
// usual. BuildAhead returns nil when there is a cache file already (a
// rebuild would drop what it holds, such as the quarantine of earlier
// pulls) or its directory cannot be written.
func (m *Mirror) BuildAhead(ctx context.Context, tip plumbing.Hash, settled Settled) *Ahead {
	if m.unwritable || tip.IsZero() {
		return nil
	}
	if _, err := os.Stat(Path(m.Dir)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	m.notice("building the cache of the memory branch")
	// A mirror of its own: nothing it counts or learns is this one's.
	am := &Mirror{Store: m.Store, Dir: m.Dir, Notice: m.Notice, OwnDevice: m.OwnDevice, OwnChainHint: m.OwnChainHint, settled: settled}
	ctx, cancel := context.WithCancel(ctx)
	a := &Ahead{cancel: cancel, install: make(chan bool, 1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.err = rebuildGated(ctx, am.Dir, am.fillAt(ctx, tip), func() bool {
			select {
			case ok := <-a.install:
				return ok
			case <-ctx.Done():
				return false
			}
		})
	}()
	return a
}

// Finish tells the build whether the branch points at its tip now, waits
// for it and reports whether its file is in place as the cache. A build
// told false is stopped as soon as it can be. Finish may be called more
// than once (and on nil); only the first call's answer counts.
func (a *Ahead) Finish(atTip bool) bool {
	if a == nil {
		return false
	}
	a.once.Do(func() {
		if !atTip {
			a.cancel()
		}
		a.install <- atTip
		<-a.done
		a.cancel()
		if a.err == nil && !atTip {
			a.err = errNotInstalled
		}
	})
	return a.err == nil
}
