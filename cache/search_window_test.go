package cache_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
)

// TestSearchWindow (issue 18, item 3): Search ranks at most the
// SearchWindow matches the cache indexed last. With no more matches than
// the window its result is exactly the full ranking's (and says nothing
// was cut); with more, it is the full ranking restricted to the window's
// records — the same scores, the same order — and every hit says so; and
// when the window holds fewer than the limit of this repository's
// matches it ranks them all. The oracle is the full query over every
// match, filtered by which records the window holds, which the fixture
// knows from the order it wrote them in.
func TestSearchWindow(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	const window = 10
	cache.SetSearchWindowForTest(t, window)
	var rows []cache.Row
	var order []string // hashes of the records holding "kappa", in write order
	n := 0
	add := func(summary, repo string) {
		n++
		c := cp(fakeHash(fmt.Sprintf("%02x", n%256), n), "dev", int64(1000+n*7%97))
		c.Summary = summary
		rows = append(rows, cache.Row{CP: c, RepoID: repo, Seq: n})
		if strings.Contains(summary, "kappa") {
			order = append(order, c.Hash)
		}
	}
	// The best-ranked records are written first (kappa many times in a
	// short summary), so a window over the last ones leaves them out.
	for k := 8; k >= 1; k-- {
		add(strings.Repeat("kappa ", k)+"filler", "repo1")
	}
	for i := 0; i < 20; i++ {
		add(fmt.Sprintf("kappa lambda %s", strings.Repeat("filler ", 1+i%5)), "repo1")
	}
	// "mu": few matches, fewer than the window.
	for i := 0; i < 6; i++ {
		add(strings.Repeat("mu ", 1+i%3)+"filler", "repo1")
	}
	// "nu": another repository's records fill the window.
	for i := 0; i < 5; i++ {
		add("nu filler", "repo1")
	}
	for i := 0; i < 2*window; i++ {
		add("nu nu filler", "repo2")
	}
	db := build(t, dir, rows...)

	inWindow := map[string]bool{}
	for _, h := range order[len(order)-window:] {
		inWindow[h] = true
	}
	for _, limit := range []int{1, 3, 5} {
		// More matches than the window: the full ranking restricted to it.
		got, err := db.Search(ctx, "repo1", "kappa", limit, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		full, err := db.SearchAllForTest(ctx, "repo1", "kappa", 1000, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		var want []cache.Hit
		for _, h := range full {
			if inWindow[h.Hash] && len(want) < limit {
				want = append(want, h)
			}
		}
		sameHits(t, fmt.Sprintf("kappa, limit %d", limit), got, want, window)
		if got[0].Hash == full[0].Hash {
			t.Fatalf("the fixture's best match %s is in the window: the cut is not exercised", full[0].Hash[:8])
		}

		// Fewer matches than the window: exactly the full ranking.
		got, err = db.Search(ctx, "repo1", "mu", limit, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		want, err = db.SearchAllForTest(ctx, "repo1", "mu", limit, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("mu, limit %d", limit), got, want, 0)

		// The window holds only repo2's records: repo1's are all ranked.
		got, err = db.Search(ctx, "repo1", "nu", limit, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		want, err = db.SearchAllForTest(ctx, "repo1", "nu", limit, "[", "]")
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != limit {
			t.Fatalf("nu, limit %d: the full query has %d hits", limit, len(want))
		}
		sameHits(t, fmt.Sprintf("nu, limit %d", limit), got, want, 0)
	}
}

// sameHits fails unless got and want are the same hits in the same order
// with the same ranks and snippets, and every hit of got has Window
// window (the oracle's none).
func sameHits(t *testing.T, what string, got, want []cache.Hit, window int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].Hash != want[i].Hash || got[i].Rank != want[i].Rank || got[i].Snippet != want[i].Snippet {
			t.Fatalf("%s, hit %d: %s %v %q, want %s %v %q", what, i,
				got[i].Hash[:8], got[i].Rank, got[i].Snippet, want[i].Hash[:8], want[i].Rank, want[i].Snippet)
		}
		if got[i].Window != window || want[i].Window != 0 {
			t.Fatalf("%s, hit %d: Window %d, want %d (the oracle's %d)", what, i, got[i].Window, window, want[i].Window)
		}
	}
}
