package cache

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/snapshot"
)

// Writer adds rows inside one transaction.
type Writer struct {
	// ctx is the caller's context, checked before each checkpoint is
	// added; exec is the same without its cancellation, for the
	// statements: with a context that can end, go-sqlite3 runs every
	// statement on a goroutine of its own to watch it (a goroutine and
	// two thread hand-offs per insert, a third of a rebuild's SQLite CPU).
	// Each insert is short: checking between them keeps the writer as
	// responsive to cancellation.
	ctx   context.Context
	exCtx context.Context
	tx    *sql.Tx
	fts   bool
	stmts map[string]*sql.Stmt
	// counts, in a rebuild (nil otherwise), are the per-device counts of
	// the records rows written so far: device_counts is filled from them
	// after the fill (writeCounts) instead of from a join of every row.
	counts map[deviceKey]*deviceCount
}

// deviceKey is a device_counts key.
type deviceKey struct{ repo, device string }

// deviceCount is one device_counts row: records rows, how many of them
// are verified, the newest ts.
type deviceCount struct {
	n, verified int
	lastTS      int64
}

func newWriter(ctx context.Context, tx *sql.Tx, fts bool) (*Writer, error) {
	w := &Writer{ctx: ctx, exCtx: context.WithoutCancel(ctx), tx: tx, fts: fts, stmts: map[string]*sql.Stmt{}}
	return w, nil
}

func (w *Writer) stmt(q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(w.exCtx, q)
	if err != nil {
		return nil, err
	}
	w.stmts[q] = s
	return s, nil
}

func (w *Writer) exec(q string, args ...any) (sql.Result, error) {
	s, err := w.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(w.exCtx, args...)
}

func (w *Writer) close() {
	for _, s := range w.stmts {
		s.Close()
	}
}

// Row is one checkpoint to add.
type Row struct {
	CP       *checkpoint.Checkpoint
	RepoID   string
	Seq      int // 0-based position in the device's chain
	Verified bool
	Imported int64 // unix seconds when it came from another device (0: written here)
	// Rule is the hash rule the record matched ("" when none did). Unknown
	// members are kept only when it covers them.
	Rule checkpoint.Rule
}

// AddCheckpoint inserts one checkpoint; a hash already present is left as
// it is (rows are never updated).
func (w *Writer) AddCheckpoint(r Row) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	cp := r.CP
	files, err := json.Marshal(cp.FilesTouched)
	if err != nil {
		return err
	}
	tools, err := json.Marshal(cp.ToolsUsed)
	if err != nil {
		return err
	}
	var injections any
	if cp.InjectionSig != nil {
		b, err := json.Marshal(cp.InjectionSig)
		if err != nil {
			return err
		}
		injections = string(b)
	}
	verified := 0
	if r.Verified {
		verified = 1
	}
	res, err := w.exec(`INSERT OR IGNORE INTO checkpoints
		(hash, parent, device, author, ts, repo, branch, session, turn, model, summary,
		 embedding, files, tools, injections, sig, verified, imported)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		cp.Hash, cp.ParentHash, cp.DeviceID, cp.AuthorID, cp.Timestamp, cp.RepoRemote, cp.Branch,
		cp.SessionID, cp.Turn, cp.ActiveModel, cp.Summary, EncodeEmbedding(cp.Embedding),
		string(files), string(tools), injections, cp.Signature, verified, r.Imported)
	if err != nil {
		return fmt.Errorf("cache checkpoint %s: %w", cp.Hash, err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return nil
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	var resumed, extra any
	if cp.ResumedFrom != nil {
		b, _ := json.Marshal(cp.ResumedFrom)
		resumed = string(b)
	}
	// Members outside the hash could have been changed by anyone: they are
	// not kept, so nothing can show them as part of a verified record.
	if len(cp.Extra) > 0 && r.Rule.CoversUnknown() {
		pairs := make([][2]json.RawMessage, len(cp.Extra))
		for i, m := range cp.Extra {
			k, _ := json.Marshal(m.Key)
			pairs[i] = [2]json.RawMessage{k, m.Value}
		}
		b, err := json.Marshal(pairs)
		if err != nil {
			return err
		}
		extra = string(b)
	}
	res, err = w.exec(`INSERT OR IGNORE INTO records
		(hash, repo_id, device, seq, ts, v, emb_null, plan_mode, resumed_from, extra, rule) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		cp.Hash, r.RepoID, cp.DeviceID, r.Seq, cp.Timestamp, cp.Version, boolInt(cp.Embedding == nil), boolInt(cp.PlanMode), resumed, extra, string(r.Rule))
	if err != nil {
		return fmt.Errorf("cache record %s: %w", cp.Hash, err)
	}
	if w.counts != nil {
		if n, _ := res.RowsAffected(); n == 1 {
			w.count(r.RepoID, cp.DeviceID, verified, cp.Timestamp)
		}
	}
	if err := w.link(r.RepoID, cp.Hash, cp.DeviceID, cp.Branch, cp.SessionID, cp.Summary, r.Seq); err != nil {
		return err
	}
	if w.fts {
		// Index the words of the lists, not their JSON (a nil list would
		// otherwise make every such record match the word "null").
		if _, err := w.exec(`INSERT INTO checkpoints_fts(rowid, summary, files, tools) VALUES (?,?,?,?)`,
			rowid, cp.Summary, strings.Join(cp.FilesTouched, "\n"), strings.Join(cp.ToolsUsed, "\n")); err != nil {
			return fmt.Errorf("index checkpoint %s: %w", cp.Hash, err)
		}
	}
	return nil
}

// count adds one records row (its checkpoints row's verified flag, its ts)
// to the counts of its device.
func (w *Writer) count(repo, device string, verified int, ts int64) {
	k := deviceKey{repo, device}
	c := w.counts[k]
	if c == nil {
		c = &deviceCount{lastTS: ts}
		w.counts[k] = c
	}
	c.n++
	c.verified += verified
	c.lastTS = max(c.lastTS, ts)
}

// finishRebuild does, after a rebuild's fill, what the bulk load put off:
// FTS5's automerge back on and one optimize, the per-device counts
// (writeCounts) and then their trigger, and the schema version, which
// makes the file a cache.
func (w *Writer) finishRebuild() error {
	if w.fts {
		if _, err := w.tx.Exec(`INSERT INTO checkpoints_fts(checkpoints_fts, rank) VALUES ('automerge', 4); INSERT INTO checkpoints_fts(checkpoints_fts) VALUES ('optimize');`); err != nil {
			return fmt.Errorf("merge the full-text index: %w", err)
		}
	}
	if err := w.writeCounts(); err != nil {
		return err
	}
	if _, err := w.tx.Exec(deviceCountsTrigger); err != nil {
		return fmt.Errorf("index the cache's records: %w", err)
	}
	if _, err := w.tx.Exec(`INSERT INTO meta(key, value) VALUES ('schema', ?)`, fmt.Sprint(SchemaVersion)); err != nil {
		return fmt.Errorf("cache schema version: %w", err)
	}
	return nil
}

// writeCounts fills the empty device_counts table of a rebuild from the
// counts kept as the rows were written: the rows deviceCountsFill would
// make (every records row of a rebuild has its checkpoints row, written
// in the same AddCheckpoint), one insert per device.
func (w *Writer) writeCounts() error {
	for k, c := range w.counts {
		if _, err := w.exec(`INSERT INTO device_counts(repo_id, device, n, verified, last_ts) VALUES (?,?,?,?,?)`,
			k.repo, k.device, c.n, c.verified, c.lastTS); err != nil {
			return fmt.Errorf("cache device counts: %w", err)
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// EncodeEmbedding is the seed's BLOB: float32 little-endian, concatenated.
func EncodeEmbedding(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// DecodeEmbedding reverses EncodeEmbedding; a length that is not a multiple
// of four is an error.
func DecodeEmbedding(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("embedding blob of %d bytes is not float32 values", len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// HeadState returns the number of checkpoints cached for device in repoID,
// the hash of the last one ("" when none) and whether it is verified (true
// when there is none: a new chain starts trusted).
func (w *Writer) HeadState(repoID, device string) (int, string, bool, error) {
	s, err := w.stmt(`SELECT r.seq, r.hash, c.verified FROM records r JOIN checkpoints c ON c.hash = r.hash
		WHERE r.repo_id = ? AND r.device = ? ORDER BY r.seq DESC LIMIT 1`)
	if err != nil {
		return 0, "", false, err
	}
	var seq, verified int
	var hash string
	err = s.QueryRowContext(w.exCtx, repoID, device).Scan(&seq, &hash, &verified)
	if err == sql.ErrNoRows {
		return 0, "", true, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	return seq + 1, hash, verified == 1, nil
}

// Tip returns the commit last indexed for ref ("" when never).
func (w *Writer) Tip(ref string) (string, error) {
	s, err := w.stmt(`SELECT commit_id FROM tips WHERE ref = ?`)
	if err != nil {
		return "", err
	}
	var c string
	err = s.QueryRowContext(w.exCtx, ref).Scan(&c)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return c, err
}

// SetTip records that ref has been indexed up to commit.
func (w *Writer) SetTip(ref, commit string) error {
	_, err := w.exec(`INSERT OR REPLACE INTO tips(ref, commit_id, indexed_at) VALUES (?,?,?)`, ref, commit, time.Now().Unix())
	return err
}

// Device is one device known to the cache.
type Device struct {
	ID          string
	PublicKey   string
	Fingerprint string
	FirstSeen   int64
	Trust       string
}

// PutDevice records a device the first time it is seen.
func (w *Writer) PutDevice(d Device) error {
	if d.Trust == "" {
		d.Trust = "tofu"
	}
	_, err := w.exec(`INSERT OR IGNORE INTO devices(id, public_key, fingerprint, first_seen, trust) VALUES (?,?,?,?,?)`,
		d.ID, d.PublicKey, d.Fingerprint, d.FirstSeen, d.Trust)
	return err
}

// Quarantined is a record that failed verification.
type Quarantined struct {
	Ref    string
	RepoID string
	Device string
	Record string // a checkpoint hash or a path
	Reason string
	Detail string
	Seen   int64
}

// AddQuarantine records a failed record (once per ref, repository,
// device, record and reason).
func (w *Writer) AddQuarantine(q Quarantined) error {
	if q.Seen == 0 {
		q.Seen = time.Now().Unix()
	}
	// The unique index on the key makes this a lookup (idx_quarantine_key).
	_, err := w.exec(`INSERT OR IGNORE INTO quarantine(ref, repo_id, device, record, reason, detail, seen) VALUES (?,?,?,?,?,?,?)`,
		q.Ref, q.RepoID, q.Device, q.Record, q.Reason, q.Detail, q.Seen)
	return err
}

// ClearQuarantine forgets what ref once rejected of device in repoID (a
// later pull merged that device's records). Only the quarantine side table
// is touched; checkpoints rows are never deleted.
func (w *Writer) ClearQuarantine(ref, repoID, device string) error {
	_, err := w.exec(`DELETE FROM quarantine WHERE ref = ? AND repo_id = ? AND device = ?`, ref, repoID, device)
	return err
}

// SnapshotRow is one timeline entry of one device.
type SnapshotRow struct {
	RepoID, Device string
	Seq            int
	Entry          snapshot.TimelineEntry
	Verified       bool
}

// AddSnapshot inserts one timeline entry (an existing position is left as
// it is).
func (w *Writer) AddSnapshot(r SnapshotRow) error {
	e := r.Entry
	_, err := w.exec(`INSERT OR IGNORE INTO snapshots
		(repo_id, device, seq, snapshot_id, parent_id, created_at, git_commit, git_branch, tokens_saved, signed, verified)
		VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		r.RepoID, r.Device, r.Seq, e.SnapshotID, nullable(e.ParentID), e.CreatedAt, nullable(e.GitCommit), nullable(e.GitBranch),
		int64(e.TokensSaved), boolInt(e.Signed), boolInt(r.Verified))
	return err
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// SnapshotHead returns how many timeline entries of device in repoID are
// cached, the id of the last one, and whether it verified (true when none).
func (w *Writer) SnapshotHead(repoID, device string) (int, string, bool, error) {
	s, err := w.stmt(`SELECT seq, snapshot_id, verified FROM snapshots WHERE repo_id = ? AND device = ? ORDER BY seq DESC LIMIT 1`)
	if err != nil {
		return 0, "", false, err
	}
	var seq, verified int
	var id string
	err = s.QueryRowContext(w.exCtx, repoID, device).Scan(&seq, &id, &verified)
	if err == sql.ErrNoRows {
		return 0, "", true, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	return seq + 1, id, verified == 1, nil
}
