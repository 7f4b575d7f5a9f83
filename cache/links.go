package cache

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Link kinds in commit_links.
const (
	// LinkCommit is the record that names the commit in its summary's
	// trailer (the post-commit hook's record, or `checkpoint --from-commit`).
	LinkCommit = "commit"
	// LinkTurn is a record of the same device, repository and branch made
	// after that device's previous commit record on the branch (an agent's
	// turn, a note) and before this one.
	LinkTurn = "turn"
)

// LinkWindow bounds how many records before a commit record of the same
// device are looked at for its turns (docs/FORMAT.md §9).
const LinkWindow = 1024

// commitTrailerPrefix starts the summary paragraph that names a commit
// (internal/checkpoints writes it).
const commitTrailerPrefix = "Commit: "

// redactionNotePrefix starts the paragraph a redaction appends after the
// trailer.
const redactionNotePrefix = "[git-ctx redacted "

// CommitTrailer returns the commit a summary names in its trailer, or "":
// the last paragraph of the summary (or the one before it when the last is
// git-ctx's redaction note) must be exactly "Commit: " followed by 40 or
// 64 lowercase hex digits.
func CommitTrailer(summary string) string {
	paras := strings.Split(summary, "\n\n")
	last := paras[len(paras)-1]
	if strings.HasPrefix(last, redactionNotePrefix) && len(paras) > 1 {
		last = paras[len(paras)-2]
	}
	c, ok := strings.CutPrefix(last, commitTrailerPrefix)
	if !ok || (len(c) != 40 && len(c) != 64) || strings.Trim(c, "0123456789abcdef") != "" {
		return ""
	}
	return c
}

// link records the commit links of a record just inserted at seq of its
// device's chain in repoID. A record naming a commit links to it, and so do
// the records before it (at most LinkWindow back) of the same device and
// branch made after the device's previous commit record on that branch,
// that name no commit themselves and, when the commit record has a
// session, are of that session. Earlier rows of the chain are always
// inserted first (a chain is indexed in order), so the links of a rebuild
// and of an incremental refresh are the same.
func (w *Writer) link(repoID, hash, device, branch, session, summary string, seq int) error {
	commit := CommitTrailer(summary)
	if commit == "" {
		return nil
	}
	prev := -1
	s, err := w.stmt(`SELECT max(seq) FROM commit_links WHERE repo_id = ? AND device = ? AND branch = ? AND kind = 'commit' AND seq < ?`)
	if err != nil {
		return err
	}
	var p sql.NullInt64
	if err := s.QueryRowContext(w.exCtx, repoID, device, branch, seq).Scan(&p); err != nil {
		return fmt.Errorf("cache commit links: %w", err)
	}
	if p.Valid {
		prev = int(p.Int64)
	}
	prev = max(prev, seq-LinkWindow-1)
	q, err := w.stmt(`SELECT r.hash, r.seq, c.session FROM records r JOIN checkpoints c ON c.hash = r.hash
		WHERE r.repo_id = ? AND r.device = ? AND r.seq > ? AND r.seq < ? AND c.branch = ?
		AND NOT EXISTS (SELECT 1 FROM commit_links l WHERE l.record = r.hash AND l.kind = 'commit')
		ORDER BY r.seq`)
	if err != nil {
		return err
	}
	rows, err := q.QueryContext(w.exCtx, repoID, device, prev, seq, branch)
	if err != nil {
		return fmt.Errorf("cache commit links: %w", err)
	}
	type turn struct {
		hash string
		seq  int
	}
	var turns []turn
	for rows.Next() {
		var t turn
		var sess string
		if err := rows.Scan(&t.hash, &t.seq, &sess); err != nil {
			rows.Close()
			return err
		}
		if session == "" || sess == session {
			turns = append(turns, t)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	const ins = `INSERT OR IGNORE INTO commit_links(repo_id, git_commit, record, kind, device, branch, seq) VALUES (?,?,?,?,?,?,?)`
	for _, t := range turns {
		if _, err := w.exec(ins, repoID, commit, t.hash, LinkTurn, device, branch, t.seq); err != nil {
			return fmt.Errorf("cache commit link %s: %w", t.hash, err)
		}
	}
	if _, err := w.exec(ins, repoID, commit, hash, LinkCommit, device, branch, seq); err != nil {
		return fmt.Errorf("cache commit link %s: %w", hash, err)
	}
	return nil
}

// Link is one cached checkpoint linked to a code commit.
type Link struct {
	*Entry
	Commit string // the full commit id
	Kind   string // LinkCommit or LinkTurn
}

// Links returns the checkpoints of the repository ids linked to commit (a
// full commit id), verified or not (Entry.Verified says which), in chain
// order per device (devices by id): the turns first, then the record
// naming the commit.
func (d *DB) Links(ctx context.Context, repoIDs []string, commit string) ([]Link, error) {
	if len(repoIDs) == 0 {
		return nil, nil
	}
	args := []any{strings.ToLower(commit)}
	for _, id := range repoIDs {
		args = append(args, id)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT `+entryCols+`, l.kind FROM commit_links l
		JOIN checkpoints c ON c.hash = l.record JOIN records r ON r.hash = l.record
		WHERE l.git_commit = ? AND l.repo_id IN (?`+strings.Repeat(", ?", len(repoIDs)-1)+`)
		ORDER BY l.device, l.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("cache commit links: %w", err)
	}
	defer rows.Close()
	var out []Link
	for rows.Next() {
		var kind string
		e, err := scanEntry(rows, &kind)
		if err != nil {
			return nil, err
		}
		out = append(out, Link{Entry: e, Commit: strings.ToLower(commit), Kind: kind})
	}
	return out, rows.Err()
}
