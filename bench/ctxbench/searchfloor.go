package main

import (
	"database/sql"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/git-ctx/git-ctx/cache"
)

// searchFloorQuery is the FTS5 query `git ctx search refresh token` runs
// (cache's ftsQuery: each word quoted).
const searchFloorQuery = `"refresh" "token"`

var ftsChild = flag.String("fts-child", "", "(internal, -start's search floor) rank searchFloorQuery once in this cache file on a fresh read-only connection, print the query's CPU in nanoseconds and exit")

// ftsChildIfAsked is the -fts-child process: it prints the CPU of one
// ranking (ftsRanking) and reports whether it ran.
func ftsChildIfAsked() bool {
	if *ftsChild == "" {
		return false
	}
	fmt.Println(int64(ftsRanking(*ftsChild)))
	return true
}

// ftsRankingFloor is the floor of an exact search over repo's cache: the
// CPU of FTS5 ranking every match of searchFloorQuery by bm25 and keeping
// the best 20, the query alone, each time in a fresh process (this
// benchmark re-executed with -fts-child), median of runs processes. A fresh
// process is what a command is: SQLite's page cache is cold and the memory
// the ranking needs (the doclists of both words, the sorter) is new to the
// process, so the query pays the page faults of growing its heap, about
// half again the CPU of the same query repeated in one process. A search
// also joins its hits to their rows and makes snippets: the command's
// excess over `version` and this floor is that, plus what every read
// command pays (the cache's open and freshness check, the branch's tip).
func ftsRankingFloor(repo string, runs int) time.Duration {
	path := cache.Path(filepath.Join(repo, ".git", "ctx"))
	ds := make([]time.Duration, max(1, runs))
	for i := range ds {
		ds[i] = childCPU("fts floor", "-fts-child", path)
	}
	return median(ds)
}

// ftsRanking opens the cache file at path read-only (not counted) and
// returns the CPU of ranking searchFloorQuery's matches once.
func ftsRanking(path string) time.Duration {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		fatal(err)
	}
	defer db.Close()
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
	if err := rows.Err(); err != nil {
		fatal(err)
	}
	if n == 0 {
		fatal(fmt.Errorf("fts floor: %s matches nothing in %s", searchFloorQuery, path))
	}
	rows.Close()
	return selfCPU() - c0
}
