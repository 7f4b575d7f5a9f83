package cache_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
)

// TestSearchFastPathSameAsFull (issue 18, "Fast start"): Search ranks the
// matches in FTS5 alone and joins only the best 2×limit; whatever it
// returns must be exactly what the full query (every match joined,
// filtered by repository, ties broken by ts) returns: hashes in order,
// ranks and snippets. The fixture makes every way the shortcut could go
// wrong happen: equal ranks across the candidates' boundary (identical
// summaries with different ts), another repository's records ranking
// first, fewer matches than the limit, and no match. It also checks that
// both paths are taken, so the comparison covers the fast path.
func TestSearchFastPathSameAsFull(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	var rows []cache.Row
	n := 0
	add := func(summary, repo string, count int) {
		for i := 0; i < count; i++ {
			n++
			c := cp(fakeHash(fmt.Sprintf("%02x", n%256), n), "dev", int64(1000+n*7%97))
			c.Summary = summary
			rows = append(rows, cache.Row{CP: c, RepoID: repo, Seq: n})
		}
	}
	// Distinct ranks: "alpha" repeated k times among filler words.
	for k := 1; k <= 30; k++ {
		add(strings.Repeat("alpha ", k)+strings.Repeat("filler ", 40-k), "repo1", 1)
	}
	// Ties: 60 identical summaries (equal bm25), different ts.
	add("beta gamma beta", "repo1", 60)
	// Another repository's records outrank repo1's for "delta".
	add("delta delta delta delta", "repo2", 50)
	add("delta words here", "repo1", 5)
	add("epsilon", "repo1", 3)
	db := build(t, dir, rows...)

	fast, full := 0, 0
	for _, q := range []string{"alpha", "beta", "gamma beta", "delta", "epsilon", "zeta", "filler"} {
		for _, limit := range []int{1, 2, 5, 20, 25, 100} {
			got, err := db.Search(ctx, "repo1", q, limit, "[", "]")
			if err != nil {
				t.Fatal(err)
			}
			want, err := db.SearchAllForTest(ctx, "repo1", q, limit, "[", "]")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%q limit %d: %d hits, the full query %d", q, limit, len(got), len(want))
			}
			for i := range got {
				if got[i].Hash != want[i].Hash || got[i].Rank != want[i].Rank || got[i].Snippet != want[i].Snippet || got[i].RepoID != "repo1" {
					t.Fatalf("%q limit %d, hit %d: %s %v %q, the full query %s %v %q", q, limit, i,
						got[i].Hash[:8], got[i].Rank, got[i].Snippet, want[i].Hash[:8], want[i].Rank, want[i].Snippet)
				}
			}
			ok, err := db.SearchTopAnswers(ctx, "repo1", q, limit)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				fast++
			} else {
				full++
			}
		}
	}
	if fast == 0 || full == 0 {
		t.Errorf("the fast path answered %d queries and handed %d to the full query: both must be exercised", fast, full)
	}
}
