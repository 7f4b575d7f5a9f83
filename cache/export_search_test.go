package cache

import (
	"context"
	"testing"
)

// SearchAllForTest runs Search's full query over every match (no fast
// path, no window).
func (d *DB) SearchAllForTest(ctx context.Context, repoID, query string, limit int, open, close string) ([]Hit, error) {
	return d.searchAll(ctx, repoID, ftsQuery(query), 0, limit, open, close)
}

// SearchTopAnswers reports whether Search's fast path answers the query
// alone (true) or hands it to the full query (false).
func (d *DB) SearchTopAnswers(ctx context.Context, repoID, query string, limit int) (bool, error) {
	_, ok, err := d.searchTop(ctx, repoID, ftsQuery(query), 0, limit, "[", "]")
	return ok, err
}

// SetSearchWindowForTest makes Search rank at most n matches until the
// test ends.
func SetSearchWindowForTest(t testing.TB, n int) {
	old := searchWindow
	searchWindow = n
	t.Cleanup(func() { searchWindow = old })
}
