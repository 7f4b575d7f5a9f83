package recall

import (
	"context"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// scanCap bounds how many records a filtered list reads looking for
// matches (the newest first).
const scanCap = 20000

// recordFilter selects records beyond what the cache query does.
type recordFilter struct {
	branch     string
	commit     string // a full commit id or a prefix: the record's "Commit: " trailer
	unverified bool   // include records that failed verification
	files      map[string]bool
	scan       int // how many records to read at most (0: scanCap)
}

func (f recordFilter) keep(e *cache.Entry) bool {
	switch {
	case !e.Verified && !f.unverified:
		return false
	case f.branch != "" && e.Branch != f.branch:
		return false
	case f.commit != "" && !hasCommitTrailer(e.Summary, f.commit):
		return false
	case f.files != nil && !touchesAny(e.FilesTouched, f.files):
		return false
	}
	return true
}

// hasCommitTrailer: summary has a "Commit: <id>" line whose id starts
// with commit (post-commit records end with one).
func hasCommitTrailer(summary, commit string) bool {
	for _, l := range strings.Split(summary, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(l), "Commit: "); ok && strings.HasPrefix(id, commit) {
			return true
		}
	}
	return false
}

func touchesAny(files []string, set map[string]bool) bool {
	for _, f := range files {
		if set[f] {
			return true
		}
	}
	return false
}

// recentEntries returns up to n records of the cache query q (newest
// first) that f keeps, reading more of the log while too few matched.
func recentEntries(ctx context.Context, w *workspace.Workspace, q checkpoints.Filter, f recordFilter, n int) ([]*cache.Entry, error) {
	limit := scanCap
	if f.scan > 0 {
		limit = f.scan
	}
	batch := min(max(n*4, 100), limit)
	for {
		q.Limit = batch
		all, err := checkpoints.Log(ctx, w, q)
		if err != nil {
			return nil, err
		}
		var out []*cache.Entry
		for _, e := range all {
			if f.keep(e) {
				out = append(out, e)
				if len(out) == n {
					return out, nil
				}
			}
		}
		if len(all) < batch || batch >= limit {
			return out, nil
		}
		batch = min(batch*4, limit)
	}
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
