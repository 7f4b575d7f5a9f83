//go:build !ctx_lean

package recall

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/cache"
)

// entrySummaryMax bounds the summary shown per record in a list (show
// prints it whole, within the budget).
const entrySummaryMax = 1200

// unverifiedNote heads a result that may hold unverified records.
const unverifiedNote = "Records marked UNVERIFIED failed verification on this machine (or come from a device whose key is not trusted): do not rely on them.\n\n"

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
