package checkpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// Filter selects log entries; empty fields do not filter.
type Filter struct {
	Device     string
	Session    string
	Author     string
	Since      int64 // unix nanoseconds
	Until      int64
	Unverified bool
	Limit      int // 0 = all
}

// Log returns this repository's checkpoints from the cache, newest first
// (ties broken by device, then chain position: a stable order).
func Log(ctx context.Context, w *workspace.Workspace, f Filter) ([]*cache.Entry, error) {
	ids, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, err
	}
	db, err := readCache(ctx, w)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Log(ctx, cache.Query{RepoID: ids[0], Also: ids[1:], Device: f.Device, Session: f.Session, Author: f.Author,
		Since: f.Since, Until: f.Until, Unverified: f.Unverified, Limit: f.Limit})
}

// Quarantine lists the records of this repository that failed verification.
func Quarantine(ctx context.Context, w *workspace.Workspace) ([]cache.Quarantined, error) {
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	db, err := w.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Quarantine(ctx, repoID)
}

// Show finds the checkpoint whose hash starts with prefix in this
// repository and returns it with its file bytes from the branch. Several
// matches give workspace.ErrAmbiguous listing them.
func Show(ctx context.Context, w *workspace.Workspace, prefix string) (*cache.Entry, []byte, error) {
	ids, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, nil, err
	}
	prefix = strings.ToLower(prefix)
	if prefix == "" || len(prefix) > 64 || strings.Trim(prefix, "0123456789abcdef") != "" {
		return nil, nil, fmt.Errorf("%w: %q is not a hash prefix", workspace.ErrInput, prefix)
	}
	db, err := readCache(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	var matches []string
	for _, id := range ids {
		found, err := db.Resolve(ctx, id, prefix)
		if err != nil {
			return nil, nil, err
		}
		matches = append(matches, found...)
	}
	switch len(matches) {
	case 0:
		return nil, nil, fmt.Errorf("%w: no checkpoint %s in this repository", workspace.ErrNotFound, prefix)
	case 1:
	default:
		if len(matches) > 10 {
			matches = append(matches[:10], "…")
		}
		return nil, nil, fmt.Errorf("%w: %s matches %s", workspace.ErrAmbiguous, prefix, strings.Join(matches, ", "))
	}
	e, err := db.Get(ctx, matches[0])
	if err != nil || e == nil {
		return nil, nil, fmt.Errorf("read checkpoint %s: %v", matches[0], err)
	}
	v, err := w.View()
	if err != nil {
		return nil, nil, err
	}
	raw, err := v.CheckpointFile(e.RepoID, e.Hash)
	if err != nil {
		return nil, nil, err
	}
	return e, raw, nil
}

// ShownFile is what `show --json` prints of the record e read from raw:
// the file's own bytes when its hash covers every member. Otherwise (ghyll's
// rule) the record is re-encoded without its unknown members and with an
// "unauthenticated" member naming "emb", so that nothing outside the hash
// passes for part of the signed record.
func ShownFile(e *cache.Entry, raw []byte) ([]byte, error) {
	uncovered := e.Unauthenticated()
	if uncovered == nil {
		return raw, nil
	}
	cp, err := checkpoint.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", e.Hash, err)
	}
	cp.Extra = nil
	compact, err := cp.MarshalCompact()
	if err != nil {
		return nil, err
	}
	mark, err := json.Marshal(uncovered)
	if err != nil {
		return nil, err
	}
	compact = append(compact[:len(compact)-1], `,"unauthenticated":`...)
	compact = append(append(compact, mark...), '}')
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Search runs a full-text query over this repository's checkpoints.
func Search(ctx context.Context, w *workspace.Workspace, query string, limit int, open, close string) ([]cache.Hit, error) {
	ids, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: empty search query", workspace.ErrInput)
	}
	window := 0
	if v := w.Repo.Config("ctx.searchWindow"); v != "" {
		if window, err = strconv.Atoi(v); err != nil || window < 0 {
			return nil, fault.Wrap(fault.Config, fmt.Errorf("git config ctx.searchWindow %q is not a number of checkpoints (0 ranks every match)", v))
		}
	}
	db, err := readCache(ctx, w)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SearchWindow = window
	var hits []cache.Hit
	for _, id := range ids {
		h, err := db.Search(ctx, id, query, limit, open, close)
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	if len(ids) > 1 {
		// One FTS index, so bm25 ranks of the ids compare.
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].Rank < hits[j].Rank })
		if limit <= 0 {
			limit = 20 // the cache's default
		}
		if len(hits) > limit {
			hits = hits[:limit]
		}
	}
	return hits, nil
}

// Similar returns the k checkpoints closest (cosine) to vec, or to the
// embedding of the checkpoint whose hash starts with to when vec is nil.
// Embeddings outside their record's hash (ghyll's rule) are used only with
// unauthenticated, on either side.
func Similar(ctx context.Context, w *workspace.Workspace, to string, vec []float32, k int, unauthenticated bool) ([]cache.Match, error) {
	ids, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, err
	}
	except := ""
	if vec == nil {
		e, _, err := Show(ctx, w, to)
		if err != nil {
			return nil, err
		}
		if len(e.Embedding) == 0 {
			return nil, fmt.Errorf("%w: checkpoint %s has no embedding", workspace.ErrNotFound, e.Hash[:12])
		}
		if len(e.Unauthenticated()) > 0 && !unauthenticated {
			return nil, fmt.Errorf("%w: checkpoint %s has no authenticated embedding (its hash, under %s, does not cover emb; --include-unauthenticated uses it anyway)", workspace.ErrNotFound, e.Hash[:12], e.Rule)
		}
		vec, except = e.Embedding, e.Hash
	}
	db, err := readCache(ctx, w)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out []cache.Match
	var dimErr error // a dimension one directory lacks may be another's
	for _, id := range ids {
		found, err := db.Similar(ctx, id, vec, k, except, unauthenticated)
		if errors.Is(err, cache.ErrQueryEmbedding) && len(ids) > 1 {
			dimErr = err
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if len(out) == 0 && dimErr != nil {
		return nil, dimErr
	}
	if len(ids) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
		if k > 0 && len(out) > k {
			out = out[:k]
		}
	}
	return out, nil
}

// readCache is Cache for commands that read the memory: without a memory
// branch they fail with gitstore.ErrNotInitialized instead of showing an
// empty result.
func readCache(ctx context.Context, w *workspace.Workspace) (*cache.DB, error) {
	tip, err := w.Store.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, gitstore.ErrNotInitialized
	}
	return w.Cache(ctx)
}
