package main

// `git ctx export --ghyll-db`: the golden database, the rows read back as
// ghyll's store reads them and verified as ghyll's VerifyCheckpoint does,
// the round trip through `git ctx import --ghyll-db`, and the careless
// user (existing file, missing or read-only directory, no branch).

import (
	"bytes"
	"crypto/ed25519"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// exportRepoID is the fixture's repository id (git config ctx.repoId).
const exportRepoID = "golden-repo"

// exportFixture is a repository whose memory branch holds, for the device
// alice-laptop (the reference vectors' key), a chain of five records
// written with plumbing: a–c under ghyll's rule (v 2; a is vector A with
// nil lists, b has empty lists and an emb its hash does not cover, c has
// every optional member), d under git-ctx's rule (v 1, emb in the hash),
// e under ghyll's rule but edited after signing (unverified), and f, an
// authentic record after it (unverified too: it links to e).
type exportFixture struct {
	s          *testrepo.Sandbox
	repo       string
	env        []string
	key        ed25519.PrivateKey
	a, b, c, d *checkpoint.Checkpoint
	bad, after *checkpoint.Checkpoint
}

func newExportFixture(t *testing.T) *exportFixture {
	t.Helper()
	s := newSandbox(t)
	f := &exportFixture{s: s, repo: testrepo.NewRepo(t, s, "repo"), env: s.Env("dev1"), key: ghylldbtest.VectorKey()}
	inproc.GitOut(t, f.repo, f.env, "config", "ctx.repoId", exportRepoID)
	inproc.MustCtx(t, f.repo, f.env, "init")

	ghyll := func(c *checkpoint.Checkpoint) *checkpoint.Checkpoint {
		t.Helper()
		h, err := c.ComputeHash(checkpoint.RuleGhyllV2)
		if err != nil {
			t.Fatal(err)
		}
		c.Hash, c.Signature = h, hex.EncodeToString(ed25519.Sign(f.key, []byte(h)))
		return c
	}
	base := func(parent string, turn int, summary string) *checkpoint.Checkpoint {
		return &checkpoint.Checkpoint{Version: 2, ParentHash: parent, DeviceID: "alice-laptop", AuthorID: "alice-laptop",
			Timestamp: 1712345678123456789 + int64(turn-5)*1e9, SessionID: "alice-laptop-1712345600000000000",
			Turn: turn, ActiveModel: "m25", Summary: summary}
	}
	f.a = ghyll(base(testrepo.ZeroHash, 5, "turn 5"))
	if f.a.Hash != "cadfdb7594b1ad5ab315fdb5c912328cdf4262a329cd8e74bef4ea83b37204aa" {
		t.Fatalf("setup: vector A hashes to %s", f.a.Hash)
	}
	b := base(f.a.Hash, 6, "turn 6")
	b.FilesTouched, b.ToolsUsed, b.Embedding = []string{}, []string{}, []float32{0.25, -1}
	f.b = ghyll(b)
	c := base(f.b.Hash, 7, "handoff: m25 → glm5 (reason: x<y & z)")
	c.RepoRemote, c.Branch, c.PlanMode = exportRepoID, "main", true
	c.ResumedFrom = &checkpoint.ResumedFrom{Session: "alice-laptop-1712000000000000000", Hash: f.a.Hash}
	c.FilesTouched, c.ToolsUsed, c.InjectionSig = []string{"auth.go"}, []string{"bash", "read_file"}, []string{"instruction_override"}
	f.c = ghyll(c)
	d := base(f.c.Hash, 8, "seed rule record")
	d.Version, d.Embedding, d.ToolsUsed = 1, []float32{0.5, -1, 3.25}, []string{"edit"}
	if err := d.Seal(f.key); err != nil {
		t.Fatal(err)
	}
	f.d = d
	f.bad = ghyll(base(f.d.Hash, 9, "turn 9"))
	f.bad.Summary = "turn 9, edited after signing"
	f.after = ghyll(base(f.bad.Hash, 10, "turn 10"))

	edits := []testrepo.FileEdit{{Path: "devices/alice-laptop.pub", Content: string(checkpoint.EncodePublicKey(f.key.Public().(ed25519.PublicKey)))}}
	var chain strings.Builder
	for _, cp := range []*checkpoint.Checkpoint{f.a, f.b, f.c, f.d, f.bad, f.after} {
		file, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		edits = append(edits, testrepo.FileEdit{Path: testrepo.CtxV1CheckpointPath(exportRepoID, cp.Hash), Content: string(file)})
		chain.Write(cp.Entry().MarshalLine())
	}
	edits = append(edits, testrepo.FileEdit{Path: "repos/" + exportRepoID + "/chains/alice-laptop/00000000.jsonl", Content: chain.String()})
	testrepo.RewriteBranch(t, f.repo, f.env, "ghyll: checkpoints", edits...)
	return f
}

func exportRun(t *testing.T, dir string, env []string, args ...string) (output.Export, testrepo.Result) {
	t.Helper()
	r := inproc.Ctx(t, dir, env, append([]string{"export", "--json"}, args...)...)
	testrepo.WantCode(t, "export "+strings.Join(args, " "), r, 0)
	var res output.Export
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("export --json: %v\n%s", err, r.Stdout)
	}
	return res, r
}

// exportDump is a deterministic text form of a SQLite file: its schema
// (sqlite_master, by type and name) and every row of checkpoints in rowid
// order, each value as SQLite's quote() writes it (blobs as X'hex').
func exportDump(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	rows, err := db.Query(`SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			t.Fatal(err)
		}
		out.WriteString("-- " + typ + " " + name + " on " + tbl + "\n" + text + "\n")
	}
	rows.Close()
	var cols []string
	rows, err = db.Query(`SELECT name FROM pragma_table_info('checkpoints') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, n)
	}
	rows.Close()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = "quote(" + c + ")"
	}
	rows, err = db.Query(`SELECT ` + strings.Join(quoted, ", ") + ` FROM checkpoints ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for n := 1; rows.Next(); n++ {
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out.WriteString("-- row\n")
		for i, c := range cols {
			out.WriteString(c + " = " + vals[i] + "\n")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestExportGhyllGolden: the fixture's verified records exported, compared
// byte for byte (schema and rows) with testdata/export_ghyll.golden
// (UPDATE_GOLDEN=1 rewrites it). The edited record is not in it.
func TestExportGhyllGolden(t *testing.T) {
	f := newExportFixture(t)
	out := filepath.Join(f.s.Root, "memory.db")
	res, r := exportRun(t, f.repo, f.env, "--ghyll-db", out)
	if res.Path != out || res.Exported != 4 || res.Verifiable != 3 || res.Mismatch != 1 || res.LeftOut != 0 ||
		res.EmbLeftOut != 1 || !strings.Contains(res.Note, "hash_mismatch") {
		t.Errorf("export --json: %s", r.Stdout)
	}
	// The count and the one-line explanation on stderr.
	if !strings.Contains(r.Stderr, "git-ctx: note: 1 exported checkpoints will not verify in ghyll: ") ||
		!strings.Contains(r.Stderr, "hash_mismatch") || !strings.Contains(r.Stderr, "--ghyll-verifiable-only") {
		t.Errorf("export stderr lacks the note:\n%s", r.Stderr)
	}
	got := exportDump(t, out)
	if strings.Contains(got, f.bad.Hash) || strings.Contains(got, f.after.Hash) {
		t.Errorf("an unverified record was exported:\n%s", got)
	}
	wantGolden(t, filepath.Join("testdata", "export_ghyll.golden"), got, "export")

	// Text form, and --ghyll-verifiable-only leaves the seed-rule record out.
	only := filepath.Join(f.s.Root, "only.db")
	r = inproc.Ctx(t, f.repo, f.env, "export", "--ghyll-db", only, "--ghyll-verifiable-only")
	testrepo.WantCode(t, "export --ghyll-verifiable-only", r, 0)
	if !strings.HasPrefix(r.Stdout, "Exported 3 checkpoints to "+only+" (3 that ghyll verifies, 0 that it reports as hash_mismatch)\n") ||
		!strings.Contains(r.Stdout, "Left out 1 checkpoints that ghyll would report as hash_mismatch\n") ||
		strings.Contains(r.Stderr, "note:") {
		t.Errorf("export --ghyll-verifiable-only: %s", r)
	}
	if rows := exportReadAsGhyll(t, only); len(rows) != 3 || rows[2].Hash != f.c.Hash {
		t.Errorf("--ghyll-verifiable-only wrote %d rows", len(rows))
	}
}

// exportReadAsGhyll reads every row the way ghyll's Store does (its
// SELECT, then json.Unmarshal of files and tools, injections only when not
// NULL, resumed_from as JSON, the embedding as float32 little-endian), and
// sets the version ghyll writes, which the schema does not hold.
func exportReadAsGhyll(t *testing.T, path string) []*checkpoint.Checkpoint {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT hash, parent, device, author, ts, repo, branch, session, turn, model, plan_mode,
		resumed_from, summary, embedding, files, tools, injections, sig FROM checkpoints ORDER BY ts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*checkpoint.Checkpoint
	for rows.Next() {
		c := &checkpoint.Checkpoint{Version: 2}
		var plan bool
		var resumed, injections *string
		var emb []byte
		var files, tools string
		if err := rows.Scan(&c.Hash, &c.ParentHash, &c.DeviceID, &c.AuthorID, &c.Timestamp, &c.RepoRemote, &c.Branch,
			&c.SessionID, &c.Turn, &c.ActiveModel, &plan, &resumed, &c.Summary, &emb, &files, &tools, &injections, &c.Signature); err != nil {
			t.Fatal(err)
		}
		c.PlanMode = plan
		if resumed != nil {
			c.ResumedFrom = &checkpoint.ResumedFrom{}
			if err := json.Unmarshal([]byte(*resumed), c.ResumedFrom); err != nil {
				t.Fatal(err)
			}
		}
		if len(emb)%4 != 0 {
			t.Fatalf("row %s: embedding of %d bytes", c.Hash, len(emb))
		}
		for i := 0; i < len(emb); i += 4 {
			c.Embedding = append(c.Embedding, math.Float32frombits(binary.LittleEndian.Uint32(emb[i:])))
		}
		if json.Unmarshal([]byte(files), &c.FilesTouched) != nil || json.Unmarshal([]byte(tools), &c.ToolsUsed) != nil {
			t.Fatalf("row %s: files %q tools %q", c.Hash, files, tools)
		}
		if injections != nil {
			if err := json.Unmarshal([]byte(*injections), &c.InjectionSig); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportGhyllVerifiesInGhyll: each exported row, read back as ghyll's
// Store reads it, verifies as ghyll's VerifyCheckpoint does (hash under
// ghyll's rule, then the signature) when its record is under ghyll's rule,
// with nil and empty lists, plan_mode, resumed_from and injections
// restored exactly; the seed-rule row gives hash_mismatch, as the export
// said. The seed-rule row keeps its emb (covered by its hash), the
// ghyll-rule row's emb (not covered) is left out.
func TestExportGhyllVerifiesInGhyll(t *testing.T) {
	f := newExportFixture(t)
	out := filepath.Join(f.s.Root, "memory.db")
	exportRun(t, f.repo, f.env, "--ghyll-db", out)
	rows := exportReadAsGhyll(t, out)
	if len(rows) != 4 {
		t.Fatalf("want 4 rows, got %d", len(rows))
	}
	pub := f.key.Public().(ed25519.PublicKey)
	for i, want := range []*checkpoint.Checkpoint{f.a, f.b, f.c, f.d} {
		got := rows[i]
		if got.Hash != want.Hash {
			t.Fatalf("row %d is %s, want %s", i, got.Hash, want.Hash)
		}
		h, err := got.ComputeHash(checkpoint.RuleGhyllV2)
		if err != nil {
			t.Fatal(err)
		}
		if want.Version == 1 {
			if h == got.Hash {
				t.Errorf("the seed-rule row verifies under ghyll's rule: the export's note would be wrong")
			}
			if len(got.Embedding) != 3 || got.Embedding[2] != 3.25 {
				t.Errorf("seed-rule row: emb %v, want its covered emb", got.Embedding)
			}
			continue
		}
		if h != got.Hash {
			t.Errorf("row %d (%s): hash_mismatch under ghyll's rule (%s)", i, want.Summary, h)
		}
		if err := got.VerifySignature(pub); err != nil {
			t.Errorf("row %d: %v", i, err)
		}
		if got.Embedding != nil {
			t.Errorf("row %d: emb %v exported although its hash does not cover it", i, got.Embedding)
		}
		if (got.FilesTouched == nil) != (want.FilesTouched == nil) || (got.ToolsUsed == nil) != (want.ToolsUsed == nil) {
			t.Errorf("row %d: nil versus empty lost: files %#v tools %#v, want %#v %#v", i, got.FilesTouched, got.ToolsUsed, want.FilesTouched, want.ToolsUsed)
		}
	}
	if c := rows[2]; !c.PlanMode || c.ResumedFrom == nil || *c.ResumedFrom != *f.c.ResumedFrom ||
		len(c.InjectionSig) != 1 || c.Branch != "main" || c.RepoRemote != exportRepoID || c.Summary != f.c.Summary {
		t.Errorf("row c lost members: %+v", c)
	}
	if rows[0].InjectionSig != nil || rows[0].PlanMode || rows[0].ResumedFrom != nil {
		t.Errorf("row a gained members: %+v", rows[0])
	}
}

// TestExportGhyllRoundTrip: the export of one repository (the fixture's
// records and one of this device's own, whose secret was redacted)
// imported by `git ctx import --ghyll-db` into another: every row verifies
// (hash under either rule, signature under <ghyll-keys>/<device>.pub), none
// is skipped, and the secret is nowhere in the file.
func TestExportGhyllRoundTrip(t *testing.T) {
	f := newExportFixture(t)
	secret := testrepo.FakeGitHubToken("gx-export")
	own := inproc.Checkpoint(t, f.repo, f.env, "-m", "deploy with "+secret, "--file", "deploy.sh")
	out := filepath.Join(f.s.Root, "memory.db")
	res, _ := exportRun(t, f.repo, f.env, "--ghyll-db", out)
	if res.Exported != 5 || res.Mismatch != 2 {
		t.Fatalf("export: %+v", res)
	}
	if data := testrepo.ReadFile(t, out); bytes.Contains(data, []byte(secret)) || !bytes.Contains(data, []byte(own.Hash)) {
		t.Fatalf("exported file: secret present %v, own record present %v", bytes.Contains(data, []byte(secret)), bytes.Contains(data, []byte(own.Hash)))
	}

	keys := filepath.Join(f.s.Root, "keys")
	for _, dev := range []string{"alice-laptop", own.Device} {
		testrepo.WriteFile(t, filepath.Join(keys, dev+".pub"), testrepo.BranchFile(t, f.repo, f.env, "devices/"+dev+".pub"))
	}
	other := testrepo.NewRepo(t, f.s, "other")
	env2 := f.s.Env("dev2")
	inproc.MustCtx(t, other, env2, "init")
	r := inproc.Ctx(t, other, env2, "import", "--ghyll-db", out, "--ghyll-keys", keys, "--json")
	testrepo.WantCode(t, "import of the export", r, 0)
	var imp struct {
		Imported []struct{ From, Hash, Rule string } `json:"imported"`
		Skipped  []json.RawMessage                   `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &imp); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	for _, i := range imp.Imported {
		rules[i.From] = i.Rule
	}
	want := map[string]string{f.a.Hash: "ghyll-code-v2", f.b.Hash: "ghyll-code-v2", f.c.Hash: "ghyll-code-v2",
		f.d.Hash: "seed-v1", own.Hash: "seed-v1"}
	if len(imp.Skipped) != 0 || len(rules) != len(want) {
		t.Fatalf("import of the export: %s", r.Stdout)
	}
	for h, rule := range want {
		if rules[h] != rule {
			t.Errorf("record %s imported under %q, want %q", h[:12], rules[h], rule)
		}
	}
}

// TestExportGhyllCareless: an existing file is refused (exit 7) and left
// byte for byte, --force replaces it; a missing directory (exit 7) and a
// read-only one (exit 1) fail in one line and leave nothing behind; a
// repository without a memory branch exits 3 and writes nothing.
func TestExportGhyllCareless(t *testing.T) {
	f := newExportFixture(t)
	out := filepath.Join(f.s.Root, "memory.db")
	testrepo.WriteFile(t, out, "precious")
	r := inproc.Ctx(t, f.repo, f.env, "export", "--ghyll-db", out)
	testrepo.WantCode(t, "export over an existing file", r, 7)
	testrepo.WantOneLine(t, "export over an existing file", r.Stderr)
	if !strings.Contains(r.Stderr, "already exists") || string(testrepo.ReadFile(t, out)) != "precious" {
		t.Errorf("existing file: %s\nfile now %q", r, testrepo.ReadFile(t, out))
	}
	res, _ := exportRun(t, f.repo, f.env, "--ghyll-db", out, "--force")
	if res.Exported != 4 || len(exportReadAsGhyll(t, out)) != 4 {
		t.Errorf("--force did not replace the file: %+v", res)
	}

	missing := filepath.Join(f.s.Root, "no-such-dir", "memory.db")
	r = inproc.Ctx(t, f.repo, f.env, "export", "--ghyll-db", missing)
	testrepo.WantCode(t, "export into a missing directory", r, 7)
	testrepo.WantOneLine(t, "export into a missing directory", r.Stderr)
	if !strings.Contains(r.Stderr, "does not exist") {
		t.Errorf("missing directory: %s", r)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing directory was created: %v", err)
	}

	if ro := exportReadOnlyDir(t, f.s); ro != "" {
		before := exportNames(t, ro)
		r = inproc.Ctx(t, f.repo, f.env, "export", "--ghyll-db", filepath.Join(ro, "gx-export.db"))
		testrepo.WantCode(t, "export into a read-only directory", r, 1)
		testrepo.WantOneLine(t, "export into a read-only directory", r.Stderr)
		if !strings.Contains(r.Stderr, "permission denied") {
			t.Errorf("read-only directory: %s", r)
		}
		if after := exportNames(t, ro); after != before {
			t.Errorf("left behind in the read-only directory: %s", after)
		}
	}

	bare := testrepo.NewRepo(t, f.s, "no-branch")
	nb := filepath.Join(f.s.Root, "nobranch.db")
	r = inproc.Ctx(t, bare, f.env, "export", "--ghyll-db", nb)
	testrepo.WantCode(t, "export without a memory branch", r, 3)
	testrepo.WantOneLine(t, "export without a memory branch", r.Stderr)
	if _, err := os.Stat(nb); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("export without a branch wrote %s", nb)
	}
	if r = inproc.Ctx(t, f.repo, f.env, "export"); r.Code != 2 {
		t.Errorf("export without --ghyll-db: want exit 2, got %s", r)
	}
}

// exportReadOnlyDir is a directory this process cannot create files in: a
// new one made read-only, or (for root, which writes anywhere) /sys when
// that refuses too; "" when there is none.
func exportReadOnlyDir(t *testing.T, s *testrepo.Sandbox) string {
	t.Helper()
	ro := s.Dir(t, "read-only")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	for _, dir := range []string{ro, "/sys"} {
		probe := filepath.Join(dir, "gx-export-probe")
		f, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return dir
		}
		f.Close()
		os.Remove(probe)
	}
	t.Log("no read-only directory available: that case is not checked")
	return ""
}

// exportNames lists a directory's entry names.
func exportNames(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
