package cache_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
)

// seedTable is the seed document's CREATE TABLE and indexes, verbatim
// (comments included).
const seedTable = ghylldbtest.SeedSchema

type column struct {
	Name    string
	Type    string
	NotNull bool
	Default sql.NullString
	PK      int
}

func tableInfo(t *testing.T, db *sql.DB, table string) []column {
	t.Helper()
	rows, err := db.Query(`PRAGMA table_info(` + table + `)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var cid, notnull int
		var c column
		if err := rows.Scan(&cid, &c.Name, &c.Type, &notnull, &c.Default, &c.PK); err != nil {
			t.Fatal(err)
		}
		c.NotNull = notnull == 1
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indexColumns maps each index of table to its column names and
// uniqueness.
func indexColumns(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, "unique" FROM pragma_index_list(?)`, table)
	if err != nil {
		t.Fatal(err)
	}
	type idx struct {
		name   string
		unique int
	}
	var list []idx
	for rows.Next() {
		var i idx
		if err := rows.Scan(&i.name, &i.unique); err != nil {
			t.Fatal(err)
		}
		list = append(list, i)
	}
	rows.Close()
	out := map[string]string{}
	for _, i := range list {
		cr, err := db.Query(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, i.name)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for cr.Next() {
			var n sql.NullString
			if err := cr.Scan(&n); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, n.String)
		}
		cr.Close()
		desc := strings.Join(cols, ",")
		if i.unique == 1 {
			desc += " unique"
		}
		out[i.name] = desc
	}
	return out
}

func TestSchemaEqualsSeed(t *testing.T) {
	dir := isolate(t)
	build(t, dir)
	db := raw(t, dir)
	defer db.Close()
	got := tableInfo(t, db, "checkpoints")

	// The seed, column for column, as SQLite reports it.
	null := sql.NullString{}
	def := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	want := []column{
		{"hash", "TEXT", false, null, 1},
		{"parent", "TEXT", true, null, 0},
		{"device", "TEXT", true, null, 0},
		{"author", "TEXT", true, null, 0},
		{"ts", "INTEGER", true, null, 0},
		{"repo", "TEXT", true, null, 0},
		{"branch", "TEXT", true, null, 0},
		{"session", "TEXT", true, null, 0},
		{"turn", "INTEGER", true, null, 0},
		{"model", "TEXT", true, null, 0},
		{"summary", "TEXT", true, null, 0},
		{"embedding", "BLOB", true, null, 0},
		{"files", "TEXT", true, null, 0},
		{"tools", "TEXT", true, null, 0},
		{"injections", "TEXT", false, null, 0},
		{"sig", "TEXT", true, null, 0},
		{"verified", "INTEGER", false, def("1"), 0},
		{"imported", "INTEGER", false, def("0"), 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoints columns:\n got  %+v\n want %+v", got, want)
	}

	// And the same as a table made from the seed's text by SQLite itself.
	mem, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1)
	if _, err := mem.Exec(seedTable); err != nil {
		t.Fatal(err)
	}
	if seed := tableInfo(t, mem, "checkpoints"); !reflect.DeepEqual(got, seed) {
		t.Fatalf("checkpoints columns differ from the seed's table:\n got  %+v\n seed %+v", got, seed)
	}

	idx := indexColumns(t, db, "checkpoints")
	for name, cols := range map[string]string{
		"idx_checkpoints_session": "session",
		"idx_checkpoints_device":  "device",
		"idx_checkpoints_repo":    "repo",
	} {
		if idx[name] != cols {
			t.Errorf("index %s: got %q, want %q (all indexes: %v)", name, idx[name], cols, idx)
		}
	}
	seedIdx := indexColumns(t, mem, "checkpoints")
	for name, cols := range seedIdx {
		if idx[name] != cols {
			t.Errorf("seed index %s (%s): cache has %q", name, cols, idx[name])
		}
	}
	// No extra unique index may change what the seed's table accepts.
	for name, cols := range idx {
		if strings.HasSuffix(cols, " unique") && seedIdx[name] != cols {
			t.Errorf("extra unique index %s on %s", name, cols)
		}
	}
}

// roundTripSet covers nil versus empty lists and embedding, v2 fields, an
// unknown member, HTML and other escaped characters, a large ts and a
// float32 embedding. Every record is sealed with testKey.
func roundTripSet(t *testing.T) []*checkpoint.Checkpoint {
	t.Helper()
	key := testKey()
	nilLists := &checkpoint.Checkpoint{
		ParentHash: checkpoint.ZeroHash, DeviceID: "dev-a", AuthorID: "a@example.org",
		Timestamp: 1712345678123456789, SessionID: "s1", Turn: 1, ActiveModel: "m25", Summary: "nil lists",
	}
	empty := &checkpoint.Checkpoint{
		ParentHash: checkpoint.ZeroHash, DeviceID: "dev-b", AuthorID: "b@example.org",
		Timestamp: 1712345678123456790, SessionID: "s2", Turn: 2, ActiveModel: "m25", Summary: "empty lists",
		Embedding: []float32{}, FilesTouched: []string{}, ToolsUsed: []string{}, InjectionSig: []string{},
	}
	full := &checkpoint.Checkpoint{
		Version: 2, ParentHash: checkpoint.ZeroHash, DeviceID: "dev-c", AuthorID: "c@example.org",
		Timestamp: 1712345678123456791, RepoRemote: "git@github.com:example/repo.git", Branch: "main",
		SessionID: "s3", Turn: 3, ActiveModel: "glm5", PlanMode: true,
		ResumedFrom:  &checkpoint.ResumedFrom{Session: "s0", Hash: strings.Repeat("a", 64)},
		Summary:      "handoff: m25 → glm5 (reason: x<y & z > w) \"quoted\" \\ \u2028 tab\there\nnew line",
		Embedding:    []float32{1, -2.5, 0.1, 1e-7, 123456790, 0.33333334},
		FilesTouched: []string{"auth.go", "<b>.go"}, ToolsUsed: []string{"bash", "read_file"},
		InjectionSig: []string{"instruction_override"},
		Extra: []checkpoint.Member{
			{Key: "zeta", Value: json.RawMessage(`{"b":1,"a":[1,2,{"c":null}]}`)},
			{Key: "imported_from", Value: json.RawMessage(`"ghyll:` + strings.Repeat("b", 64) + `"`)},
			{Key: "alpha", Value: json.RawMessage(`12345678901234567890`)},
		},
	}
	out := []*checkpoint.Checkpoint{nilLists, empty, full}
	for _, c := range out {
		if err := c.Seal(key); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestRoundTripExact(t *testing.T) {
	pub := testKey().Public().(ed25519.PublicKey)
	for _, path := range []string{"rebuild", "update"} {
		t.Run(path, func(t *testing.T) {
			dir := isolate(t)
			ctx := testCtx(t)
			set := roundTripSet(t)
			var rows []cache.Row
			for i, c := range set {
				rows = append(rows, cache.Row{CP: c, RepoID: "repo1", Seq: i, Verified: true, Rule: checkpoint.RuleSeedV1})
			}
			db := roundTripBuild(t, ctx, dir, path, rows)
			checkRoundTripEntries(t, ctx, db, set, pub)
			checkRoundTripColumns(t, dir, set)
		})
	}
}

// roundTripBuild fills a new cache in dir with rows, by a rebuild or
// (path "update") by appending them in one Update.
func roundTripBuild(t *testing.T, ctx context.Context, dir, path string, rows []cache.Row) *cache.DB {
	t.Helper()
	if path == "rebuild" {
		return build(t, dir, rows...)
	}
	db := build(t, dir)
	if err := db.Update(ctx, func(w *cache.Writer) error {
		for _, r := range rows {
			if err := w.AddCheckpoint(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// checkRoundTripEntries: every record of set comes back byte-exact through
// both Get and Log.
func checkRoundTripEntries(t *testing.T, ctx context.Context, db *cache.DB, set []*checkpoint.Checkpoint, pub ed25519.PublicKey) {
	t.Helper()
	log, err := db.Log(ctx, cache.Query{RepoID: "repo1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != len(set) {
		t.Fatalf("log has %d entries, want %d", len(log), len(set))
	}
	byHash := map[string]*cache.Entry{}
	for _, e := range log {
		byHash[e.Hash] = e
	}
	for i, orig := range set {
		want, err := orig.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Get(ctx, orig.Hash)
		if err != nil || got == nil {
			t.Fatalf("Get %s: %v %v", orig.Hash, got, err)
		}
		for what, e := range map[string]*cache.Entry{"Get": got, "Log": byHash[orig.Hash]} {
			checkRoundTripEntry(t, what, i, e, orig, want, pub)
		}
	}
}

// checkRoundTripEntry compares one cached entry (read by what) with the
// record orig it came from, whose file bytes are want.
func checkRoundTripEntry(t *testing.T, what string, i int, e *cache.Entry, orig *checkpoint.Checkpoint, want []byte, pub ed25519.PublicKey) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: %s missing", what, orig.Hash)
	}
	b, err := e.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s of record %d: MarshalFile differs\n got  %s\n want %s", what, i, b, want)
	}
	if (e.Embedding == nil) != (orig.Embedding == nil) || (e.FilesTouched == nil) != (orig.FilesTouched == nil) ||
		(e.ToolsUsed == nil) != (orig.ToolsUsed == nil) {
		t.Errorf("%s of record %d: nil/empty lost: emb %v files %v tools %v", what, i,
			e.Embedding == nil, e.FilesTouched == nil, e.ToolsUsed == nil)
	}
	if !reflect.DeepEqual(e.Embedding, orig.Embedding) && len(orig.Embedding) > 0 {
		t.Errorf("%s of record %d: embedding %v, want %v", what, i, e.Embedding, orig.Embedding)
	}
	if rule, err := e.Checkpoint.Verify(pub); err != nil || rule != checkpoint.RuleSeedV1 {
		t.Errorf("%s of record %d: sealed record no longer verifies: %v %v", what, i, rule, err)
	}
	if e.RepoID != "repo1" || e.Seq != i || !e.Verified || e.Imported != 0 {
		t.Errorf("%s of record %d: repo %q seq %d verified %v imported %d", what, i, e.RepoID, e.Seq, e.Verified, e.Imported)
	}
}

// checkRoundTripColumns reads the seed's columns directly.
func checkRoundTripColumns(t *testing.T, dir string, set []*checkpoint.Checkpoint) {
	t.Helper()
	// The seed's BLOB: float32 little-endian, concatenated; an
	// absent or empty embedding is an empty blob (NOT NULL).
	r := raw(t, dir)
	defer r.Close()
	for _, c := range set {
		var blob []byte
		if err := r.QueryRow(`SELECT embedding FROM checkpoints WHERE hash = ?`, c.Hash).Scan(&blob); err != nil {
			t.Fatal(err)
		}
		if len(blob) != 4*len(c.Embedding) {
			t.Errorf("embedding blob of %s: %d bytes, want %d", c.Summary, len(blob), 4*len(c.Embedding))
		}
	}
	var blob []byte
	if err := r.QueryRow(`SELECT substr(embedding, 1, 12) FROM checkpoints WHERE hash = ?`, set[2].Hash).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	// 1.0 = 0x3f800000, -2.5 = 0xc0200000, 0.1f = 0x3dcccccd.
	wantBlob := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0, 0xcd, 0xcc, 0xcc, 0x3d}
	if !bytes.Equal(blob, wantBlob) {
		t.Errorf("embedding blob starts % x, want % x", blob, wantBlob)
	}
	// The seed's JSON-array columns hold JSON; injections is NULL
	// for a nil list.
	var files, tools string
	var inj sql.NullString
	if err := r.QueryRow(`SELECT files, tools, injections FROM checkpoints WHERE hash = ?`, set[2].Hash).Scan(&files, &tools, &inj); err != nil {
		t.Fatal(err)
	}
	if files != `["auth.go","\u003cb\u003e.go"]` || tools != `["bash","read_file"]` || inj.String != `["instruction_override"]` {
		t.Errorf("list columns: files %s tools %s injections %v", files, tools, inj)
	}
	if err := r.QueryRow(`SELECT injections FROM checkpoints WHERE hash = ?`, set[0].Hash).Scan(&inj); err != nil {
		t.Fatal(err)
	}
	if inj.Valid {
		t.Errorf("injections of a nil list: %q, want NULL", inj.String)
	}
}

// TestUncoveredMembersNotKept: unknown members are cached only when the
// record's hash covers them (git-ctx's rule); under ghyll's rule, or when no
// rule matched, they are dropped and the embedding is marked.
func TestUncoveredMembersNotKept(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	set := roundTripSet(t)
	full := set[len(set)-1]
	if len(full.Extra) == 0 || len(full.Embedding) == 0 {
		t.Fatal("setup: the full record has no unknown members or no embedding")
	}
	var rows []cache.Row
	for i, rule := range []checkpoint.Rule{checkpoint.RuleSeedV1, checkpoint.RuleGhyllV2, ""} {
		c := *full
		c.Hash = fakeHash(fmt.Sprintf("e%d", i), 0)
		rows = append(rows, cache.Row{CP: &c, RepoID: "repo1", Seq: i, Verified: rule != "", Rule: rule})
	}
	db := build(t, dir, rows...)
	for i, r := range rows {
		e, err := db.Get(ctx, r.CP.Hash)
		if err != nil || e == nil {
			t.Fatalf("Get: %v %v", e, err)
		}
		if e.Rule != r.Rule || len(e.Embedding) != len(full.Embedding) {
			t.Errorf("row %d: rule %q, %d emb values; want %q, %d", i, e.Rule, len(e.Embedding), r.Rule, len(full.Embedding))
		}
		keep := r.Rule == checkpoint.RuleSeedV1
		if keep != (len(e.Extra) == len(full.Extra)) || !keep && len(e.Extra) != 0 {
			t.Errorf("row %d (rule %q): %d unknown members cached, want %v", i, r.Rule, len(e.Extra), keep)
		}
		if u := e.Unauthenticated(); (r.Rule == checkpoint.RuleGhyllV2) != (len(u) == 1 && u[0] == "emb") {
			t.Errorf("row %d (rule %q): unauthenticated %v", i, r.Rule, u)
		}
	}
}

func TestAddCheckpointIsAppendOnly(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	orig := cp(fakeHash("a1", 1), "dev", 100)
	orig.Summary = "original alpha"
	orig.FilesTouched = []string{"one.go"}
	db := build(t, dir, cache.Row{CP: orig, RepoID: "repo1", Seq: 0, Verified: true})
	want, _ := orig.MarshalFile()

	changed := *orig
	changed.Summary = "changed beta"
	changed.FilesTouched = []string{"two.go"}
	changed.Timestamp = 999
	// Twice in one transaction, then once more in another.
	for round := 0; round < 2; round++ {
		if err := db.Update(ctx, func(w *cache.Writer) error {
			for i := 0; i < 2-round; i++ {
				if err := w.AddCheckpoint(cache.Row{CP: &changed, RepoID: "repo2", Seq: 7, Verified: false, Imported: 5}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	e, err := db.Get(ctx, orig.Hash)
	if err != nil || e == nil {
		t.Fatalf("Get: %v %v", e, err)
	}
	got, _ := e.MarshalFile()
	if !bytes.Equal(got, want) || e.RepoID != "repo1" || e.Seq != 0 || !e.Verified || e.Imported != 0 {
		t.Fatalf("row changed by a second insert:\n%s\nrepo %s seq %d verified %v imported %d", got, e.RepoID, e.Seq, e.Verified, e.Imported)
	}
	for repo, n := range map[string]int{"repo1": 1, "repo2": 0} {
		total, _, err := db.Counts(ctx, repo)
		if err != nil || total != n {
			t.Fatalf("Counts(%s) = %d, %v; want %d", repo, total, err, n)
		}
	}
	if hits, err := db.Search(ctx, "repo1", "beta", 10, "[", "]"); err != nil || len(hits) != 0 {
		t.Fatalf("search for the ignored row's text: %d hits, %v", len(hits), err)
	}
	if hits, err := db.Search(ctx, "repo1", "alpha", 10, "[", "]"); err != nil || len(hits) != 1 {
		t.Fatalf("search for the original text: %d hits, %v", len(hits), err)
	}
	r := raw(t, dir)
	defer r.Close()
	var n int
	if err := r.QueryRow(`SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM records)`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows in checkpoints+records: %d, %v; want 2", n, err)
	}
	// The full-text index holds the row once: an integrity check of an
	// external-content FTS5 table fails when the index and the content
	// disagree.
	if _, err := r.Exec(`INSERT INTO checkpoints_fts(checkpoints_fts) VALUES ('integrity-check')`); err != nil {
		t.Fatalf("fts integrity-check: %v", err)
	}
}
