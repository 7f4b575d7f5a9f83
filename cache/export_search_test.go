package cache

import "context"

// SearchAllForTest runs Search's full query (no fast path).
func (d *DB) SearchAllForTest(ctx context.Context, repoID, query string, limit int, open, close string) ([]Hit, error) {
	return d.searchAll(ctx, repoID, ftsQuery(query), limit, open, close)
}

// SearchTopAnswers reports whether Search's fast path answers the query
// alone (true) or hands it to the full query (false).
func (d *DB) SearchTopAnswers(ctx context.Context, repoID, query string, limit int) (bool, error) {
	_, ok, err := d.searchTop(ctx, repoID, ftsQuery(query), limit, "[", "]")
	return ok, err
}
