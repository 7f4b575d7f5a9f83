package main

import (
	"database/sql"
	"path/filepath"
	"time"

	"github.com/git-ctx/git-ctx/cache"
)

// searchFloorQuery is the FTS5 query `git ctx search refresh token` runs
// (cache's ftsQuery: each word quoted).
const searchFloorQuery = `"refresh" "token"`

// ftsRankingFloor is the floor of an exact search over repo's cache: the
// CPU of FTS5 ranking every match of searchFloorQuery by bm25 and keeping
// the best 20, the query alone, in this process, on a fresh read-only
// connection each time (SQLite's page cache cold, as a command's is; the
// open is not counted), median of runs. A search also joins its hits to
// their rows and makes snippets: the command's excess over `version` and
// this floor is that, plus what every read command pays (the cache's open
// and freshness check).
func ftsRankingFloor(repo string, runs int) time.Duration {
	path := cache.Path(filepath.Join(repo, ".git", "ctx"))
	ds := make([]time.Duration, max(1, runs))
	for i := range ds {
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			fatal(err)
		}
		db.SetMaxOpenConns(1)
		if err := db.Ping(); err != nil {
			fatal(err)
		}
		c0 := selfCPU()
		rows, err := db.Query(`SELECT rowid, rank FROM checkpoints_fts WHERE checkpoints_fts MATCH ? ORDER BY rank LIMIT 20`, searchFloorQuery)
		if err != nil {
			fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil || n == 0 {
			fatal(err)
		}
		rows.Close()
		ds[i] = selfCPU() - c0
		db.Close()
	}
	return median(ds)
}
