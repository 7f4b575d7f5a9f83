package cache_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// logFixture: repo1 holds devices a, b, c with ties on ts across devices
// and within one device; repo2 holds one more record. Hashes are chosen so
// that no order by hash coincides with the expected log order.
type logFixture struct {
	db                         *cache.DB
	a0, a1, b0, b1, b2, c0, r2 string
}

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	dir := isolate(t)
	f := &logFixture{
		a0: fakeHash("5a", 0), a1: fakeHash("1a", 1),
		b0: fakeHash("9b", 0), b1: fakeHash("2b", 1), b2: fakeHash("7b", 2),
		c0: fakeHash("3c", 0), r2: fakeHash("8d", 0),
	}
	mk := func(hash, dev string, ts int64, seq int, session, author string, verified bool, repo string) cache.Row {
		c := cp(hash, dev, ts)
		c.SessionID, c.AuthorID = session, author
		return cache.Row{CP: c, RepoID: repo, Seq: seq, Verified: verified}
	}
	rows := []cache.Row{
		mk(f.b0, "b", 100, 0, "s1", "bob@example.org", true, "repo1"),
		mk(f.b1, "b", 200, 1, "s1", "bob@example.org", true, "repo1"),
		mk(f.b2, "b", 200, 2, "s2", "bob@example.org", true, "repo1"),
		mk(f.a0, "a", 200, 0, "s1", "alice@example.org", true, "repo1"),
		mk(f.a1, "a", 300, 1, "s1", "alice@example.org", true, "repo1"),
		mk(f.c0, "c", 50, 0, "s3", "carol@example.org", false, "repo1"),
		mk(f.r2, "a", 1000, 0, "s1", "alice@example.org", true, "repo2"),
	}
	f.db = build(t, dir, rows...)
	return f
}

func TestLogOrderAndFilters(t *testing.T) {
	f := newLogFixture(t)
	ctx := testCtx(t)
	cases := []struct {
		name string
		q    cache.Query
		want []string
	}{
		// ts desc, then device asc, then seq desc.
		{"all", cache.Query{}, []string{f.a1, f.a0, f.b2, f.b1, f.b0, f.c0}},
		{"device", cache.Query{Device: "b"}, []string{f.b2, f.b1, f.b0}},
		{"device none", cache.Query{Device: "zz"}, nil},
		{"session", cache.Query{Session: "s1"}, []string{f.a1, f.a0, f.b1, f.b0}},
		{"author", cache.Query{Author: "alice@example.org"}, []string{f.a1, f.a0}},
		{"since inclusive", cache.Query{Since: 200}, []string{f.a1, f.a0, f.b2, f.b1}},
		{"until inclusive", cache.Query{Until: 100}, []string{f.b0, f.c0}},
		{"since and until", cache.Query{Since: 100, Until: 200}, []string{f.a0, f.b2, f.b1, f.b0}},
		{"unverified", cache.Query{Unverified: true}, []string{f.c0}},
		{"limit", cache.Query{Limit: 2}, []string{f.a1, f.a0}},
		{"limit above count", cache.Query{Limit: 50}, []string{f.a1, f.a0, f.b2, f.b1, f.b0, f.c0}},
		{"device and limit", cache.Query{Device: "b", Limit: 2}, []string{f.b2, f.b1}},
		{"session and device", cache.Query{Session: "s1", Device: "b"}, []string{f.b1, f.b0}},
		{"other repo", cache.Query{RepoID: "repo2"}, []string{f.r2}},
		{"unknown repo", cache.Query{RepoID: "nope"}, nil},
	}
	for _, c := range cases {
		q := c.q
		if q.RepoID == "" {
			q.RepoID = "repo1"
		}
		got, err := f.db.Log(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(hashes(got), c.want) {
			t.Errorf("%s: got %v, want %v", c.name, short(hashes(got)), short(c.want))
		}
	}
	// Verified flags and positions come back.
	got, _ := f.db.Log(ctx, cache.Query{RepoID: "repo1"})
	for _, e := range got {
		if (e.Hash == f.c0) == e.Verified {
			t.Errorf("%s: verified %v", e.Hash[:4], e.Verified)
		}
	}
	if got[2].Seq != 2 || got[2].DeviceID != "b" {
		t.Errorf("third entry: device %s seq %d", got[2].DeviceID, got[2].Seq)
	}
}

func short(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h[:4]
	}
	return out
}

func TestResolveCountsDevicesTips(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	var rows []cache.Row
	add := func(hash, dev, repo string, seq int) {
		rows = append(rows, cache.Row{CP: cp(hash, dev, int64(seq+1)), RepoID: repo, Seq: seq, Verified: true})
	}
	add(fakeHash("abc0", 0), "a", "repo1", 0)
	add(fakeHash("abc1", 0), "a", "repo1", 1)
	add(fakeHash("abd0", 0), "b", "repo1", 0)
	add(fakeHash("abc2", 0), "a", "repo2", 0) // other repository
	for i := 0; i < 12; i++ {
		add(fakeHash("ee", i), "c", "repo1", i)
	}
	db := build(t, dir, rows...)

	checkResolve(t, ctx, db)
	checkCounts(t, ctx, db)
	// Devices: first seen wins, default trust, sorted by id.
	// Tips: "" until set. HeadState: next position, last hash, verified.
	if err := db.Update(ctx, func(w *cache.Writer) error { return writeDevicesAndTips(t, w) }); err != nil {
		t.Fatal(err)
	}
	checkDevicesAndTips(t, ctx, db)
}

// checkResolve: hash prefixes resolve within one repository only, and a
// prefix matching more than ten records returns eleven.
func checkResolve(t *testing.T, ctx context.Context, db *cache.DB) {
	t.Helper()
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"abc", []string{fakeHash("abc0", 0), fakeHash("abc1", 0)}},
		{"ab", []string{fakeHash("abc0", 0), fakeHash("abc1", 0), fakeHash("abd0", 0)}},
		{fakeHash("abd0", 0), []string{fakeHash("abd0", 0)}},
		{"abc2", nil},
		{"f", nil},
	} {
		got, err := db.Resolve(ctx, "repo1", c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Resolve(%q) = %v, want %v", c.prefix, got, c.want)
		}
	}
	if got, err := db.Resolve(ctx, "repo1", "ee"); err != nil || len(got) != 11 {
		t.Errorf("Resolve of 12 matches: %d results (%v), want 11 (enough to report more than ten)", len(got), err)
	}
}

// checkCounts: totals and per-device counts for each repository.
func checkCounts(t *testing.T, ctx context.Context, db *cache.DB) {
	t.Helper()
	total, by, err := db.Counts(ctx, "repo1")
	if err != nil || total != 15 || by["a"] != 2 || by["b"] != 1 || by["c"] != 12 || len(by) != 3 {
		t.Errorf("Counts(repo1) = %d %v %v", total, by, err)
	}
	if total, by, err := db.Counts(ctx, "repo2"); err != nil || total != 1 || by["a"] != 1 {
		t.Errorf("Counts(repo2) = %d %v %v", total, by, err)
	}
	if total, by, err := db.Counts(ctx, "none"); err != nil || total != 0 || len(by) != 0 {
		t.Errorf("Counts(none) = %d %v %v", total, by, err)
	}
}

// writeDevicesAndTips puts three devices (one id twice), moves the tip
// twice and checks the writer's view of tips and head states.
func writeDevicesAndTips(t *testing.T, w *cache.Writer) error {
	t.Helper()
	for _, d := range []cache.Device{
		{ID: "zed", PublicKey: "K1", Fingerprint: "F1", FirstSeen: 10},
		{ID: "amy", PublicKey: "K2", Fingerprint: "F2", FirstSeen: 11, Trust: "pinned"},
		{ID: "zed", PublicKey: "K3", Fingerprint: "F3", FirstSeen: 12},
	} {
		if err := w.PutDevice(d); err != nil {
			return err
		}
	}
	if tip, err := w.Tip("refs/heads/ghyll/memory"); err != nil || tip != "" {
		t.Errorf("Writer.Tip before SetTip = %q, %v", tip, err)
	}
	if err := w.SetTip("refs/heads/ghyll/memory", "c1"); err != nil {
		return err
	}
	if err := w.SetTip("refs/heads/ghyll/memory", "c2"); err != nil {
		return err
	}
	n, last, verified, err := w.HeadState("repo1", "a")
	if err != nil || n != 2 || last != fakeHash("abc1", 0) || !verified {
		t.Errorf("HeadState(repo1, a) = %d %s %v %v", n, last, verified, err)
	}
	n, last, verified, err = w.HeadState("repo1", "nobody")
	if err != nil || n != 0 || last != "" || !verified {
		t.Errorf("HeadState of an unknown device = %d %q %v %v", n, last, verified, err)
	}
	return nil
}

// checkDevicesAndTips reads back what writeDevicesAndTips stored.
func checkDevicesAndTips(t *testing.T, ctx context.Context, db *cache.DB) {
	t.Helper()
	devs, err := db.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0] != (cache.Device{ID: "amy", PublicKey: "K2", Fingerprint: "F2", FirstSeen: 11, Trust: "pinned"}) ||
		devs[1] != (cache.Device{ID: "zed", PublicKey: "K1", Fingerprint: "F1", FirstSeen: 10, Trust: "tofu"}) {
		t.Errorf("Devices = %+v", devs)
	}
	if tip, err := db.Tip(ctx, "refs/heads/ghyll/memory"); err != nil || tip != "c2" {
		t.Errorf("Tip = %q, %v", tip, err)
	}
	if tip, err := db.Tip(ctx, "refs/heads/other"); err != nil || tip != "" {
		t.Errorf("Tip of an unknown ref = %q, %v", tip, err)
	}
}

func TestQuarantineDedup(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	db := build(t, dir)
	before := time.Now().Unix()
	err := db.Update(ctx, func(w *cache.Writer) error {
		for _, q := range []cache.Quarantined{
			{Ref: "R", RepoID: "repo1", Device: "d", Record: "h1", Reason: "hash_mismatch", Detail: "x", Seen: 100},
			{Ref: "R", RepoID: "repo1", Device: "d", Record: "h1", Reason: "hash_mismatch", Detail: "again", Seen: 300}, // duplicate
			{Ref: "R", RepoID: "repo1", Device: "d", Record: "h1", Reason: "bad_signature", Detail: "y", Seen: 100},
			{Ref: "R2", RepoID: "repo1", Device: "d", Record: "h1", Reason: "hash_mismatch", Detail: "z", Seen: 200},
			{Ref: "R", RepoID: "", Device: "e", Record: "devices/e.pub", Reason: "malformed", Detail: "w", Seen: 50},
			{Ref: "R", RepoID: "repo2", Device: "f", Record: "h9", Reason: "broken_chain", Detail: "v"}, // Seen: now
		} {
			if err := w.AddQuarantine(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second transaction adding the same failure adds nothing either.
	if err := db.Update(ctx, func(w *cache.Writer) error {
		return w.AddQuarantine(cache.Quarantined{Ref: "R", RepoID: "repo1", Device: "d", Record: "h1", Reason: "hash_mismatch", Detail: "third", Seen: 400})
	}); err != nil {
		t.Fatal(err)
	}
	q, err := db.Quarantine(ctx, "repo1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range q {
		got = append(got, x.Ref+"/"+x.Record+"/"+x.Reason+"/"+x.Detail)
	}
	// Newest first; the repository-less row is listed for every repository.
	// Newest first, then the later insert first.
	want := []string{"R2/h1/hash_mismatch/z", "R/h1/bad_signature/y", "R/h1/hash_mismatch/x", "R/devices/e.pub/malformed/w"}
	if !slices.Equal(got, want) {
		t.Fatalf("Quarantine(repo1):\n got  %v\n want %v", got, want)
	}
	q2, err := db.Quarantine(ctx, "repo2")
	if err != nil {
		t.Fatal(err)
	}
	if len(q2) != 2 || q2[0].Record != "h9" || q2[0].Seen < before || q2[1].Record != "devices/e.pub" {
		t.Fatalf("Quarantine(repo2) = %+v", q2)
	}
}

func TestSearch(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	mk := func(hash, summary string, files []string, repo string, ts int64) cache.Row {
		c := cp(hash, "dev", ts)
		c.Summary, c.FilesTouched, c.ToolsUsed = summary, files, []string{"edit"}
		return cache.Row{CP: c, RepoID: repo, Seq: int(ts), Verified: true}
	}
	h1, h2, h3, h4, h5, h6 := fakeHash("11", 0), fakeHash("22", 0), fakeHash("33", 0), fakeHash("44", 0), fakeHash("55", 0), fakeHash("66", 0)
	db := build(t, dir,
		mk(h2, "one mention of jwt among many other words about the login page and its layout", []string{"main.go"}, "repo1", 1),
		mk(h1, "switched auth to JWT: jwt refresh tokens, jwt rotation", []string{"auth.go"}, "repo1", 2),
		mk(h3, `a "quoted" word, a-b pairs, this or that`, nil, "repo1", 3),
		mk(h4, "jwt in another repository", nil, "repo2", 4),
		mk(h5, "nothing of interest <b>bold</b> & more", []string{}, "repo1", 5),
		mk(h6, "fixed a null pointer", nil, "repo1", 6),
	)

	checkSearchJWT(t, ctx, db, h1, h2)
	checkSearchLiteral(t, ctx, db, h1, h2, h3, h5, h6)
	if hits, err := db.Search(ctx, "repo1", "kubernetes", 10, "[", "]"); err != nil || len(hits) != 0 {
		t.Errorf("absent word: %v %v", hitHashes(hits), err)
	}
	if _, err := db.Search(ctx, "repo1", "   ", 10, "[", "]"); err == nil {
		t.Errorf("blank query: no error")
	}
	if !db.FTS {
		t.Fatalf("FTS not available in a binary built with sqlite_fts5")
	}
	// ErrNoFTS needs a build without the sqlite_fts5 tag: not covered here.
}

// checkSearchJWT: ranking, snippets and markers, limits and multi-word
// queries, on the two records of repo1 that mention jwt (h1 more often).
func checkSearchJWT(t *testing.T, ctx context.Context, db *cache.DB, h1, h2 string) {
	t.Helper()
	hits, err := db.Search(ctx, "repo1", "jwt", 10, "[", "]")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Hash != h1 || hits[1].Hash != h2 {
		t.Fatalf("search jwt: %v", hitHashes(hits))
	}
	if !(hits[0].Rank < hits[1].Rank) || math.IsNaN(hits[0].Rank) {
		t.Errorf("ranks not ascending (bm25, lower is better): %v, %v", hits[0].Rank, hits[1].Rank)
	}
	for _, h := range hits {
		if !strings.Contains(strings.ToLower(h.Snippet), "[jwt]") {
			t.Errorf("snippet %q lacks the marked word", h.Snippet)
		}
		if !h.Verified || h.RepoID != "repo1" {
			t.Errorf("hit entry: verified %v repo %s", h.Verified, h.RepoID)
		}
	}
	if !strings.Contains(hits[0].Snippet, "[JWT]") {
		t.Errorf("snippet %q: the match keeps its case inside the markers", hits[0].Snippet)
	}
	if hits, err := db.Search(ctx, "repo1", "jwt", 1, "[", "]"); err != nil || len(hits) != 1 || hits[0].Hash != h1 {
		t.Errorf("limit 1: %v %v", hitHashes(hits), err)
	}
	// Other markers.
	if hits, err := db.Search(ctx, "repo1", "rotation", 5, "<<", ">>"); err != nil || len(hits) != 1 || !strings.Contains(hits[0].Snippet, "<<rotation>>") {
		t.Errorf("custom markers: %+v %v", hits, err)
	}
	// Every word must match.
	if hits, err := db.Search(ctx, "repo1", "jwt refresh", 10, "[", "]"); err != nil || len(hits) != 1 || hits[0].Hash != h1 {
		t.Errorf("two words: %v %v", hitHashes(hits), err)
	}
}

// checkSearchLiteral: punctuation in queries is taken literally, never as
// FTS5 syntax.
func checkSearchLiteral(t *testing.T, ctx context.Context, db *cache.DB, h1, h2, h3, h5, h6 string) {
	t.Helper()
	for q, want := range map[string][]string{
		"auth.go":       {h1},
		`"quoted`:       {h3},
		`quoted"`:       {h3},
		"a-b":           {h3},
		"OR":            {h3},
		"AND":           {h2},
		"NOT jwt":       nil,
		"jwt OR layout": nil,
		"main.go jwt":   {h2},
		"<b>bold</b>":   {h5},
		"&":             nil,
		"...":           nil,
		"()":            nil,
		"*":             nil,
		"jwt*":          {h1, h2},
		"NEAR(jwt":      nil,
		"col:jwt":       nil,
		"summary:jwt":   {h1, h2},
		"'":             nil,
		"^jwt":          {h1, h2},
		"{summary}":     {h1, h2, h3, h5},
		// Only the record that says "null": a nil list of files or tools
		// is not the word null.
		"null": {h6},
		"[]":   nil,
	} {
		checkSearchQuery(t, ctx, db, q, want)
	}
}

// checkSearchQuery runs one query; for a few queries only the absence of an
// error matters, for the others the set of hits must be want.
func checkSearchQuery(t *testing.T, ctx context.Context, db *cache.DB, q string, want []string) {
	t.Helper()
	hits, err := db.Search(ctx, "repo1", q, 10, "[", "]")
	if err != nil {
		t.Errorf("search %q: %v", q, err)
		return
	}
	got := hitHashes(hits)
	if q == "{summary}" || q == "jwt*" || q == "summary:jwt" || q == "^jwt" {
		// Only the absence of an error matters for these.
		return
	}
	if !sameSet(got, want) {
		t.Errorf("search %q: got %v, want %v", q, short(got), short(want))
	}
}

func hitHashes(hits []cache.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Hash
	}
	return out
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestSimilar(t *testing.T) {
	dir := isolate(t)
	ctx := testCtx(t)
	seq := 0
	mk := func(hash string, emb []float32, repo string, verified bool) cache.Row {
		c := cp(hash, "dev", 1)
		c.Embedding = emb
		seq++
		return cache.Row{CP: c, RepoID: repo, Seq: seq, Verified: verified, Rule: checkpoint.RuleSeedV1}
	}
	s1, s2, s3, s4, s5, s6, s7, s8 := fakeHash("01", 0), fakeHash("02", 0), fakeHash("03", 0), fakeHash("04", 0),
		fakeHash("05", 0), fakeHash("06", 0), fakeHash("07", 0), fakeHash("08", 0)
	s9 := fakeHash("09", 0)
	ghyll := mk(s9, []float32{1, 0, 0}, "repo1", true)
	ghyll.Rule = checkpoint.RuleGhyllV2
	db := build(t, dir,
		mk(s3, []float32{0, 1, 0}, "repo1", true),
		mk(s1, []float32{1, 0, 0}, "repo1", true),
		mk(s4, []float32{-1, 0, 0}, "repo1", true),
		mk(s2, []float32{0.9, 0.1, 0}, "repo1", true),
		mk(s5, []float32{1, 0, 0, 0}, "repo1", true), // other dimension
		mk(s6, nil, "repo1", true),                   // no embedding
		mk(s7, []float32{1, 0, 0}, "repo2", true),    // other repository
		mk(s8, []float32{0, 0, 0}, "repo1", true),    // zero vector: no score
		ghyll, // emb outside the hash
	)
	checkSimilarOrder(t, ctx, db, []string{s1, s2, s3, s4})
	checkSimilarOptions(t, ctx, db, s1, s2, s5, s9)
}

// checkSimilarOrder: records of the query's dimension in repo1 come back by
// cosine similarity, highest first, with their scores and entries.
func checkSimilarOrder(t *testing.T, ctx context.Context, db *cache.DB, want []string) {
	t.Helper()
	m, err := db.Similar(ctx, "repo1", []float32{2, 0, 0}, 10, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range m {
		got = append(got, x.Hash)
		if math.IsNaN(x.Score) {
			t.Errorf("NaN score for %s", x.Hash[:4])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Similar order: got %v, want %v", short(got), short(want))
	}
	wantScores := []float64{1, 0.9 / math.Sqrt(0.82), 0, -1}
	for i, x := range m {
		if math.Abs(x.Score-wantScores[i]) > 1e-6 {
			t.Errorf("score of %s: %v, want %v", x.Hash[:4], x.Score, wantScores[i])
		}
	}
	if m[0].Entry == nil || m[0].Checkpoint == nil || len(m[0].Embedding) != 3 {
		t.Errorf("match entry not filled: %+v", m[0].Entry)
	}
}

// checkSimilarOptions: k, the excepted hash, other dimensions, no
// embeddings, unauthenticated embeddings and refused query vectors.
func checkSimilarOptions(t *testing.T, ctx context.Context, db *cache.DB, s1, s2, s5, s9 string) {
	t.Helper()
	if m, err := db.Similar(ctx, "repo1", []float32{1, 0, 0}, 2, "", false); err != nil || len(m) != 2 || m[0].Hash != s1 || m[1].Hash != s2 {
		t.Errorf("k=2: %v", m)
	}
	if m, err := db.Similar(ctx, "repo1", []float32{1, 0, 0}, 10, s1, false); err != nil || len(m) != 3 || m[0].Hash != s2 {
		t.Errorf("except s1: %v %v", m, err)
	}
	if m, err := db.Similar(ctx, "repo1", []float32{0, 0, 0, 1}, 10, "", false); err != nil || len(m) != 1 || m[0].Hash != s5 || m[0].Score != 0 {
		t.Errorf("4 dimensions: %v %v", m, err)
	}
	if m, err := db.Similar(ctx, "repo1", []float32{1, 2}, 10, "", false); !errors.Is(err, cache.ErrQueryEmbedding) || len(m) != 0 ||
		!strings.Contains(err.Error(), "have 3, 4") {
		t.Errorf("no record of this dimension: %v %v, want cache.ErrQueryEmbedding naming 3, 4", m, err)
	}
	if m, err := db.Similar(ctx, "no-such-repo", []float32{1, 2}, 10, "", false); err != nil || len(m) != 0 {
		t.Errorf("no embeddings at all: %v %v, want no match and no error", m, err)
	}
	checkSimilarUnauthenticated(t, ctx, db, s1, s9)
}

// checkSimilarUnauthenticated: embeddings outside the hash are used only
// when asked for, and marked; zero and empty query vectors are refused.
func checkSimilarUnauthenticated(t *testing.T, ctx context.Context, db *cache.DB, s1, s9 string) {
	t.Helper()
	if m, err := db.Similar(ctx, "repo1", []float32{1, 0, 0}, 10, "", true); err != nil || len(m) != 5 || m[0].Hash != s1 || m[1].Hash != s9 {
		t.Errorf("with unauthenticated embeddings: %v %v", m, err)
	} else if u0, u1 := m[0].Unauthenticated(), m[1].Unauthenticated(); u0 != nil || len(u1) != 1 || u1[0] != "emb" {
		t.Errorf("marks: seed rule %v (want none), ghyll rule %v (want [emb])", u0, u1)
	}
	if _, err := db.Similar(ctx, "repo1", []float32{0, 0, 0}, 10, "", false); err == nil {
		t.Errorf("zero query vector: no error")
	}
	if _, err := db.Similar(ctx, "repo1", nil, 10, "", false); err == nil {
		t.Errorf("empty query vector: no error")
	}
}
