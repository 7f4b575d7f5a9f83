package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Entry is one cached checkpoint with where it sits.
type Entry struct {
	*checkpoint.Checkpoint
	RepoID   string
	Seq      int
	Verified bool
	Imported int64
	// Rule is the hash rule the record matched ("" when none did).
	Rule checkpoint.Rule
}

// Unauthenticated names the members whose values the record's hash does not
// cover ("emb" under ghyll's rule; unknown members are not cached then), so
// that nothing presents them as verified. It is nil for git-ctx's rule and
// for records that matched no rule (those are not verified at all).
func (e *Entry) Unauthenticated() []string {
	if e.Rule == "" || e.Rule.CoversEmbedding() {
		return nil
	}
	return []string{"emb"}
}

const entryCols = `c.hash, c.parent, c.device, c.author, c.ts, c.repo, c.branch, c.session, c.turn, c.model,
	c.summary, c.embedding, c.files, c.tools, c.injections, c.sig, c.verified, c.imported,
	r.repo_id, r.seq, r.v, r.emb_null, r.plan_mode, r.resumed_from, r.extra, r.rule`

type scanner interface{ Scan(dest ...any) error }

func scanEntry(s scanner, extra ...any) (*Entry, error) {
	var (
		cp                Entry
		c                 checkpoint.Checkpoint
		emb               []byte
		files, tools      string
		inj, resumed, ext sql.NullString
		verified          int
		embNull, plan     int
		rule              string
	)
	dest := []any{&c.Hash, &c.ParentHash, &c.DeviceID, &c.AuthorID, &c.Timestamp, &c.RepoRemote, &c.Branch,
		&c.SessionID, &c.Turn, &c.ActiveModel, &c.Summary, &emb, &files, &tools, &inj, &c.Signature,
		&verified, &cp.Imported, &cp.RepoID, &cp.Seq, &c.Version, &embNull, &plan, &resumed, &ext, &rule}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	var err error
	if embNull == 0 {
		if c.Embedding, err = DecodeEmbedding(emb); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal([]byte(files), &c.FilesTouched); err != nil {
		return nil, fmt.Errorf("files of %s: %w", c.Hash, err)
	}
	if err := json.Unmarshal([]byte(tools), &c.ToolsUsed); err != nil {
		return nil, fmt.Errorf("tools of %s: %w", c.Hash, err)
	}
	if inj.Valid {
		if err := json.Unmarshal([]byte(inj.String), &c.InjectionSig); err != nil {
			return nil, err
		}
		if c.InjectionSig == nil {
			c.InjectionSig = []string{}
		}
	}
	c.PlanMode = plan == 1
	if resumed.Valid {
		c.ResumedFrom = &checkpoint.ResumedFrom{}
		if err := json.Unmarshal([]byte(resumed.String), c.ResumedFrom); err != nil {
			return nil, err
		}
	}
	if ext.Valid {
		var pairs [][2]json.RawMessage
		if err := json.Unmarshal([]byte(ext.String), &pairs); err != nil {
			return nil, err
		}
		for _, p := range pairs {
			var k string
			if err := json.Unmarshal(p[0], &k); err != nil {
				return nil, err
			}
			c.Extra = append(c.Extra, checkpoint.Member{Key: k, Value: p[1]})
		}
	}
	cp.Checkpoint, cp.Verified, cp.Rule = &c, verified == 1, checkpoint.Rule(rule)
	return &cp, nil
}

// Query selects log entries. Empty fields do not filter.
type Query struct {
	RepoID string
	// Also names more repository ids whose records are listed too (the
	// ids this repository adopted).
	Also    []string
	Device  string
	Session string
	Author  string
	Since   int64 // ts >= Since (ns) when non-zero
	Until   int64 // ts <= Until (ns) when non-zero
	// Unverified selects only records stored as unverified.
	Unverified bool
	Limit      int
}

// Log returns matching entries newest first; ties are broken by device and
// then chain position, so the order is stable.
func (d *DB) Log(ctx context.Context, q Query) ([]*Entry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if len(q.Also) == 0 {
		add("r.repo_id = ?", q.RepoID)
	} else {
		where = append(where, "r.repo_id IN (?"+strings.Repeat(", ?", len(q.Also))+")")
		args = append(args, q.RepoID)
		for _, id := range q.Also {
			args = append(args, id)
		}
	}
	if q.Device != "" {
		add("r.device = ?", q.Device)
	}
	if q.Session != "" {
		add("c.session = ?", q.Session)
	}
	if q.Author != "" {
		add("c.author = ?", q.Author)
	}
	if q.Since != 0 {
		add("r.ts >= ?", q.Since)
	}
	if q.Until != 0 {
		add("r.ts <= ?", q.Until)
	}
	if q.Unverified {
		add("c.verified = ?", 0)
	}
	sqlq := `SELECT ` + entryCols + ` FROM checkpoints c JOIN records r ON r.hash = c.hash WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY r.ts DESC, r.device ASC, r.seq DESC`
	if q.Limit > 0 {
		sqlq += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := d.db.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, fmt.Errorf("cache log: %w", err)
	}
	defer rows.Close()
	var out []*Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Get returns the entry for a full hash, or nil.
func (d *DB) Get(ctx context.Context, hash string) (*Entry, error) {
	row := d.db.QueryRowContext(ctx, `SELECT `+entryCols+` FROM checkpoints c JOIN records r ON r.hash = c.hash WHERE c.hash = ?`, hash)
	e, err := scanEntry(row)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	return e, err
}

// Resolve returns the hashes in repoID starting with prefix (at most 11).
// The unary + keeps SQLite off the repo_id index, which would read every
// record of the repository and sort them: the hash range of the primary
// key reads only the matches.
func (d *DB) Resolve(ctx context.Context, repoID, prefix string) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT hash FROM records WHERE +repo_id = ? AND hash >= ? AND hash < ? ORDER BY hash LIMIT 11`,
		repoID, prefix, prefix+"g")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Hit is one search result.
type Hit struct {
	*Entry
	Snippet string
	Rank    float64 // bm25: lower is better
	// Window is 0 when every match was ranked. Otherwise more than Window
	// records matched and the hit was ranked among the Window matches the
	// cache indexed last (DB.SearchWindow).
	Window int

	rowid int64 // the candidate's row while Search joins it
}

// searchWindow is the window a DB without its own SearchWindow uses: 0,
// every match is ranked (tests set it).
var searchWindow = 0

// window is the most matches d's Search ranks, 0 for all of them.
func (d *DB) window() int {
	if d.SearchWindow > 0 {
		return d.SearchWindow
	}
	return searchWindow
}

// Search runs a full-text query over summaries, files and tools. Each word
// of query must match (words are quoted, so punctuation is safe); open and
// close surround matched words in the snippet. With d.SearchWindow set and
// more records matching, the hits are ranked within the window and say so
// (Hit.Window), unless the window holds fewer than limit of repoID's
// matches: then every match is ranked.
func (d *DB) Search(ctx context.Context, repoID, query string, limit int, open, close string) ([]Hit, error) {
	if !d.FTS {
		return nil, ErrNoFTS
	}
	match := ftsQuery(query)
	if match == "" {
		return nil, fmt.Errorf("empty search query")
	}
	if limit <= 0 {
		limit = 20
	}
	// above is the rowid the window starts after (0: no cut, every
	// match is ranked).
	above, err := d.searchFloor(ctx, match)
	if err != nil {
		return nil, err
	}
	hits, err := d.searchRanked(ctx, repoID, match, above, limit, open, close)
	if err != nil || above == 0 {
		return hits, err
	}
	if len(hits) < limit {
		// The window holds fewer than limit of repoID's matches (other
		// repositories' records are in the same index): rank them all
		// rather than leave out matches that would have made the list.
		return d.searchRanked(ctx, repoID, match, 0, limit, open, close)
	}
	for i := range hits {
		hits[i].Window = d.window()
	}
	return hits, nil
}

// searchFloor returns 0 when there is no window or at most the window's
// size of records match, else
// the rowid of the newest match left out of the window (FTS5 walks the
// matches from the highest rowid down and stops there).
func (d *DB) searchFloor(ctx context.Context, match string) (int64, error) {
	if d.window() <= 0 {
		return 0, nil
	}
	var above int64
	err := d.db.QueryRowContext(ctx, `SELECT rowid FROM checkpoints_fts WHERE checkpoints_fts MATCH ?
		ORDER BY rowid DESC LIMIT 1 OFFSET ?`, match, d.window()).Scan(&above)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	return above, nil
}

// searchRanked ranks the matches with a rowid above above: the fast path
// when it is provably exact, else the full query.
func (d *DB) searchRanked(ctx context.Context, repoID, match string, above int64, limit int, open, close string) ([]Hit, error) {
	if hits, ok, err := d.searchTop(ctx, repoID, match, above, limit, open, close); err != nil || ok {
		return hits, err
	}
	return d.searchAll(ctx, repoID, match, above, limit, open, close)
}

// searchAll is Search's full query: every match (with a rowid above
// above) joined, given a snippet, filtered and sorted.
func (d *DB) searchAll(ctx context.Context, repoID, match string, above int64, limit int, open, close string) ([]Hit, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+entryCols+`,
		snippet(checkpoints_fts, 0, ?, ?, '…', 16), bm25(checkpoints_fts)
		FROM checkpoints_fts JOIN checkpoints c ON c.rowid = checkpoints_fts.rowid
		JOIN records r ON r.hash = c.hash
		WHERE checkpoints_fts MATCH ? AND checkpoints_fts.rowid > ? AND r.repo_id = ?
		ORDER BY bm25(checkpoints_fts), c.ts DESC LIMIT ?`, open, close, match, above, repoID, limit)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		e, err := scanEntry(rows, &h.Snippet, &h.Rank)
		if err != nil {
			return nil, err
		}
		h.Entry = e
		out = append(out, h)
	}
	return out, rows.Err()
}

// searchTop is Search's fast path: the full query joins every match to its
// checkpoint and record row (to filter by repository and break ties by ts)
// and makes a snippet for each before sorting, which is most of a search's
// cost when a query matches thousands of records. Here FTS5 ranks the
// matches alone (its own ORDER BY rank) and gives the best 2×limit
// candidates a snippet; they are joined, filtered and sorted a prefix at a
// time, the first limit+1 first. ok says the result is exactly the full
// query's: all matches were candidates and joined, or the limit-th hit of
// repoID ranks strictly better than the first candidate not joined (the
// worst candidate once all are), so no match left out can rank with or
// before it. Otherwise the caller runs the full query.
func (d *DB) searchTop(ctx context.Context, repoID, match string, above int64, limit int, open, close string) ([]Hit, bool, error) {
	n := 2 * limit
	cands, err := d.searchCandidates(ctx, match, above, n, open, close)
	if err != nil {
		return nil, false, err
	}
	// Join the candidates in rank order, a prefix at a time (each prefix
	// ends with a whole group of equal ranks): a cold join reads a few
	// pages per row, and in a cache of one repository the first limit
	// candidates are usually the answer.
	var hits []Hit
	for k := 0; k < len(cands); {
		next := min(len(cands), max(2*k, limit+1))
		for next < len(cands) && cands[next].Rank == cands[next-1].Rank {
			next++
		}
		more, err := d.joinCandidates(ctx, repoID, cands[k:next])
		if err != nil {
			return nil, false, err
		}
		hits = append(hits, more...)
		k = next
		// Every match that could rank with or before a hit has been
		// joined once the limit-th hit ranks strictly better than the
		// first candidate left (or the worst candidate, when all are
		// joined: matches beyond the candidates rank no better).
		var bound float64
		switch {
		case k < len(cands):
			bound = cands[k].Rank
		case len(cands) < n:
			return searchOrder(hits, limit), true, nil // every match joined
		default:
			bound = cands[len(cands)-1].Rank
		}
		if len(hits) >= limit {
			hits = searchOrder(hits, limit+len(hits))
			if hits[limit-1].Rank < bound {
				return hits[:limit], true, nil
			}
		}
	}
	return nil, len(cands) == 0, nil
}

// searchCandidates are the n best matches above the rowid above, ranked
// by FTS5 alone, with their snippets (Entry not yet set).
func (d *DB) searchCandidates(ctx context.Context, match string, above int64, n int, open, close string) ([]Hit, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT rowid, rank, snippet(checkpoints_fts, 0, ?, ?, '…', 16)
		FROM checkpoints_fts WHERE checkpoints_fts MATCH ? AND rowid > ? ORDER BY rank LIMIT ?`, open, close, match, above, n)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		var id int64
		if err := rows.Scan(&id, &h.Rank, &h.Snippet); err != nil {
			return nil, err
		}
		h.rowid = id
		out = append(out, h)
	}
	return out, rows.Err()
}

// joinCandidates returns the candidates of cands that are repoID's
// records, with their entries.
func (d *DB) joinCandidates(ctx context.Context, repoID string, cands []Hit) ([]Hit, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(cands)+1)
	args = append(args, repoID)
	for _, c := range cands {
		args = append(args, c.rowid)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT `+entryCols+`, c.rowid FROM checkpoints c JOIN records r ON r.hash = c.hash
		WHERE +r.repo_id = ? AND c.rowid IN (?`+strings.Repeat(", ?", len(cands)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]*Entry, len(cands))
	for rows.Next() {
		var id int64
		e, err := scanEntry(rows, &id)
		if err != nil {
			return nil, err
		}
		byID[id] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []Hit
	for _, c := range cands {
		if e := byID[c.rowid]; e != nil {
			c.Entry = e
			out = append(out, c)
		}
	}
	return out, nil
}

// searchOrder sorts hits as the full query does (rank, then newest
// first) and keeps at most limit.
func searchOrder(hits []Hit, limit int) []Hit {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Rank != hits[j].Rank {
			return hits[i].Rank < hits[j].Rank
		}
		return hits[i].Timestamp > hits[j].Timestamp
	})
	return hits[:min(limit, len(hits))]
}

// ftsQuery quotes every whitespace-separated word as an FTS5 string.
func ftsQuery(q string) string {
	var parts []string
	for _, w := range strings.Fields(q) {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " ")
}

// Match is one similarity result.
type Match struct {
	*Entry
	Score float64 // cosine similarity
}

// Similar returns the k verified checkpoints of repoID whose embeddings
// have the highest cosine similarity to vec (same dimension only),
// excluding hash except. Embeddings the record's hash does not cover are
// compared only with unauthenticated.
func (d *DB) Similar(ctx context.Context, repoID string, vec []float32, k int, except string, unauthenticated bool) ([]Match, error) {
	if len(vec) == 0 {
		return nil, fmt.Errorf("%w: it is empty", ErrQueryEmbedding)
	}
	norm := l2(vec)
	if norm == 0 {
		return nil, fmt.Errorf("%w: it is all zeros", ErrQueryEmbedding)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT c.hash, c.embedding FROM checkpoints c JOIN records r ON r.hash = c.hash
		WHERE r.repo_id = ? AND length(c.embedding) = ? AND c.hash <> ? AND c.verified = 1 AND (? OR r.rule = ?)`,
		repoID, 4*len(vec), except, unauthenticated, string(checkpoint.RuleSeedV1))
	if err != nil {
		return nil, err
	}
	type scored struct {
		hash  string
		score float64
	}
	var all []scored
	for rows.Next() {
		var h string
		var blob []byte
		if err := rows.Scan(&h, &blob); err != nil {
			rows.Close()
			return nil, err
		}
		emb, err := DecodeEmbedding(blob)
		if err != nil {
			continue
		}
		n := l2(emb)
		if n == 0 {
			continue
		}
		dot := 0.0
		for i := range vec {
			dot += float64(vec[i]) * float64(emb[i])
		}
		all = append(all, scored{h, dot / (norm * n)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(all) == 0 {
		if err := d.checkDimension(ctx, repoID, len(vec)); err != nil {
			return nil, err
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].hash < all[j].hash
	})
	if k > 0 && len(all) > k {
		all = all[:k]
	}
	out := make([]Match, 0, len(all))
	for _, s := range all {
		e, err := d.Get(ctx, s.hash)
		if err != nil || e == nil {
			return nil, fmt.Errorf("similar: %v", err)
		}
		out = append(out, Match{Entry: e, Score: s.score})
	}
	return out, nil
}

// ErrQueryEmbedding: a similarity query's vector cannot be compared with
// the stored embeddings (empty, all zeros, or of a dimension none has).
var ErrQueryEmbedding = fault.Sentinel(fault.Refused, "bad query embedding")

// checkDimension fails when repoID has verified embeddings but none of
// dimension dim, naming the dimensions there are.
func (d *DB) checkDimension(ctx context.Context, repoID string, dim int) error {
	rows, err := d.db.QueryContext(ctx, `SELECT DISTINCT length(c.embedding) / 4 FROM checkpoints c JOIN records r ON r.hash = c.hash
		WHERE r.repo_id = ? AND length(c.embedding) > 0 AND c.verified = 1 ORDER BY 1 LIMIT 8`, repoID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var dims []string
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return err
		}
		if n == dim {
			return nil
		}
		dims = append(dims, strconv.Itoa(n))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(dims) == 0 {
		return nil // no embeddings at all: simply no match
	}
	return fmt.Errorf("%w: it has %d dimensions; the embeddings stored here have %s", ErrQueryEmbedding, dim, strings.Join(dims, ", "))
}

func l2(v []float32) float64 {
	s := 0.0
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// Quarantine lists quarantined records of repoID, newest first.
func (d *DB) Quarantine(ctx context.Context, repoID string) ([]Quarantined, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT ref, repo_id, device, record, reason, detail, seen FROM quarantine
		WHERE repo_id = ? OR repo_id = '' ORDER BY seen DESC, id DESC`, repoID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Quarantined
	for rows.Next() {
		var q Quarantined
		if err := rows.Scan(&q.Ref, &q.RepoID, &q.Device, &q.Record, &q.Reason, &q.Detail, &q.Seen); err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// Devices lists the devices the cache knows.
func (d *DB) Devices(ctx context.Context) ([]Device, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT id, public_key, fingerprint, first_seen, trust FROM devices ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		var v Device
		if err := rows.Scan(&v.ID, &v.PublicKey, &v.Fingerprint, &v.FirstSeen, &v.Trust); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Counts returns the number of checkpoints of repoID, in all and by device:
// read from device_counts, one row per device (schema 8), not counted over
// the records.
func (d *DB) Counts(ctx context.Context, repoID string) (int, map[string]int, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT device, n FROM device_counts WHERE repo_id = ?`, repoID)
	if err != nil {
		return 0, nil, fmt.Errorf("cache counts: %w", err)
	}
	defer rows.Close()
	total, by := 0, map[string]int{}
	for rows.Next() {
		var dev string
		var n int
		if err := rows.Scan(&dev, &n); err != nil {
			return 0, nil, err
		}
		by[dev], total = n, total+n
	}
	return total, by, rows.Err()
}

// Tip returns the commit last indexed for ref ("" when never).
func (d *DB) Tip(ctx context.Context, ref string) (string, error) {
	var c string
	err := d.db.QueryRowContext(ctx, `SELECT commit_id FROM tips WHERE ref = ?`, ref).Scan(&c)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return c, err
}

// DeviceStat counts one device's checkpoints in a repository.
type DeviceStat struct {
	Count    int
	LastSeen int64 // newest ts (ns)
	Verified int
}

// DeviceStats returns per-device counts and last-seen times in repoID (from
// device_counts: O(devices)).
func (d *DB) DeviceStats(ctx context.Context, repoID string) (map[string]DeviceStat, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT device, n, last_ts, verified FROM device_counts WHERE repo_id = ?`, repoID)
	if err != nil {
		return nil, fmt.Errorf("cache device stats: %w", err)
	}
	defer rows.Close()
	out := map[string]DeviceStat{}
	for rows.Next() {
		var dev string
		var s DeviceStat
		if err := rows.Scan(&dev, &s.Count, &s.LastSeen, &s.Verified); err != nil {
			return nil, err
		}
		out[dev] = s
	}
	return out, rows.Err()
}

// Snapshots lists the cached timeline entries of repoID (one device's when
// device is set), newest first: by created_at, then device, then position.
func (d *DB) Snapshots(ctx context.Context, repoID, device string) ([]SnapshotRow, error) {
	q := `SELECT device, seq, snapshot_id, parent_id, created_at, git_commit, git_branch, tokens_saved, signed, verified
		FROM snapshots WHERE repo_id = ?`
	args := []any{repoID}
	if device != "" {
		q += ` AND device = ?`
		args = append(args, device)
	}
	rows, err := d.db.QueryContext(ctx, q+` ORDER BY created_at DESC, device ASC, seq DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SnapshotRow
	for rows.Next() {
		r := SnapshotRow{RepoID: repoID}
		var parent, commit, branch sql.NullString
		var tokens int64
		var signed, verified int
		if err := rows.Scan(&r.Device, &r.Seq, &r.Entry.SnapshotID, &parent, &r.Entry.CreatedAt, &commit, &branch,
			&tokens, &signed, &verified); err != nil {
			return nil, err
		}
		r.Entry.ParentID, r.Entry.GitCommit, r.Entry.GitBranch = optString(parent), optString(commit), optString(branch)
		r.Entry.TokensSaved, r.Entry.Signed, r.Verified = uint64(tokens), signed == 1, verified == 1
		out = append(out, r)
	}
	return out, rows.Err()
}

func optString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}
