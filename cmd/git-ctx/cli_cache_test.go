package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
	"github.com/git-ctx/git-ctx/internal/testrepo"
	_ "github.com/mattn/go-sqlite3"
)

// ---- ghyll memory.db fixtures (independent of git-ctx's own packages) ----

// ghyllCP is a checkpoint as ghyll's code makes it.
type ghyllCP struct {
	V         int
	Hash      string
	Parent    string
	Device    string
	TS        int64
	Session   string
	Turn      int
	Model     string
	Summary   string
	Files     []string // nil is hashed as null and stored as '[]'
	Sig       string
	stored    string // summary stored in the database, when different
	signedBy  ed25519.PrivateKey
	canonical string
}

// seal computes ghyll's v2 canonical hash (a map of typed values, keys
// sorted by encoding/json, emb left out, optional members absent) and signs
// the hash string.
func (c *ghyllCP) seal(t *testing.T, key ed25519.PrivateKey) {
	t.Helper()
	fields := map[string]any{
		"v": c.V, "parent": c.Parent, "device": c.Device, "author": c.Device, "ts": c.TS,
		"repo": "", "branch": "", "session": c.Session, "turn": c.Turn, "model": c.Model,
		"summary": c.Summary, "files": c.Files, "tools": []string(nil),
	}
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	c.canonical = string(b)
	c.Hash = hex.EncodeToString(sum[:])
	c.Sig = hex.EncodeToString(ed25519.Sign(key, []byte(c.Hash)))
	c.signedBy = key
}

// cacheWriteGhyllDB writes rows into a new ghyll memory.db at path, the way
// ghyll's store does (nil lists as '[]', empty embedding blob).
func cacheWriteGhyllDB(t *testing.T, path string, rows ...*ghyllCP) {
	t.Helper()
	var inserts []ghylldbtest.Insert
	for _, r := range rows {
		files := "[]"
		if r.Files != nil {
			b, _ := json.Marshal(r.Files)
			files = string(b)
		}
		summary := r.Summary
		if r.stored != "" {
			summary = r.stored
		}
		inserts = append(inserts, ghylldbtest.Insert{
			Query: `INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig)
			VALUES (?,?,?,?,?,'','',?,?,?,?,x'',?,'[]',NULL,?)`,
			Args: []any{r.Hash, r.Parent, r.Device, r.Device, r.TS, r.Session, r.Turn, r.Model, summary, files, r.Sig},
		})
	}
	ghylldbtest.Write(t, path, ghylldbtest.SeedSchema, inserts...)
}

// cacheWriteGhyllKey writes <dir>/<device>.pub.
func cacheWriteGhyllKey(t *testing.T, dir, device string, pub ed25519.PublicKey) {
	t.Helper()
	testrepo.WriteFile(t, filepath.Join(dir, device+".pub"), string(pem.EncodeToMemory(&pem.Block{Type: "ED25519 PUBLIC KEY", Bytes: pub})))
}

func cacheTime(t *testing.T, s string) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixNano()
}

// ---- comparing the log with the branch ----

// cacheLogEntries runs `git ctx log --json ARGS` and returns each element
// raw, compacted.
func cacheLogEntries(t *testing.T, dir string, env []string, args ...string) []string {
	t.Helper()
	r := inproc.Ctx(t, dir, env, append([]string{"log", "--json"}, args...)...)
	testrepo.WantCode(t, "log --json", r, 0)
	return testrepo.LogEntries(t, r.Stdout)
}

func cacheCompact(t *testing.T, b []byte) string { t.Helper(); return testrepo.Compact(t, b) }

// cacheWantLogEqualsBranch: `git ctx log --json` lists exactly the
// checkpoint files of this repository on the branch, each element being the
// file's JSON plus "verified" (true unless listed in unverified).
func cacheWantLogEqualsBranch(t *testing.T, dir string, env []string, unverified map[string]bool) int {
	t.Helper()
	st := inproc.Status(t, dir, env)
	return testrepo.WantLogEqualsBranch(t, dir, env, st, cacheLogEntries(t, dir, env), unverified)
}

// cacheCheckpointPath finds the file of hash in repoID on the branch,
// whatever the layout's directory fan-out.
func cacheCheckpointPath(t *testing.T, dir string, env []string, repoID, hash string) string {
	t.Helper()
	for _, p := range testrepo.BranchPaths(t, dir, env) {
		if strings.HasPrefix(p, "repos/"+repoID+"/checkpoints/") && strings.HasSuffix(p, "/"+hash+".json") {
			return p
		}
	}
	t.Fatalf("no file for checkpoint %s on the branch", hash)
	return ""
}

func cacheHashes(t *testing.T, entries []string) []string {
	t.Helper()
	out := make([]string, len(entries))
	for i, e := range entries {
		var h struct {
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(e), &h); err != nil {
			t.Fatal(err)
		}
		out[i] = h.Hash
	}
	return out
}

// ---- the query fixture ----

// cacheFixture: one repository with two imported ghyll records from 2024
// and four recent checkpoints by two devices.
type cacheFixture struct {
	s                    *testrepo.Sandbox
	repo                 string
	env, env2            []string
	dev1, dev2           string
	old1, old2           string // imported, 2024-01-15 and 2024-06-15 12:00 UTC
	jwt, db, front, jwt2 string
}

func newCacheFixture(t *testing.T) *cacheFixture {
	t.Helper()
	s := newSandbox(t)
	f := &cacheFixture{s: s, repo: testrepo.NewRepo(t, s, "repo"), env: s.Env("dev1"), env2: s.Env("dev2")}
	inproc.MustCtx(t, f.repo, f.env, "init")

	key := ghylldbtest.VectorKey()
	g1 := &ghyllCP{V: 2, Parent: testrepo.ZeroHash, Device: "alice-laptop", TS: cacheTime(t, "2024-01-15T12:00:00Z"),
		Session: "alice-laptop-1", Turn: 1, Model: "m25", Summary: "turn 1 imported legacy"}
	g1.seal(t, key)
	g2 := &ghyllCP{V: 2, Parent: g1.Hash, Device: "alice-laptop", TS: cacheTime(t, "2024-06-15T12:00:00Z"),
		Session: "alice-laptop-1", Turn: 2, Model: "m25", Summary: "turn 2 imported legacy"}
	g2.seal(t, key)
	dbPath := filepath.Join(s.Root, "memory.db")
	keys := filepath.Join(s.Root, "ghyll-keys")
	cacheWriteGhyllDB(t, dbPath, g1, g2)
	cacheWriteGhyllKey(t, keys, "alice-laptop", key.Public().(ed25519.PublicKey))
	out := inproc.MustCtx(t, f.repo, f.env, "import", "--ghyll-db", dbPath, "--ghyll-keys", keys, "--json")
	var res struct {
		Imported []struct{ From, Hash, Rule string } `json:"imported"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Imported) != 2 {
		t.Fatalf("import: %v\n%s", err, out)
	}
	f.old1, f.old2 = res.Imported[0].Hash, res.Imported[1].Hash

	e1 := filepath.Join(s.Root, "e1.json")
	testrepo.WriteFile(t, e1, "[1, 0, 0]")
	e2 := filepath.Join(s.Root, "e2.f32")
	testrepo.WriteFile(t, e2, string(cacheF32(0.9, 0.1, 0)))
	e3 := filepath.Join(s.Root, "e3.json")
	testrepo.WriteFile(t, e3, "[0,1,0]")
	f.jwt = inproc.Checkpoint(t, f.repo, f.env, "-m", "switched auth to JWT: jwt refresh tokens and jwt rotation", "--session", "s1",
		"--file", "auth.go", "--tool", "edit", "--emb-file", e1).Hash
	f.db = inproc.Checkpoint(t, f.repo, f.env, "-m", "database migration for users", "--session", "s1", "--emb-file", e2).Hash
	r := execute(t, f.repo, f.env2, nil, "git", "-c", "user.email=bob@example.org", "ctx", "checkpoint", "--json",
		"-m", "frontend tweaks", "--session", "s2", "--emb-file", e3)
	testrepo.WantCode(t, "checkpoint as dev2", r, 0)
	f.front = testrepo.DecodeRecord(t, []byte(r.Stdout)).Hash
	f.jwt2 = inproc.Checkpoint(t, f.repo, f.env, "-m", "jwt again, without an embedding, after a long afternoon of other unrelated work", "--session", "s3").Hash
	f.dev1, f.dev2 = inproc.Status(t, f.repo, f.env).Device, inproc.Status(t, f.repo, f.env2).Device
	return f
}

func cacheF32(vals ...float32) []byte {
	out := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// TestCacheLogFlags: log lists what the branch holds, filtered by -n,
// --device, --session, --author, --since and --until; the text form; and
// --unverified on a clean branch and after a record was tampered with.
func TestCacheLogFlags(t *testing.T) {
	f := newCacheFixture(t)
	all := []string{f.jwt2, f.front, f.db, f.jwt, f.old2, f.old1}
	if n := cacheWantLogEqualsBranch(t, f.repo, f.env, nil); n != 6 {
		t.Fatalf("%d checkpoints, want 6", n)
	}
	cacheLogFilters(t, f, all)
	cacheLogText(t, f, all)
	cacheLogUnverifiedClean(t, f)
	cacheLogUnverifiedTampered(t, f)
}

// cacheLogFilters: each filter flag, alone and combined, and bad values.
func cacheLogFilters(t *testing.T, f *cacheFixture, all []string) {
	t.Helper()
	// Imported records keep their 2024 timestamps and name their origin.
	for _, e := range cacheLogEntries(t, f.repo, f.env, "--author", "alice-laptop") {
		if !strings.Contains(e, `"imported_from":"ghyll:`) {
			t.Errorf("imported record without imported_from: %s", e)
		}
	}
	cases := []struct {
		args []string
		want []string
	}{
		{nil, all},
		{[]string{"-n", "2"}, all[:2]},
		{[]string{"--max-count", "1"}, all[:1]},
		{[]string{"-n", "0"}, all},
		{[]string{"--device", f.dev2}, []string{f.front}},
		{[]string{"--device", f.dev1, "-n", "3"}, []string{f.jwt2, f.db, f.jwt}},
		{[]string{"--device", "nobody"}, []string{}},
		{[]string{"--session", "s1"}, []string{f.db, f.jwt}},
		{[]string{"--author", "bob@example.org"}, []string{f.front}},
		{[]string{"--author", "test@example.org"}, []string{f.jwt2, f.db, f.jwt}},
		{[]string{"--author", "alice-laptop"}, []string{f.old2, f.old1}},
		{[]string{"--since", "2024-03-01"}, all[:5]},
		{[]string{"--since", "2024-03-01T00:00:00Z"}, all[:5]},
		{[]string{"--since", "2024-06-15T12:00:00Z"}, all[:5]},
		{[]string{"--since", "2024-06-15T12:00:00.000000001Z"}, all[:4]},
		{[]string{"--until", "2024-03-01"}, []string{f.old1}},
		{[]string{"--until", "2024-06-15T12:00:00Z"}, []string{f.old2, f.old1}},
		{[]string{"--since", "2024-01-15T12:00:00Z", "--until", "2024-01-15T12:00:00Z"}, []string{f.old1}},
		{[]string{"--since", "2024-01-01", "--until", "2024-12-31"}, []string{f.old2, f.old1}},
		{[]string{"--since", "1h"}, all[:4]},
		{[]string{"--since", "90m"}, all[:4]},
		{[]string{"--since", "7d"}, all[:4]},
		{[]string{"--since", "2w"}, all[:4]},
		{[]string{"--until", "1h"}, []string{f.old2, f.old1}},
		{[]string{"--until", "2w", "--author", "alice-laptop", "-n", "1"}, []string{f.old2}},
	}
	for _, c := range cases {
		got := cacheHashes(t, cacheLogEntries(t, f.repo, f.env, c.args...))
		if !slices.Equal(got, c.want) {
			t.Errorf("log %q: got %v, want %v", c.args, cacheShort(got), cacheShort(c.want))
		}
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--until", "5x"}, {"-n", "-1"}, {"--since", "-3d"}} {
		r := inproc.Ctx(t, f.repo, f.env, append([]string{"log"}, bad...)...)
		testrepo.WantCode(t, fmt.Sprintf("log %q", bad), r, 2)
		testrepo.WantOneLine(t, fmt.Sprintf("log %q stderr", bad), r.Stderr)
	}
}

// cacheLogText: one line per checkpoint, hash prefix first, device named.
func cacheLogText(t *testing.T, f *cacheFixture, all []string) {
	t.Helper()
	out := inproc.MustCtx(t, f.repo, f.env, "log")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("log text: %d lines\n%s", len(lines), out)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, all[i][:12]+" ") || strings.Contains(l, "UNVERIFIED") {
			t.Errorf("log line %d: %q", i, l)
		}
	}
	if !strings.Contains(lines[2], " "+f.dev1+" s1/") || !strings.Contains(lines[1], " "+f.dev2+" s2/1 frontend tweaks") {
		t.Errorf("log text lines: %q", lines)
	}
}

// cacheLogUnverifiedClean: --unverified on a clean branch: both lists
// present and empty.
func cacheLogUnverifiedClean(t *testing.T, f *cacheFixture) {
	t.Helper()
	r := inproc.Ctx(t, f.repo, f.env, "log", "--unverified", "--json")
	testrepo.WantCode(t, "log --unverified --json", r, 0)
	if cacheCompact(t, []byte(r.Stdout)) != `{"checkpoints":[],"quarantine":[]}` {
		t.Errorf("log --unverified --json on a clean branch: %s", r.Stdout)
	}
	if out := inproc.MustCtx(t, f.repo, f.env, "log", "--unverified"); out != "" {
		t.Errorf("log --unverified on a clean branch: %q", out)
	}
}

// cacheLogUnverifiedTampered: a fresh checkpoint is tampered with before
// any command refreshed the cache (checkpoint itself does not read it);
// log --unverified reports it in both forms and log marks it.
func cacheLogUnverifiedTampered(t *testing.T, f *cacheFixture) {
	t.Helper()
	st := inproc.Status(t, f.repo, f.env)
	bad2 := inproc.Checkpoint(t, f.repo, f.env, "-m", "tamper me", "--session", "s9")
	p := cacheCheckpointPath(t, f.repo, f.env, st.RepoID, bad2.Hash)
	body := testrepo.BranchFile(t, f.repo, f.env, p)
	edited := strings.Replace(body, `"summary": "tamper me"`, `"summary": "tampered"`, 1)
	if edited == body {
		t.Fatalf("setup: summary not found in %s", body)
	}
	testrepo.RewriteBranch(t, f.repo, f.env, "tamper", testrepo.FileEdit{Path: p, Content: edited})
	r := inproc.Ctx(t, f.repo, f.env, "log", "--unverified", "--json")
	testrepo.WantCode(t, "log --unverified --json", r, 0)
	var un struct {
		Quarantine  []map[string]any `json:"quarantine"`
		Checkpoints []map[string]any `json:"checkpoints"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&un); err != nil {
		t.Fatalf("log --unverified --json: %v\n%s", err, r.Stdout)
	}
	if len(un.Quarantine) != 1 || len(un.Checkpoints) != 1 {
		t.Fatalf("log --unverified --json: %s", r.Stdout)
	}
	q := un.Quarantine[0]
	if q["ref"] != testrepo.MemRef || q["repo_id"] != st.RepoID || q["device"] != f.dev1 || q["record"] != bad2.Hash ||
		q["reason"] != "hash_mismatch" || q["detail"] == "" || q["seen"] == nil || len(q) != 7 {
		t.Errorf("quarantine entry: %v", q)
	}
	c := un.Checkpoints[0]
	if c["hash"] != bad2.Hash || c["verified"] != false || c["summary"] != "tampered" {
		t.Errorf("unverified checkpoint: %v", c)
	}
	out := inproc.MustCtx(t, f.repo, f.env, "log", "--unverified")
	if !strings.Contains(out, "REJECTED device "+f.dev1+", "+bad2.Hash[:12]+": hash_mismatch: ") ||
		!strings.Contains(out, bad2.Hash[:12]+" ") || !strings.Contains(out, " UNVERIFIED tampered") {
		t.Errorf("log --unverified text:\n%s", out)
	}
	if out := inproc.MustCtx(t, f.repo, f.env, "log", "-n", "1"); !strings.Contains(out, "UNVERIFIED") {
		t.Errorf("log does not mark the unverified record: %q", out)
	}
	cacheWantLogEqualsBranch(t, f.repo, f.env, map[string]bool{bad2.Hash: true})
	if st := inproc.Status(t, f.repo, f.env); st.Checkpoints != 7 {
		t.Errorf("status after tampering: %+v", st)
	}
}

func cacheShort(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		if len(h) > 8 {
			h = h[:8]
		}
		out[i] = h
	}
	return out
}

// TestCacheSearchSimilarShowReindex: full-text search (order, marks,
// --json ranks, odd queries, no match), similar (--to, --emb-file JSON and
// raw, -k, dimension and argument errors), show of an ambiguous prefix,
// and reindex / rebuilding a deleted or damaged cache.
func TestCacheSearchSimilarShowReindex(t *testing.T) {
	f := newCacheFixture(t)
	t.Run("search", func(t *testing.T) {
		cacheSearchText(t, f)
		cacheSearchJSON(t, f)
		cacheSearchQueries(t, f)
	})
	t.Run("similar", func(t *testing.T) {
		cacheSimilarScores(t, f)
		cacheSimilarErrors(t, f)
	})
	t.Run("show ambiguous", func(t *testing.T) { cacheShowAmbiguous(t, f) })
	t.Run("reindex", func(t *testing.T) { cacheReindex(t, f) })
}

// cacheSearchText: the record saying jwt twice comes first; matches are
// marked.
func cacheSearchText(t *testing.T, f *cacheFixture) {
	t.Helper()
	r := inproc.Ctx(t, f.repo, f.env, "search", "jwt")
	testrepo.WantCode(t, "search jwt", r, 0)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("search jwt: %q", r.Stdout)
	}
	got := []string{lines[0][:12], lines[1][:12]}
	if !(got[0] == f.jwt[:12] && got[1] == f.jwt2[:12]) {
		t.Errorf("search jwt order: %v (want the record saying jwt twice first)", got)
	}
	for _, l := range lines {
		if !strings.Contains(strings.ToLower(l), "[jwt]") {
			t.Errorf("search line without a marked match: %q", l)
		}
	}
}

// cacheSearchJSON: --json hits carry a plain snippet and a negative bm25
// rank, ordered by rank; -n limits them.
func cacheSearchJSON(t *testing.T, f *cacheFixture) {
	t.Helper()
	r := inproc.Ctx(t, f.repo, f.env, "search", "jwt", "--json")
	testrepo.WantCode(t, "search --json", r, 0)
	var hits []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &hits); err != nil || len(hits) != 2 {
		t.Fatalf("search --json: %v\n%s", err, r.Stdout)
	}
	for _, h := range hits {
		snip, ok1 := h["snippet"].(string)
		rank, ok2 := h["rank"].(float64)
		if !ok1 || !ok2 || !strings.Contains(strings.ToLower(snip), "jwt") || strings.Contains(snip, "[") || h["verified"] != true {
			t.Errorf("search --json hit: %v", h)
		}
		if math.IsNaN(rank) || rank >= 0 {
			t.Errorf("rank %v: want a negative bm25 score", rank)
		}
	}
	if hits[0]["rank"].(float64) > hits[1]["rank"].(float64) {
		t.Errorf("search --json not ordered by rank: %v, %v", hits[0]["rank"], hits[1]["rank"])
	}
	if r := inproc.Ctx(t, f.repo, f.env, "search", "-n", "1", "jwt", "--json"); r.Code != 0 || strings.Count(r.Stdout, `"snippet"`) != 1 {
		t.Errorf("search -n 1: %s", r)
	}
}

// cacheSearchQueries: a file name, FTS syntax characters (never an
// error), no match (exit 1, also with --json) and no query (exit 2).
func cacheSearchQueries(t *testing.T, f *cacheFixture) {
	t.Helper()
	if r := inproc.Ctx(t, f.repo, f.env, "search", "auth.go"); r.Code != 0 || !strings.HasPrefix(r.Stdout, f.jwt[:12]) {
		t.Errorf("search auth.go: %s", r)
	}
	for _, q := range []string{`"jwt`, "jwt)", "(", "OR", "-", "NEAR(jwt"} {
		if r := inproc.Ctx(t, f.repo, f.env, "search", q); r.Code != 0 && r.Code != 1 || r.Code == 0 && r.Stderr != "" || r.Code == 1 && r.Stderr != "git-ctx: no matches\n" {
			t.Errorf("search %q: %s", q, r)
		}
	}
	r := inproc.Ctx(t, f.repo, f.env, "search", "kubernetes")
	testrepo.WantCode(t, "search without a hit", r, 1)
	if r.Stdout != "" || r.Stderr != "git-ctx: no matches\n" {
		t.Errorf("search without a hit: want only 'no matches' on stderr, got %s", r)
	}
	// Like grep, nothing found is exit 1 in both modes; JSON still prints [].
	r = inproc.Ctx(t, f.repo, f.env, "search", "kubernetes", "--json")
	if r.Code != 1 || strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("search --json without a hit: %s", r)
	}
	testrepo.WantCode(t, "search without a query", inproc.Ctx(t, f.repo, f.env, "search"), 2)
}

// cacheMatch is one element of `git ctx similar --json`.
type cacheMatch struct {
	Hash  string  `json:"hash"`
	Score float64 `json:"score"`
}

// cacheSimilar runs `git ctx similar --json ARGS`, which must exit 0.
func cacheSimilar(t *testing.T, f *cacheFixture, args ...string) []cacheMatch {
	t.Helper()
	r := inproc.Ctx(t, f.repo, f.env, append([]string{"similar", "--json"}, args...)...)
	testrepo.WantCode(t, fmt.Sprintf("similar %q", args), r, 0)
	var ms []cacheMatch
	if err := json.Unmarshal([]byte(r.Stdout), &ms); err != nil {
		t.Fatalf("similar --json: %v\n%s", err, r.Stdout)
	}
	return ms
}

// cacheWantMatches fails unless got is hashes with scores, in order.
func cacheWantMatches(t *testing.T, what string, got []cacheMatch, hashes []string, scores []float64) {
	t.Helper()
	if len(got) != len(hashes) {
		t.Fatalf("%s: %d matches %+v, want %d", what, len(got), got, len(hashes))
	}
	for i := range got {
		if got[i].Hash != hashes[i] || math.Abs(got[i].Score-scores[i]) > 1e-5 {
			t.Errorf("%s match %d: %s %v, want %s %v", what, i, got[i].Hash[:8], got[i].Score, hashes[i][:8], scores[i])
		}
	}
}

// cacheSimilarScores: cosine scores and order for --to, --emb-file (JSON
// and raw float32) and -k.
func cacheSimilarScores(t *testing.T, f *cacheFixture) {
	t.Helper()
	similar := func(args ...string) []cacheMatch { t.Helper(); return cacheSimilar(t, f, args...) }
	want := func(what string, got []cacheMatch, hashes []string, scores []float64) {
		t.Helper()
		cacheWantMatches(t, what, got, hashes, scores)
	}
	cos := 0.9 / math.Sqrt(0.82)
	want("--to", similar("--to", f.jwt[:10]), []string{f.db, f.front}, []float64{cos, 0})
	want("--emb-file json", similar("--emb-file", filepath.Join(f.s.Root, "e1.json")), []string{f.jwt, f.db, f.front}, []float64{1, cos, 0})
	q := filepath.Join(f.s.Root, "q.f32")
	testrepo.WriteFile(t, q, string(cacheF32(0, 2, 0)))
	want("--emb-file raw", similar("--emb-file", q), []string{f.front, f.db, f.jwt}, []float64{1, 0.1 / math.Sqrt(0.82), 0})
	want("-k 1", similar("--emb-file", q, "-k", "1"), []string{f.front}, []float64{1})
}

// cacheSimilarErrors: a query of another dimension (7), the text form,
// both or neither of --to and --emb-file (2), a record without an
// embedding (1) and a zero vector.
func cacheSimilarErrors(t *testing.T, f *cacheFixture) {
	t.Helper()
	q := filepath.Join(f.s.Root, "q.f32") // written by cacheSimilarScores
	q4 := filepath.Join(f.s.Root, "q4.json")
	testrepo.WriteFile(t, q4, "[1,0,0,0]")
	// A dimension no stored embedding has is a mistake, not "no match".
	if r := inproc.Ctx(t, f.repo, f.env, "similar", "--json", "--emb-file", q4); r.Code != 7 || r.Stdout != "" ||
		!strings.Contains(r.Stderr, "it has 4 dimensions; the embeddings stored here have 3") {
		t.Errorf("a 4-dimensional query: want exit 7 naming both dimensions, got %s", r)
	}
	r := inproc.Ctx(t, f.repo, f.env, "similar", "--to", f.jwt[:10])
	testrepo.WantCode(t, "similar text", r, 0)
	if !regexp.MustCompile(`^0\.99\d\d ` + f.db[:12] + ` `).MatchString(r.Stdout) {
		t.Errorf("similar text: %q", r.Stdout)
	}
	testrepo.WantCode(t, "similar with both", inproc.Ctx(t, f.repo, f.env, "similar", "--to", f.jwt[:10], "--emb-file", q), 2)
	testrepo.WantCode(t, "similar with neither", inproc.Ctx(t, f.repo, f.env, "similar"), 2)
	r = inproc.Ctx(t, f.repo, f.env, "similar", "--to", f.jwt2[:12])
	testrepo.WantCode(t, "similar to a record without embedding", r, 1)
	testrepo.WantOneLine(t, "similar stderr", r.Stderr)
	zero := filepath.Join(f.s.Root, "zero.json")
	testrepo.WriteFile(t, zero, "[0,0,0]")
	if r := inproc.Ctx(t, f.repo, f.env, "similar", "--emb-file", zero); r.Code == 0 {
		t.Errorf("similar to a zero vector: %s", r)
	}
}

// cacheShowAmbiguous: show of a prefix two hashes share lists both (2); a
// unique prefix shows the file.
func cacheShowAmbiguous(t *testing.T, f *cacheFixture) {
	t.Helper()
	hashes := cacheHashes(t, cacheLogEntries(t, f.repo, f.env))
	find := func() (string, []string) {
		by := map[byte][]string{}
		for _, h := range hashes {
			by[h[0]] = append(by[h[0]], h)
		}
		for c, hs := range by {
			if len(hs) > 1 {
				return string(c), hs
			}
		}
		return "", nil
	}
	prefix, same := find()
	for i := 0; prefix == "" && i < 20; i++ {
		hashes = append(hashes, inproc.Checkpoint(t, f.repo, f.env, "-m", fmt.Sprintf("filler %d", i)).Hash)
		prefix, same = find()
	}
	if prefix == "" {
		t.Fatalf("setup: no two hashes share a first character: %v", hashes)
	}
	r := inproc.Ctx(t, f.repo, f.env, "show", prefix)
	testrepo.WantCode(t, "show of an ambiguous prefix", r, 2)
	testrepo.WantOneLine(t, "show stderr", r.Stderr)
	for _, h := range same {
		if !strings.Contains(r.Stderr, h) {
			t.Errorf("show %s: candidate %s not listed: %q", prefix, h, r.Stderr)
		}
	}
	r = inproc.Ctx(t, f.repo, f.env, "show", "--json", same[0][:12])
	testrepo.WantCode(t, "show of a unique prefix", r, 0)
	if !strings.HasPrefix(r.Stdout, "{\n  \"v\": 1,\n  \"hash\": \""+same[0]+"\"") {
		t.Errorf("show --json: %q", r.Stdout)
	}
}

// cacheReindex: reindex keeps the log; a deleted cache is built again on
// the next command, a damaged one rebuilt, each saying so once.
func cacheReindex(t *testing.T, f *cacheFixture) {
	t.Helper()
	before := cacheLogEntries(t, f.repo, f.env)
	r := inproc.Ctx(t, f.repo, f.env, "reindex")
	testrepo.WantCode(t, "reindex", r, 0)
	re := regexp.MustCompile(fmt.Sprintf(`^Reindexed %d checkpoints of this repository \(2 devices\) in \d+\.\d\ds\n$`, len(before)))
	if !re.MatchString(r.Stdout) || r.Stderr != "" {
		t.Errorf("reindex output: %s", r)
	}
	if after := cacheLogEntries(t, f.repo, f.env); !slices.Equal(before, after) {
		t.Errorf("log changed across reindex")
	}
	cacheWantLogEqualsBranch(t, f.repo, f.env, nil)

	// A deleted cache is built again on the next command, a damaged
	// one rebuilt; each says so once on stderr.
	gitDir := inproc.GitOut(t, f.repo, f.env, "rev-parse", "--path-format=absolute", "--git-common-dir")
	db := filepath.Join(gitDir, "ctx", "cache.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("no cache at %s: %v", db, err)
	}
	os.Remove(db)
	r = inproc.Ctx(t, f.repo, f.env, "log", "--json")
	testrepo.WantCode(t, "log without a cache", r, 0)
	if !strings.Contains(r.Stderr, "building the cache") {
		t.Errorf("no notice when building the cache: %q", r.Stderr)
	}
	testrepo.WriteFile(t, db, strings.Repeat("not a database\n", 300))
	r = inproc.Ctx(t, f.repo, f.env, "log", "--json")
	testrepo.WantCode(t, "log with a damaged cache", r, 0)
	if !strings.Contains(r.Stderr, "rebuilding the cache") {
		t.Errorf("no notice when rebuilding a damaged cache: %q", r.Stderr)
	}
	testrepo.WantOneLine(t, "log stderr with a damaged cache", r.Stderr)
	if after := cacheLogEntries(t, f.repo, f.env); !slices.Equal(before, after) {
		t.Errorf("log changed across the rebuild")
	}
}

// TestCacheImportGhyllDBExitCodes: import --ghyll-db of good rows
// (idempotent, verified, files as the reference stores them), of a row
// edited after signing and of a row without a device key (exit 1, skipped
// and named), and usage and input errors (never 0 or 1).
func TestCacheImportGhyllDBExitCodes(t *testing.T) {
	s, repo, env := newInitRepo(t)
	key := ghylldbtest.VectorKey()
	a, b := cacheImportGood(t, s, repo, env, key)
	cacheImportSkipped(t, s, repo, env, key, a, b)
	cacheImportErrors(t, s, repo, env)
}

// cacheImportGood imports vector A of the reference and its successor
// (twice, and with --json) and returns them.
func cacheImportGood(t *testing.T, s *testrepo.Sandbox, repo string, env []string, key ed25519.PrivateKey) (*ghyllCP, *ghyllCP) {
	t.Helper()

	// Vector A of the reference, and its successor.
	a := &ghyllCP{V: 2, Parent: testrepo.ZeroHash, Device: "alice-laptop", TS: 1712345678123456789,
		Session: "alice-laptop-1712345600000000000", Turn: 5, Model: "m25", Summary: "turn 5"}
	a.seal(t, key)
	if a.Hash != "cadfdb7594b1ad5ab315fdb5c912328cdf4262a329cd8e74bef4ea83b37204aa" {
		t.Fatalf("setup: vector A: %s\n%s", a.Hash, a.canonical)
	}
	b := &ghyllCP{V: 1, Parent: a.Hash, Device: "alice-laptop", TS: a.TS + 1e9, Session: a.Session, Turn: 6, Model: "m25",
		Summary: "turn 6 <b> & more", Files: []string{"auth.go"}}
	b.seal(t, key)
	good := filepath.Join(s.Root, "good.db")
	cacheWriteGhyllDB(t, good, a, b)
	// The default keys directory is ~/.ghyll/keys.
	cacheWriteGhyllKey(t, filepath.Join(s.Root, "home", ".ghyll", "keys"), "alice-laptop", key.Public().(ed25519.PublicKey))

	r := inproc.Ctx(t, repo, env, "import", "--ghyll-db", good)
	testrepo.WantCode(t, "import of good rows", r, 0)
	// The first command reading the cache builds it and may say so.
	if r.Stdout != "Imported 2 checkpoints (0 skipped, 0 already imported)\n" ||
		r.Stderr != "" && r.Stderr != "git-ctx: building the cache of the memory branch\n" {
		t.Errorf("import output: %s", r)
	}
	r = inproc.Ctx(t, repo, env, "import", "--ghyll-db", good)
	testrepo.WantCode(t, "second import", r, 0)
	if r.Stdout != "Imported 0 checkpoints (0 skipped, 2 already imported)\n" {
		t.Errorf("second import output: %s", r)
	}
	r = inproc.Ctx(t, repo, env, "import", "--ghyll-db", good, "--json")
	testrepo.WantCode(t, "import --json", r, 0)
	if cacheCompact(t, []byte(r.Stdout)) != `{"imported":[],"skipped":[],"already_imported":2}` {
		t.Errorf("import --json: %s", r.Stdout)
	}
	if rep := inproc.Verify(t, repo, env); !rep.OK || len(rep.Chains) != 1 || rep.Chains[0].Verified != 2 {
		t.Errorf("verify after import:\n%s", rep.Raw)
	}
	log := inproc.Log(t, repo, env)
	if len(log) != 2 || log[0].Summary != b.Summary || log[1].Summary != a.Summary || log[0].TS != b.TS || log[1].Files != nil {
		t.Errorf("imported records: %+v", log)
	}
	cacheWantLogEqualsBranch(t, repo, env, nil)
	if f := testrepo.BranchFile(t, repo, env, cacheCheckpointPath(t, repo, env, inproc.Status(t, repo, env).RepoID, log[1].Hash)); !strings.Contains(f, `"imported_from": "ghyll:`+a.Hash+`"`) ||
		!strings.Contains(f, `"files": null`) {
		t.Errorf("imported record file:\n%s", f)
	}
	return a, b
}

// cacheImportSkipped: one more good row and one whose summary was edited
// after signing; then a row whose device has no key. Both skip (exit 1).
func cacheImportSkipped(t *testing.T, s *testrepo.Sandbox, repo string, env []string, key ed25519.PrivateKey, a, b *ghyllCP) {
	t.Helper()
	c := &ghyllCP{V: 2, Parent: b.Hash, Device: "alice-laptop", TS: b.TS + 1e9, Session: a.Session, Turn: 7, Model: "m25", Summary: "turn 7"}
	c.seal(t, key)
	d := &ghyllCP{V: 2, Parent: c.Hash, Device: "alice-laptop", TS: c.TS + 1e9, Session: a.Session, Turn: 8, Model: "m25", Summary: "turn 8"}
	d.seal(t, key)
	d.stored = "turn 8, edited"
	mixed := filepath.Join(s.Root, "mixed.db")
	cacheWriteGhyllDB(t, mixed, a, b, c, d)
	r := inproc.Ctx(t, repo, env, "import", "--ghyll-db", mixed)
	testrepo.WantCode(t, "import with a bad row", r, 1)
	wantLines := "skipped " + d.Hash[:12] + " (device alice-laptop): hash_mismatch"
	if !strings.HasPrefix(r.Stdout, wantLines) || !strings.HasSuffix(r.Stdout, "Imported 1 checkpoints (1 skipped, 2 already imported)\n") {
		t.Errorf("import with a bad row: %s", r)
	}
	r = inproc.Ctx(t, repo, env, "import", "--ghyll-db", mixed, "--json")
	testrepo.WantCode(t, "import --json with a bad row", r, 1)
	var res struct {
		Imported []json.RawMessage `json:"imported"`
		Skipped  []struct {
			Hash, Device, Reason string
		} `json:"skipped"`
		Already int `json:"already_imported"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("import --json: %v\n%s", err, r.Stdout)
	}
	if len(res.Imported) != 0 || res.Already != 3 || len(res.Skipped) != 1 || res.Skipped[0].Hash != d.Hash ||
		res.Skipped[0].Device != "alice-laptop" || !strings.Contains(res.Skipped[0].Reason, "hash_mismatch") {
		t.Errorf("import --json with a bad row: %s", r.Stdout)
	}

	// A row whose device has no key: skipped, exit 1.
	e := &ghyllCP{V: 2, Parent: testrepo.ZeroHash, Device: "bob-desktop", TS: d.TS + 1e9, Session: "bob-1", Turn: 1, Model: "m25", Summary: "bob"}
	e.seal(t, key)
	nokey := filepath.Join(s.Root, "nokey.db")
	cacheWriteGhyllDB(t, nokey, e)
	r = inproc.Ctx(t, repo, env, "import", "--ghyll-db", nokey)
	testrepo.WantCode(t, "import without the device key", r, 1)
	if !strings.Contains(r.Stdout, "skipped "+e.Hash[:12]+" (device bob-desktop): no public key") {
		t.Errorf("import without the device key: %s", r)
	}
	cacheWantLogEqualsBranch(t, repo, env, nil)
	if rep := inproc.Verify(t, repo, env); !rep.OK {
		t.Errorf("verify after imports:\n%s", rep.Raw)
	}
}

// cacheImportErrors: usage and input errors: never 0, never 1 (which means
// "skipped").
func cacheImportErrors(t *testing.T, s *testrepo.Sandbox, repo string, env []string) {
	t.Helper()
	r := inproc.Ctx(t, repo, env, "import", "--ghyll-db", filepath.Join(s.Root, "absent.db"))
	if r.Code == 0 || r.Code == 1 {
		t.Errorf("import of a missing file: %s", r)
	}
	testrepo.WantOneLine(t, "import of a missing file", r.Stderr)
	// A missing required flag is a usage error (exit 2, README), not 1.
	if r = inproc.Ctx(t, repo, env, "import"); r.Code != 2 {
		t.Errorf("import without --ghyll-db: want exit 2 (usage), got %s", r)
	}
}

// TestCacheTamperAfterCached: a record the cache already holds is edited on
// the branch with plumbing. The next command must treat it (and the
// device's later records) as unverified, as a first build would.
func TestCacheTamperAfterCached(t *testing.T) {
	_, repo, env := newInitRepo(t)
	first := inproc.Checkpoint(t, repo, env, "-m", "original summary")
	second := inproc.Checkpoint(t, repo, env, "-m", "later one")
	st := inproc.Status(t, repo, env) // builds the cache: both verified
	p := cacheCheckpointPath(t, repo, env, st.RepoID, first.Hash)
	body := testrepo.BranchFile(t, repo, env, p)
	edited := strings.Replace(body, `"summary": "original summary"`, `"summary": "forged summary"`, 1)
	if edited == body {
		t.Fatalf("setup: summary not found in %s", body)
	}
	testrepo.RewriteBranch(t, repo, env, "tamper", testrepo.FileEdit{Path: p, Content: edited})

	r := inproc.Ctx(t, repo, env, "show", first.Hash[:12])
	testrepo.WantCode(t, "show", r, 0)
	if !strings.Contains(r.Stdout, "UNVERIFIED") || strings.Contains(r.Stdout, "original summary") {
		t.Errorf("show of the tampered record:\n%s", r.Stdout)
	}
	r = inproc.Ctx(t, repo, env, "log", "--unverified", "--json")
	testrepo.WantCode(t, "log --unverified --json", r, 0)
	var un struct {
		Quarantine  []struct{ Record, Reason string } `json:"quarantine"`
		Checkpoints []testrepo.Record                 `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &un); err != nil {
		t.Fatal(err)
	}
	if len(un.Quarantine) != 1 || un.Quarantine[0].Record != first.Hash || un.Quarantine[0].Reason != "hash_mismatch" ||
		len(un.Checkpoints) != 2 || un.Checkpoints[0].Hash != second.Hash || un.Checkpoints[1].Summary != "forged summary" {
		t.Errorf("log --unverified --json after tampering a cached record:\n%s", r.Stdout)
	}
	cacheWantLogEqualsBranch(t, repo, env, map[string]bool{first.Hash: true, second.Hash: true})
}

// TestSearchWindowConfig: every match is ranked by default; git config
// ctx.searchWindow N ranks only the N matches the cache indexed last and
// says so on stderr and in --json; a value that is not a count is a
// configuration error (exit 3) naming the key.
func TestSearchWindowConfig(t *testing.T) {
	f := newCacheFixture(t)
	r := inproc.Ctx(t, f.repo, f.env, "search", "jwt", "-n", "1", "--json")
	testrepo.WantCode(t, "search without a window", r, 0)
	if strings.Contains(r.Stdout, `"window"`) || r.Stderr != "" {
		t.Fatalf("search without ctx.searchWindow cut the ranking: %s / %q", r.Stdout, r.Stderr)
	}
	testrepo.MustGit(t, f.repo, f.env, "config", "ctx.searchWindow", "1")
	r = inproc.Ctx(t, f.repo, f.env, "search", "jwt", "-n", "1", "--json")
	testrepo.WantCode(t, "search with ctx.searchWindow 1", r, 0)
	if !strings.Contains(r.Stdout, `"window": 1`) || !strings.Contains(r.Stderr, "more than 1 checkpoints match") || !strings.Contains(r.Stderr, "ctx.searchWindow") {
		t.Fatalf("search with ctx.searchWindow 1 (2 matches): %s / %q", r.Stdout, r.Stderr)
	}
	testrepo.MustGit(t, f.repo, f.env, "config", "ctx.searchWindow", "many")
	r = inproc.Ctx(t, f.repo, f.env, "search", "jwt")
	testrepo.WantCode(t, "search with ctx.searchWindow many", r, 3)
	if !strings.Contains(r.Stderr, "ctx.searchWindow") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("a bad ctx.searchWindow: %q", r.Stderr)
	}
}
