package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// GhyllRow is one row of a ghyll memory.db, decoded as far as the row
// allows. The version is not stored; files and tools keep the stored text.
type GhyllRow struct {
	Checkpoint checkpoint.Checkpoint // Version left 0; lists decoded from the stored JSON
	FilesText  string
	ToolsText  string
}

// ReadGhyllDB reads every checkpoint row of a ghyll memory.db (seed schema,
// or ghyll's v2 schema with plan_mode and resumed_from), oldest first. The
// file is opened read-only.
func ReadGhyllDB(ctx context.Context, path string) ([]GhyllRow, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cols := map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('checkpoints')`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		cols[n] = true
	}
	rows.Close()
	for _, need := range []string{"hash", "parent", "device", "author", "ts", "repo", "branch", "session", "turn", "model", "summary", "embedding", "files", "tools", "injections", "sig"} {
		if !cols[need] {
			return nil, fmt.Errorf("%s: no checkpoints table with column %q: not a ghyll memory.db", path, need)
		}
	}
	plan, resumed := "0", "NULL"
	if cols["plan_mode"] {
		plan = "COALESCE(plan_mode, 0)"
	}
	if cols["resumed_from"] {
		resumed = "resumed_from"
	}
	q := `SELECT hash, parent, device, author, ts, repo, COALESCE(branch, ''), session, turn, model, ` + plan + `, ` + resumed + `,
		summary, COALESCE(embedding, x''), COALESCE(files, '[]'), COALESCE(tools, '[]'), injections, sig
		FROM checkpoints ORDER BY ts, rowid`
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer rows.Close()
	var out []GhyllRow
	for rows.Next() {
		var r GhyllRow
		c := &r.Checkpoint
		var planMode int
		var resumedFrom, injections sql.NullString
		var emb []byte
		if err := rows.Scan(&c.Hash, &c.ParentHash, &c.DeviceID, &c.AuthorID, &c.Timestamp, &c.RepoRemote, &c.Branch,
			&c.SessionID, &c.Turn, &c.ActiveModel, &planMode, &resumedFrom, &c.Summary, &emb, &r.FilesText, &r.ToolsText,
			&injections, &c.Signature); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.PlanMode = planMode != 0
		if resumedFrom.Valid && strings.TrimSpace(resumedFrom.String) != "" {
			c.ResumedFrom = &checkpoint.ResumedFrom{}
			if err := json.Unmarshal([]byte(resumedFrom.String), c.ResumedFrom); err != nil {
				return nil, fmt.Errorf("%s: checkpoint %s: resumed_from: %v", path, c.Hash, err)
			}
		}
		if len(emb) > 0 {
			if c.Embedding, err = DecodeEmbedding(emb); err != nil {
				return nil, fmt.Errorf("%s: checkpoint %s: %v", path, c.Hash, err)
			}
		}
		if err := json.Unmarshal([]byte(r.FilesText), &c.FilesTouched); err != nil {
			return nil, fmt.Errorf("%s: checkpoint %s: files: %v", path, c.Hash, err)
		}
		if err := json.Unmarshal([]byte(r.ToolsText), &c.ToolsUsed); err != nil {
			return nil, fmt.Errorf("%s: checkpoint %s: tools: %v", path, c.Hash, err)
		}
		if injections.Valid {
			if err := json.Unmarshal([]byte(injections.String), &c.InjectionSig); err != nil {
				return nil, fmt.Errorf("%s: checkpoint %s: injections: %v", path, c.Hash, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ImportedFromTrailer starts the last summary line that names a record's
// origin where no authenticated unknown member can (a record sealed under
// ghyll's rule, in a ghyll-v1 branch): "imported_from: <origin id>".
const ImportedFromTrailer = "imported_from: "

// ImportedFrom returns the origin ids recorded in the imported_from member
// of cached checkpoints of repoID, and in the last summary line
// (ImportedFromTrailer) of its verified ones.
func (d *DB) ImportedFrom(ctx context.Context, repoID string) (map[string]bool, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT extra FROM records WHERE repo_id = ? AND extra IS NOT NULL`, repoID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var ext string
		if err := rows.Scan(&ext); err != nil {
			return nil, err
		}
		var pairs [][2]json.RawMessage
		if json.Unmarshal([]byte(ext), &pairs) != nil {
			continue
		}
		for _, p := range pairs {
			var k, v string
			if json.Unmarshal(p[0], &k) == nil && k == "imported_from" && json.Unmarshal(p[1], &v) == nil {
				out[v] = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, d.importedFromSummaries(ctx, repoID, out)
}

// importedFromSummaries adds to out the origin ids named by the last
// summary line of repoID's verified checkpoints.
func (d *DB) importedFromSummaries(ctx context.Context, repoID string, out map[string]bool) error {
	rows, err := d.db.QueryContext(ctx, `SELECT c.summary FROM checkpoints c JOIN records r ON r.hash = c.hash
		WHERE r.repo_id = ? AND c.verified = 1 AND instr(c.summary, ?) > 0`, repoID, "\n"+ImportedFromTrailer)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var sum string
		if err := rows.Scan(&sum); err != nil {
			return err
		}
		last := sum[strings.LastIndexByte(sum, '\n')+1:]
		if id, ok := strings.CutPrefix(last, ImportedFromTrailer); ok && id != "" {
			out[id] = true
		}
	}
	return rows.Err()
}

// GhyllCodeSchema is the table and indexes of ghyll's code (memory/store.go,
// reference/checkpoint-format.md §9.2): the seed's columns with plan_mode
// and resumed_from after model, in ghyll's column order, types and defaults.
// ghyll has no column for the version.
const GhyllCodeSchema = `CREATE TABLE checkpoints (
    hash         TEXT PRIMARY KEY,
    parent       TEXT NOT NULL,
    device       TEXT NOT NULL,
    author       TEXT NOT NULL,
    ts           INTEGER NOT NULL,
    repo         TEXT NOT NULL DEFAULT '',
    branch       TEXT NOT NULL DEFAULT '',
    session      TEXT NOT NULL,
    turn         INTEGER NOT NULL,
    model        TEXT NOT NULL,
    plan_mode    INTEGER DEFAULT 0,
    resumed_from TEXT,
    summary      TEXT NOT NULL,
    embedding    BLOB NOT NULL DEFAULT x'',
    files        TEXT NOT NULL DEFAULT '[]',
    tools        TEXT NOT NULL DEFAULT '[]',
    injections   TEXT,
    sig          TEXT NOT NULL,
    verified     INTEGER DEFAULT 1,
    imported     INTEGER DEFAULT 0
);
CREATE INDEX idx_checkpoints_session ON checkpoints(session);
CREATE INDEX idx_checkpoints_device ON checkpoints(device);
CREATE INDEX idx_checkpoints_repo ON checkpoints(repo);
`

// WriteGhyllDB creates a new database at path (which must not exist) with
// GhyllCodeSchema and inserts cps in order, in one transaction. Columns
// hold what ghyll's store reads back into the same record: files and tools
// as JSON text, nil as `null` and empty as `[]` (ghyll's reader decodes
// `null` to nil, so the distinction its own writer loses survives);
// injections NULL when empty; resumed_from as `{"session":…,"hash":…}` or
// NULL; plan_mode 0 or 1; the embedding as float32 little-endian (empty
// for none). verified and imported keep ghyll's defaults.
func WriteGhyllDB(ctx context.Context, path string, cps []*checkpoint.Checkpoint) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, os.ErrExist)
	}
	db, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?_journal_mode=DELETE&_synchronous=FULL&_txlock=exclusive")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, GhyllCodeSchema); err != nil {
		return fmt.Errorf("%s: schema: %w", path, err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO checkpoints (hash, parent, device, author, ts, repo, branch,
		session, turn, model, plan_mode, resumed_from, summary, embedding, files, tools, injections, sig)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, c := range cps {
		args, err := ghyllColumns(c)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.Hash, err)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("%s: checkpoint %s: %w", path, c.Hash, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return db.Close()
}

// ghyllColumns is c as the insert's arguments (see WriteGhyllDB).
func ghyllColumns(c *checkpoint.Checkpoint) ([]any, error) {
	files, err := json.Marshal(c.FilesTouched)
	if err != nil {
		return nil, err
	}
	tools, err := json.Marshal(c.ToolsUsed)
	if err != nil {
		return nil, err
	}
	var injections, resumed any
	if len(c.InjectionSig) > 0 {
		b, err := json.Marshal(c.InjectionSig)
		if err != nil {
			return nil, err
		}
		injections = string(b)
	}
	if c.ResumedFrom != nil {
		b, err := json.Marshal(c.ResumedFrom)
		if err != nil {
			return nil, err
		}
		resumed = string(b)
	}
	return []any{c.Hash, c.ParentHash, c.DeviceID, c.AuthorID, c.Timestamp, c.RepoRemote, c.Branch,
		c.SessionID, c.Turn, c.ActiveModel, boolInt(c.PlanMode), resumed, c.Summary, EncodeEmbedding(c.Embedding),
		string(files), string(tools), injections, c.Signature}, nil
}

// uriPath escapes what an SQLite URI filename would read as syntax.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}
