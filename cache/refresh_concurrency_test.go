package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestCacheConcurrentAppendAndQuery: one goroutine appends in a loop while
// another runs Log, Search and Status and a third reindexes now and then,
// each through its own Workspace, for a few seconds. Nothing may fail, and the
// cache ends equal to the branch. (The multi-process, 30-second version is
// in integration/cache_test.go.)
func TestCacheConcurrentAppendAndQuery(t *testing.T) {
	const runFor = 5 * time.Second
	w, repo, writer := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	writer.Record(t, workspacetest.Say("steady start"))
	reader := workspacetest.Open(t, repo, w.Home("a"))
	reindexer := workspacetest.Open(t, repo, w.Home("a"))

	deadline := time.Now().Add(runFor)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	// until runs step over and over in its own goroutine, to the deadline
	// and at least minRounds times (so that a slow machine changes how long
	// the test takes, not what it checks), or to step's first error.
	const minRounds = 5
	until := func(step func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < minRounds || time.Now().Before(deadline); i++ {
				if err := step(); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	appended := 1
	until(func() error {
		i := appended - 1 // appended counts "steady start" too
		in := checkpoints.RecordInput{Summary: fmt.Sprintf("steady append %d", i), Files: []string{fmt.Sprintf("f%d.go", i%7)},
			Embedding: []float32{float32(i), 1, 0}}
		if _, err := checkpoints.Record(ctx, writer.Workspace, in); err != nil {
			return fmt.Errorf("append %d: %w", i, err)
		}
		appended++
		return nil
	})
	var reads int
	until(func() error {
		if err := readRound(ctx, reader.Workspace); err != nil {
			return err
		}
		reads++
		return nil
	})
	var reindexes int
	until(func() error {
		if err := reindexer.Reindex(ctx); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		reindexes++
		select {
		case <-time.After(250 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d appends, %d read rounds, %d reindexes", appended, reads, reindexes)
	got := workspacetest.CacheEqualsBranch(t, reader.Workspace, nil)
	if len(got) != appended {
		t.Fatalf("cache holds %d checkpoints, %d were appended", len(got), appended)
	}
	for _, d := range []*workspacetest.Dev{writer, reader, reindexer} {
		for _, n := range d.Notes.Take() {
			if workspacetest.ContainsAny([]string{n}, "rebuilding") {
				t.Errorf("unexpected notice: %q", n)
			}
		}
	}
}

// readRound runs Log, Search, Similar and Status once through ws and says
// what went wrong, if anything.
func readRound(ctx context.Context, ws *workspace.Workspace) error {
	es, err := checkpoints.Log(ctx, ws, checkpoints.Filter{Limit: 5})
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if len(es) == 0 {
		return fmt.Errorf("log: no entries")
	}
	hits, err := checkpoints.Search(ctx, ws, "steady", 3, "[", "]")
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if len(hits) == 0 {
		return fmt.Errorf("search: no hits")
	}
	if _, err := checkpoints.Similar(ctx, ws, "", []float32{1, 1, 0}, 3, false); err != nil {
		return fmt.Errorf("similar: %w", err)
	}
	st, err := checkpoints.ReadStatus(ctx, ws)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if st.Checkpoints < 1 || st.Quarantined != 0 {
		return fmt.Errorf("status: %+v", st)
	}
	return nil
}
