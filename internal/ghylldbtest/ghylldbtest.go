// Package ghylldbtest exists for tests only: it writes ghyll memory.db
// files (ghyll's SQLite store, which `git ctx import-ghyll` and the cache
// read) with the seed document's schema, the schema ghyll's code creates
// (V2Schema, which is cache's) or one a test gives, so that the tests of
// cache, internal/checkpoints and cmd/git-ctx do not each carry a copy of
// the schemas and the writer.
// VectorKey is the key those records are signed with (the reference
// vectors').
package ghylldbtest

import (
	"crypto/ed25519"
	"database/sql"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// SeedSchema is the seed document's CREATE TABLE and indexes of ghyll's
// memory.db, verbatim (comments included).
const SeedSchema = `
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
    embedding  BLOB NOT NULL,       -- float32 array, binary
    files      TEXT NOT NULL,        -- JSON array
    tools      TEXT NOT NULL,        -- JSON array
    injections TEXT,                 -- JSON array, nullable
    sig        TEXT NOT NULL,
    verified   INTEGER DEFAULT 1,   -- 0 = unverified remote
    imported   INTEGER DEFAULT 0    -- unix timestamp of import
);

CREATE INDEX idx_checkpoints_session ON checkpoints(session);
CREATE INDEX idx_checkpoints_device ON checkpoints(device);
CREATE INDEX idx_checkpoints_repo ON checkpoints(repo);
`

// V2Schema is the schema ghyll's code creates (reference §9.2): the
// seed's columns plus plan_mode and resumed_from, with the defaults of its
// code. It is cache.GhyllCodeSchema, the one text of it, so that the
// databases the tests make are the ones `git ctx export-ghyll` writes.
const V2Schema = cache.GhyllCodeSchema

// Insert is one statement run after the schema, with its arguments.
type Insert struct {
	Query string
	Args  []any
}

// Write creates the database at path, runs schema and then every insert
// in order; any failure fails the test.
func Write(t testing.TB, path, schema string, inserts ...Insert) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	for _, in := range inserts {
		if _, err := db.Exec(in.Query, in.Args...); err != nil {
			t.Fatalf("%s: %v", in.Query, err)
		}
	}
}

// VectorKey is the key of the reference test vectors and of the records
// the tests make as ghyll would (the seed 0x01 … 0x20).
func VectorKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	return ed25519.NewKeyFromSeed(seed)
}
