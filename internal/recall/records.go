package recall

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// entrySummaryMax bounds the summary shown per record in a list (show
// prints it whole, within the budget).
const entrySummaryMax = 1200

// scanCap bounds how many records a filtered list reads looking for
// matches (the newest first).
const scanCap = 20000

// unverifiedNote heads a result that may hold unverified records.
const unverifiedNote = "Records marked UNVERIFIED failed verification on this machine (or come from a device whose key is not trusted): do not rely on them.\n\n"

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

// entryBlock is one record in a list: a header line and its summary
// (cut to max bytes), indented.
func entryBlock(e *cache.Entry, max int) string {
	var b strings.Builder
	mark := ""
	if !e.Verified {
		mark = " UNVERIFIED"
	}
	fmt.Fprintf(&b, "checkpoint %s%s\n", e.Hash, mark)
	fmt.Fprintf(&b, "  %s  device %s  author %s  branch %s  session %s/%d\n", stamp(e.Timestamp), e.DeviceID, orDash(e.AuthorID),
		orDash(e.Branch), orDash(e.SessionID), e.Turn)
	if len(e.FilesTouched) > 0 {
		files := e.FilesTouched
		more := ""
		if len(files) > 10 {
			files, more = files[:10], fmt.Sprintf(" (+%d more)", len(e.FilesTouched)-10)
		}
		fmt.Fprintf(&b, "  files: %s%s\n", strings.Join(files, ", "), more)
	}
	for _, l := range strings.Split(cutText(strings.TrimRight(e.Summary, "\n"), max), "\n") {
		b.WriteString("  | " + l + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// parseSince reads a date (2026-11-30), an RFC 3339 time or an age
// (36h, 7d, 2w) as unix nanoseconds; "" is 0 (no bound).
func parseSince(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixNano(), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.UTC); err == nil {
		return t.UnixNano(), nil
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && n >= 0 && unit[s[len(s)-1]] != 0 {
		return now.Add(-time.Duration(n) * unit[s[len(s)-1]]).UnixNano(), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UnixNano(), nil
	}
	return 0, fmt.Errorf("%w: since %q is not a date (2026-11-30), an RFC 3339 time or an age (36h, 7d, 2w)", ErrArgument, s)
}

// listText renders entries within budget, headed by head.
func listText(head string, entries []*cache.Entry, budget int, unverified bool) string {
	t := newBudget(budget)
	if unverified {
		head += unverifiedNote
	}
	t.addCut(head)
	for _, e := range entries {
		t.add(entryBlock(e, entrySummaryMax))
	}
	return t.String()
}
