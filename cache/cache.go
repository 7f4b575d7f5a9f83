// Package cache is the SQLite mirror of the memory branch: the seed's
// checkpoints table exactly as specified, plus devices, chain positions,
// quarantined records, full-text search, the last indexed tip per ref, and
// the links from code commits to the checkpoints that explain them
// (links.go).
//
// The branch is the source of truth; the cache can always be rebuilt.
// Rows are only ever inserted: no UPDATE or DELETE touches checkpoints, and a
// rebuild writes a new file that replaces the old one under an exclusive
// lock, while every user of the cache holds that lock shared.
//
// It also owns the refresh from the branch (refresh.go, Mirror): reading
// what the branch gained since the cached tip, verifying each new record and
// timeline entry through chain and gitstore's checks, quarantining what fails
// and rebuilding when the branch was rewritten. It imports gitstore, chain
// and formats (all below it) and must not import anything above it
// (internal/workspace, the capabilities, cmd): those reach it through
// workspace.Workspace.Cache. It never writes the branch and holds no terminal
// I/O (notices and progress go to the caller's functions).
//
// ghyll.go reads a ghyll memory.db (ReadGhyllDB, for the import) and writes
// a new one in ghyll's code schema (WriteGhyllDB, for the export).
package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// SchemaVersion changes whenever the schema or the meaning of a column
// changes; a cache of another version is migrated in place when migrations
// holds a way from it, else rebuilt.
const SchemaVersion = 8

// FileName is the cache database inside <git-common-dir>/ctx.
const FileName = "cache.db"

// Errors callers branch on.
var (
	// ErrNeedRebuild: the file is corrupt or of another schema.
	ErrNeedRebuild = fault.Sentinel(fault.Failed, "cache needs a rebuild")
	// ErrMissing: there is no cache file yet (it wraps ErrNeedRebuild).
	ErrMissing = fmt.Errorf("%w: no cache file", ErrNeedRebuild)
	// ErrNoFTS: this binary was built without SQLite FTS5.
	ErrNoFTS = fault.Sentinel(fault.Failed, "full-text search is not available: this git-ctx was built without the sqlite_fts5 build tag (reinstall with ./install.sh)")
)

// seedSchema is the seed document's table, column for column.
const seedSchema = `
CREATE TABLE checkpoints (
    hash       TEXT PRIMARY KEY,
    parent     TEXT NOT NULL,
    device     TEXT NOT NULL,
    author     TEXT NOT NULL,
    ts         INTEGER NOT NULL,
    repo       TEXT NOT NULL,
    branch     TEXT NOT NULL,
    session    TEXT NOT NULL,
    turn       INTEGER NOT NULL,
    model      TEXT NOT NULL,
    summary    TEXT NOT NULL,
    embedding  BLOB NOT NULL,
    files      TEXT NOT NULL,
    tools      TEXT NOT NULL,
    injections TEXT,
    sig        TEXT NOT NULL,
    verified   INTEGER DEFAULT 1,
    imported   INTEGER DEFAULT 0
);
` + seedIndexes

// seedIndexes are the seed document's indexes on its table. A rebuild
// creates them (and the log index) with the tables, before the rows: the
// rows come chain by chain, so most of their index inserts land beside the
// previous one, on the writer while the next records are verified, where
// creating them after the fill took ~0.2–0.5 s of the serial tail at 100k
// (docs/PERFORMANCE.md, "Reindex, second pass").
const seedIndexes = `
CREATE INDEX idx_checkpoints_session ON checkpoints(session);
CREATE INDEX idx_checkpoints_device ON checkpoints(device);
CREATE INDEX idx_checkpoints_repo ON checkpoints(repo);
`

// extraSchema holds what the seed's table cannot express.
const extraSchema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Where each checkpoint sits, and the fields the seed's columns lose:
-- the version, v2 fields, nil-vs-empty emb, unknown members (only when
-- the hash covers them), and the hash rule the record matched ('' when none).
CREATE TABLE records (
    hash         TEXT PRIMARY KEY,
    repo_id      TEXT NOT NULL,
    device       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    ts           INTEGER NOT NULL,
    v            INTEGER NOT NULL,
    emb_null     INTEGER NOT NULL,
    plan_mode    INTEGER NOT NULL DEFAULT 0,
    resumed_from TEXT,
    extra        TEXT,
    rule         TEXT NOT NULL DEFAULT '',
    UNIQUE (repo_id, device, seq)
);
CREATE TABLE devices (
    id          TEXT PRIMARY KEY,
    public_key  TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    first_seen  INTEGER NOT NULL,
    trust       TEXT NOT NULL DEFAULT 'tofu'
);
CREATE TABLE tips (
    ref        TEXT PRIMARY KEY,
    commit_id  TEXT NOT NULL,
    indexed_at INTEGER NOT NULL
);
-- Context snapshots: every device's timeline entries, in timeline order.
CREATE TABLE snapshots (
    repo_id      TEXT NOT NULL,
    device       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    snapshot_id  TEXT NOT NULL,
    parent_id    TEXT,
    created_at   TEXT NOT NULL,
    git_commit   TEXT,
    git_branch   TEXT,
    tokens_saved INTEGER NOT NULL,
    signed       INTEGER NOT NULL,
    verified     INTEGER NOT NULL,
    PRIMARY KEY (repo_id, device, seq)
);
CREATE INDEX idx_snapshots_created ON snapshots(repo_id, created_at DESC);
CREATE TABLE quarantine (
    id       INTEGER PRIMARY KEY,
    ref      TEXT NOT NULL,
    repo_id  TEXT NOT NULL,
    device   TEXT NOT NULL,
    record   TEXT NOT NULL,
    reason   TEXT NOT NULL,
    detail   TEXT NOT NULL,
    seen     INTEGER NOT NULL
);
-- One row per ref, repository, device, record and reason: a pull adds its
-- rejections by this key (a lookup, not a scan: one may add 200,000).
CREATE UNIQUE INDEX idx_quarantine_key ON quarantine(ref, repo_id, device, record, reason);
-- Which checkpoints explain which code commit (links.go): kind 'commit' is
-- the record whose summary names the commit in its trailer, kind 'turn' a
-- record of the same device and branch before it (docs/FORMAT.md §9).
CREATE TABLE commit_links (
    repo_id    TEXT NOT NULL,
    git_commit TEXT NOT NULL,
    record     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    device     TEXT NOT NULL,
    branch     TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (record, git_commit)
);
CREATE INDEX idx_commit_links_commit ON commit_links(git_commit);
CREATE INDEX idx_commit_links_chain ON commit_links(repo_id, device, branch, kind, seq);
` + deviceCountsTable + logIndex

// logIndex serves log: newest first, then device, then chain position.
const logIndex = `
CREATE INDEX idx_records_log ON records(repo_id, ts DESC, device, seq DESC);
`

// deviceCountsTable (schema 8) keeps, per repository and device, what
// status and the device list count: the records rows, how many of them are
// verified, and the newest ts. deviceCountsTrigger maintains it on every
// records insert (a refresh, a pull's indexing; rows are never updated or
// deleted), so reading the counts costs O(devices), not a walk of every
// index entry (issue 18, item 3). The checkpoints row is inserted before
// its records row (Writer.AddCheckpoint), so the trigger sees its verified
// flag. The migration from schema 7 fills the table once with
// deviceCountsFill (one grouped pass instead of an upsert per row); a
// rebuild counts the rows as it writes them and fills the table from those
// counts after the fill (Writer.writeCounts: no join of every records row
// against checkpoints); both create the trigger only then.
const deviceCountsTable = `
CREATE TABLE device_counts (
    repo_id  TEXT NOT NULL,
    device   TEXT NOT NULL,
    n        INTEGER NOT NULL,
    verified INTEGER NOT NULL,
    last_ts  INTEGER NOT NULL,
    PRIMARY KEY (repo_id, device)
) WITHOUT ROWID;
`

const deviceCountsFill = `
INSERT INTO device_counts(repo_id, device, n, verified, last_ts)
    SELECT r.repo_id, r.device, count(*), coalesce(sum(c.verified), 0), max(r.ts)
    FROM records r LEFT JOIN checkpoints c ON c.hash = r.hash GROUP BY r.repo_id, r.device;
`

const deviceCountsTrigger = `
CREATE TRIGGER records_device_counts AFTER INSERT ON records BEGIN
    INSERT INTO device_counts(repo_id, device, n, verified, last_ts)
    VALUES (NEW.repo_id, NEW.device, 1,
        coalesce((SELECT verified FROM checkpoints WHERE hash = NEW.hash), 0), NEW.ts)
    ON CONFLICT (repo_id, device) DO UPDATE SET n = n + 1, verified = verified + excluded.verified,
        last_ts = max(last_ts, excluded.last_ts);
END;
`

// migrations bring a file of an earlier schema version up to SchemaVersion
// in place, giving what a rebuild would give without reading the branch
// again (at 100k records a rebuild verifies 100k signatures). A version
// without an entry is rebuilt.
var migrations = map[string]string{
	// 7 → 8: the per-device counts, counted once from the rows there are.
	"7": deviceCountsTable + deviceCountsFill + deviceCountsTrigger,
}

const ftsSchema = `
CREATE VIRTUAL TABLE checkpoints_fts USING fts5(
    summary, files, tools, content='checkpoints', content_rowid='rowid'
);
`

// DB is an open cache. It holds the cache lock shared until Close.
type DB struct {
	db      *sql.DB
	dir     string
	lock    *os.File
	discard bool // Close removes dir
	// FTS reports whether full-text search is available in this file.
	FTS bool
	// SearchWindow, when positive, is the most matches Search ranks (git
	// config ctx.searchWindow; issue 18, item 3). FTS5 computes bm25 for
	// every match before the best can be taken, so an unselective query
	// costs O(matches): at 100k records two common words matched 4,955
	// and their ranking alone took ~22 ms of CPU. With a window, when more
	// records match, Search ranks the SearchWindow matches with the highest
	// rowids, the ones the cache indexed last (the records added most
	// recently, but after a rebuild the devices it read last), which FTS5
	// finds by walking its index from the end and stopping early. Each
	// keeps its exact bm25 score, so the order within the window is the
	// full ranking's restricted to it. 0 (the default) ranks every match.
	SearchWindow int
	// openTip is the memory branch's indexed tip when the file was opened
	// (read with the schema, in the same statement): the refresh's no-op
	// check compares it with the ref instead of asking again. Only a
	// refresh can move it while the DB is open (a rebuild waits for the
	// shared lock Open holds), and only to the branch's tip.
	openTip string
}

// Path returns the database file path in dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

func dsn(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate"
}

// lockFile takes the cache lock (shared or exclusive), waiting until ctx ends.
func lockFile(ctx context.Context, dir string, how int) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "cache.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for delay := time.Millisecond; ; delay = min(delay*2, 50*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the cache lock: %w", ctx.Err())
		case <-time.After(delay):
		}
	}
}

// Open opens the cache in dir, holding its lock shared. It returns
// ErrNeedRebuild (with the DB closed) when the file is missing, unreadable
// or of another schema version.
func Open(ctx context.Context, dir string) (*DB, error) {
	lock, err := lockFile(ctx, dir, syscall.LOCK_SH)
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	d, err := openFile(Path(dir))
	if err != nil {
		lock.Close()
		return nil, err
	}
	d.dir, d.lock = dir, lock
	return d, nil
}

func openFile(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, ErrMissing
	}
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, err
	}
	d := &DB{db: db}
	// One statement for everything an up-to-date open needs (issue 18,
	// "Fast start"): the schema version, whether FTS is there, the indexed
	// tip of the memory branch.
	var v sql.NullString
	var tip sql.NullString
	var fts int
	err = db.QueryRow(`SELECT (SELECT value FROM meta WHERE key = 'schema'),
		(SELECT count(*) FROM sqlite_master WHERE name = 'checkpoints_fts'),
		(SELECT commit_id FROM tips WHERE ref = ?)`, gitstore.BranchRef).Scan(&v, &fts, &tip)
	if err == nil && !v.Valid {
		err = sql.ErrNoRows
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %s is unreadable (%v)", ErrNeedRebuild, path, err)
	}
	if v.String != fmt.Sprint(SchemaVersion) {
		if err := migrate(db, v.String); err != nil {
			db.Close()
			return nil, fmt.Errorf("%w: %s: %w", ErrNeedRebuild, path, err)
		}
	}
	d.FTS, d.openTip = fts == 1, tip.String
	return d, nil
}

// migrate brings the file open in db from schema version from to
// SchemaVersion in one write transaction (BEGIN IMMEDIATE: of processes
// opening the same old file, one migrates and the others find it done).
func migrate(db *sql.DB, from string) error {
	if _, ok := migrations[from]; !ok {
		return fmt.Errorf("schema %s, this git-ctx uses %d", from, SchemaVersion)
	}
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("migrate schema %s: %w", from, err)
	}
	defer tx.Rollback()
	var v string
	if err := tx.QueryRow(`SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil {
		return fmt.Errorf("migrate schema %s: %w", from, err)
	}
	if v == fmt.Sprint(SchemaVersion) {
		return nil // another process migrated it while we waited
	}
	q, ok := migrations[v]
	if !ok {
		return fmt.Errorf("schema %s, this git-ctx uses %d", v, SchemaVersion)
	}
	if _, err := tx.Exec(q); err != nil {
		return fmt.Errorf("migrate schema %s: %w", v, err)
	}
	if _, err := tx.Exec(`UPDATE meta SET value = ? WHERE key = 'schema'`, fmt.Sprint(SchemaVersion)); err != nil {
		return fmt.Errorf("migrate schema %s: %w", v, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate schema %s: %w", v, err)
	}
	return nil
}

// Close releases the database and the lock (and, after DiscardOnClose,
// removes the cache's directory).
func (d *DB) Close() error {
	err := d.db.Close()
	if d.lock != nil {
		d.lock.Close()
	}
	if d.discard {
		if rerr := os.RemoveAll(d.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// DiscardOnClose makes Close remove the directory the cache was opened in:
// for a cache built in a temporary directory because the repository's own
// cannot be written.
func (d *DB) DiscardOnClose() { d.discard = true }

// rebuildPageSize is the page size of the files a rebuild writes (SQLite's
// default is 4096). A rebuild inserts every row into the hash-keyed indexes
// of checkpoints and records in random order; with 8 KiB pages the B-trees
// have fewer pages to find, split and write, and the fill costs ~11% less
// CPU per row at 100k (BenchmarkRebuildRows), with an 8 MiB page cache
// (1,024 pages) as fast as with 16 MiB and no more memory than 4 KiB pages
// and 16 MiB (docs/PERFORMANCE.md, "Reindex, second pass"). An incremental
// refresh writes 8 KiB pages to the WAL instead of 4.
const rebuildPageSize = 8192

// Rebuild replaces the cache in dir with a new file filled by fill. It takes
// the cache lock exclusively (so no process is reading the old file), builds
// the new file beside it, and renames it into place. The caller must not
// hold an open DB on dir.
func Rebuild(ctx context.Context, dir string, fill func(w *Writer) error) error {
	return rebuildGated(ctx, dir, fill, nil)
}

// errNotInstalled: a gated rebuild's file was complete, and its gate said
// it was not to replace the cache (it was removed).
var errNotInstalled = errors.New("the rebuilt cache was not put in place")

// rebuildGated is Rebuild; gate, when set, is asked once the new file is
// complete and on disk whether it may replace the cache (false: the file
// is removed and the result is errNotInstalled).
func rebuildGated(ctx context.Context, dir string, fill func(w *Writer) error, gate func() bool) error {
	lock, err := lockFile(ctx, dir, syscall.LOCK_EX)
	if err != nil {
		return fmt.Errorf("rebuild cache: %w", err)
	}
	defer lock.Close()
	tmp := filepath.Join(dir, fmt.Sprintf("cache.db.new-%d", os.Getpid()))
	// Half-built files of rebuilds that were killed (any process id: we
	// hold the lock, so none of them is still being written).
	stale, _ := filepath.Glob(filepath.Join(dir, "cache.db.new-*"))
	for _, p := range stale {
		os.Remove(p)
	}
	defer func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"} {
			os.Remove(p)
		}
	}()
	db, err := sql.Open("sqlite3", "file:"+tmp+"?_journal_mode=OFF&_synchronous=OFF&_txlock=immediate&_cache_size=-8192")
	if err != nil {
		return err
	}
	defer db.Close()
	// The tables and their indexes first; the per-device counts and their
	// trigger after the rows (Writer.finishRebuild). The page size comes
	// before anything is written (rebuildPageSize).
	schema := seedSchema + extraSchema
	if _, err := db.Exec(fmt.Sprintf("PRAGMA page_size=%d;", rebuildPageSize) + schema); err != nil {
		return fmt.Errorf("create cache schema: %w", err)
	}
	fts := true
	if _, err := db.Exec(ftsSchema); err != nil {
		if !strings.Contains(err.Error(), "no such module") {
			return fmt.Errorf("create full-text index: %w", err)
		}
		fts = false
	}
	if fts {
		if _, err := db.Exec(`INSERT INTO checkpoints_fts(checkpoints_fts, rank) VALUES ('automerge', 0)`); err != nil {
			return err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	w, err := newWriter(ctx, tx, fts)
	if err != nil {
		tx.Rollback()
		return err
	}
	defer w.close()
	w.counts = map[deviceKey]*deviceCount{}
	if err := fill(w); err != nil {
		tx.Rollback()
		return err
	}
	if err := w.finishRebuild(); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	// The file was written without syncs (synchronous=OFF): make it
	// durable once, before it replaces the old one, so that a crash after
	// the rename cannot leave a cache whose pages never reached the disk
	// (~80 ms for a 100k cache here).
	if err := syncPath(tmp); err != nil {
		return fmt.Errorf("sync the rebuilt cache: %w", err)
	}
	if gate != nil && !gate() {
		return errNotInstalled
	}
	// Nobody has the old file open (we hold the lock exclusively): drop its
	// WAL and shared memory so they cannot be applied to the new file.
	final := Path(dir)
	for _, p := range []string{final + "-wal", final + "-shm", final + "-journal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	// The rename itself: best effort (a directory may refuse an fsync).
	_ = syncPath(dir)
	return nil
}

// syncPath flushes a file or directory to stable storage.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Update runs fn in one write transaction (BEGIN IMMEDIATE, so concurrent
// refreshers serialise and each sees the other's result).
func (d *DB) Update(ctx context.Context, fn func(w *Writer) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cache write: %w", err)
	}
	w, err := newWriter(ctx, tx, d.FTS)
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := fn(w); err != nil {
		w.close()
		tx.Rollback()
		return err
	}
	w.close()
	return tx.Commit()
}

// IsUnwritable reports whether err says the cache directory or a file in it
// could not be created or written: a read-only file system, or no
// permission.
func IsUnwritable(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// IsCorrupt reports whether err says the database file is damaged.
func IsCorrupt(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return false
}
