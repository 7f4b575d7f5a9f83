package checkpoints_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// vectorKey is the key of the reference test vectors (seed 0x01 … 0x20).
func vectorKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// ghyllRow is a checkpoint as ghyll makes it: hashed under rule, signed
// with key, and the summary stored in the database (which may differ, to
// simulate tampering).
type ghyllRow struct {
	cp            checkpoint.Checkpoint
	storedSummary string
}

func ghyllSign(t *testing.T, c checkpoint.Checkpoint, rule checkpoint.Rule, key ed25519.PrivateKey) checkpoint.Checkpoint {
	t.Helper()
	h, err := c.ComputeHash(rule)
	if err != nil {
		t.Fatal(err)
	}
	c.Hash = h
	c.Signature = hex.EncodeToString(ed25519.Sign(key, []byte(h)))
	return c
}

// writeGhyllDB stores rows the way ghyll's store does: nil files/tools as
// the text '[]' (§11.4), no version column, injections NULL when empty,
// the embedding as float32 little-endian (empty blob for none).
func writeGhyllDB(t *testing.T, path, schema string, rows []ghyllRow) {
	t.Helper()
	var inserts []ghylldbtest.Insert
	v2 := strings.Contains(schema, "plan_mode")
	for _, r := range rows {
		c := r.cp
		list := func(l []string) string {
			if l == nil {
				return "[]"
			}
			b, _ := json.Marshal(l)
			return string(b)
		}
		var inj any
		if len(c.InjectionSig) > 0 {
			b, _ := json.Marshal(c.InjectionSig)
			inj = string(b)
		}
		summary := c.Summary
		if r.storedSummary != "" {
			summary = r.storedSummary
		}
		args := []any{c.Hash, c.ParentHash, c.DeviceID, c.AuthorID, c.Timestamp, c.RepoRemote, c.Branch, c.SessionID, c.Turn,
			c.ActiveModel, summary, cache.EncodeEmbedding(c.Embedding), list(c.FilesTouched), list(c.ToolsUsed), inj, c.Signature}
		q := `INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
		if v2 {
			var resumed any
			if c.ResumedFrom != nil {
				b, _ := json.Marshal(c.ResumedFrom)
				resumed = string(b)
			}
			args = append(args, boolInt(c.PlanMode), resumed)
			q = `INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig,plan_mode,resumed_from) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
		}
		inserts = append(inserts, ghylldbtest.Insert{Query: q, Args: args})
	}
	ghylldbtest.Write(t, path, schema, inserts...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func writeKey(t *testing.T, dir, device string, pub ed25519.PublicKey) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, device+".pub"), checkpoint.EncodePublicKey(pub), 0o644); err != nil {
		t.Fatal(err)
	}
}

// importingDevice is where the tests import to: device a of a fresh world's
// repository, its memory branch created.
func importingDevice(t *testing.T) (*workspacetest.World, *workspacetest.Dev) {
	t.Helper()
	w := workspacetest.NewWorld(t)
	a := workspacetest.Open(t, w.NewRepo(t, "repo"), w.Home("a"))
	if _, err := a.Init(workspacetest.Ctx(t), ""); err != nil {
		t.Fatal(err)
	}
	return w, a
}

func TestImportGhyllDB(t *testing.T) {
	w, a := importingDevice(t)
	ctx := workspacetest.Ctx(t)
	before := a.Record(t, workspacetest.Say("recorded here before the import"))
	fx := newGhyllImportFixture(t, w.Root)
	good, dbPath, keys := fx.good, fx.dbPath, fx.keys

	res, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys)
	if err != nil {
		t.Fatal(err)
	}
	fx.wantFirstImport(t, res)
	fx.wantImportedRecords(t, a, res, before)
	rep, err := checkpoints.Verify(ctx, a.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Verified() != 1+len(good) {
		b, _ := json.MarshalIndent(rep, "", "  ")
		t.Fatalf("branch does not verify after the import:\n%s", b)
	}

	// A second import adds nothing.
	tip := a.MustTip(t)
	res2, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Imported) != 0 || res2.Already != len(good) || len(res2.Skipped) != 3 {
		t.Fatalf("second import: %+v", res2)
	}
	if a.MustTip(t) != tip {
		t.Fatalf("a second import moved the branch")
	}
	if res2.Imported == nil || len(res2.Imported) != 0 { // printed as [] (internal/output)
		t.Errorf("second import: Imported %#v, want an empty list", res2.Imported)
	}
	// Also after a rebuild of the cache (the origins live on the branch).
	if err := a.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	if res3, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys); err != nil || len(res3.Imported) != 0 || res3.Already != len(good) {
		t.Fatalf("import after reindex: %+v %v", res3, err)
	}

	// Errors: no such database; no keys directory.
	if _, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, filepath.Join(w.Root, "absent.db"), keys); !errors.Is(err, workspace.ErrInput) {
		t.Errorf("import of a missing file: %v, want ErrInput", err)
	}
	res4, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, "")
	if err != nil || len(res4.Imported) != 0 || len(res4.Skipped) != 3 {
		t.Errorf("import without keys: %+v %v", res4, err)
	}
}

// ghyllImportFixture is a ghyll memory.db holding six good rows (good,
// hashed under rules) and three bad ones (bad: hash → what the skip reason
// must mention), with the keys directory of its one device.
type ghyllImportFixture struct {
	good         []checkpoint.Checkpoint
	rules        []checkpoint.Rule
	bad          map[string]string
	dbPath, keys string
}

func newGhyllImportFixture(t *testing.T, root string) ghyllImportFixture {
	t.Helper()
	alice := vectorKey()
	_, otherKey, _ := ed25519.GenerateKey(nil)
	const dev = "alice-laptop"
	base := checkpoint.Checkpoint{Version: 2, ParentHash: checkpoint.ZeroHash, DeviceID: dev, AuthorID: dev,
		Timestamp: 1712345678123456789, SessionID: "alice-laptop-1712345600000000000", Turn: 5, ActiveModel: "m25", Summary: "turn 5"}
	// Vector A of the reference: a typical production checkpoint.
	r1 := ghyllSign(t, base, checkpoint.RuleGhyllV2, alice)
	if r1.Hash != "cadfdb7594b1ad5ab315fdb5c912328cdf4262a329cd8e74bef4ea83b37204aa" ||
		r1.Signature != "9c785941ffdb25cc426e0867b38ec057cb1edf06d99a5aab5a49a5278e07acc64513671d92efed29495c053bc8f7ff9f8686cd2b4a18852fb2f75b5632fc9809" {
		t.Fatalf("setup: vector A does not reproduce: %s", r1.Hash)
	}
	next := func(prev checkpoint.Checkpoint, turn int, summary string) checkpoint.Checkpoint {
		c := base
		c.ParentHash, c.Turn, c.Summary = prev.Hash, turn, summary
		c.Timestamp = prev.Timestamp + 1e9
		return c
	}
	r2 := ghyllSign(t, next(r1, 6, "turn 6"), checkpoint.RuleGhyllV2, alice)
	// A compaction checkpoint: empty session, structured summary.
	c3 := next(r2, 7, "compaction: <auth> & \"jwt\" → done")
	c3.SessionID = ""
	r3 := ghyllSign(t, c3, checkpoint.RuleGhyllV2, alice)
	// A v=1 row (ghyll's tests), files set and tools nil.
	c4 := next(r3, 8, "v1 row")
	c4.Version, c4.FilesTouched = 1, []string{"auth.go"}
	r4 := ghyllSign(t, c4, checkpoint.RuleGhyllV2, alice)
	// A row hashed under the seed's rule, with an embedding.
	c5 := next(r4, 9, "seed rule row")
	c5.Version, c5.Embedding, c5.ToolsUsed = 1, []float32{0.5, 0.25}, []string{"bash"}
	r5 := ghyllSign(t, c5, checkpoint.RuleSeedV1, alice)
	// A row hashed under ghyll's rule with an embedding: the hash does not
	// cover it, so it is not imported (re-signing would vouch for it).
	c6 := next(r5, 13, "ghyll rule row with an embedding")
	c6.Embedding = []float32{0.75, 0.5}
	r6 := ghyllSign(t, c6, checkpoint.RuleGhyllV2, alice)
	// Bad rows: summary altered after signing; no key for the device;
	// signed with another key.
	badSummary := ghyllSign(t, next(r5, 10, "turn 10"), checkpoint.RuleGhyllV2, alice)
	cBob := next(r5, 11, "bob's turn")
	cBob.DeviceID, cBob.AuthorID = "bob-desktop", "bob-desktop"
	noKey := ghyllSign(t, cBob, checkpoint.RuleGhyllV2, alice)
	badSig := ghyllSign(t, next(r5, 12, "turn 12"), checkpoint.RuleGhyllV2, otherKey)

	dbPath := filepath.Join(root, "memory.db")
	keys := filepath.Join(root, "ghyll-keys")
	writeKey(t, keys, dev, alice.Public().(ed25519.PublicKey))
	writeGhyllDB(t, dbPath, ghylldbtest.SeedSchema, []ghyllRow{
		{cp: r1}, {cp: r2}, {cp: r3}, {cp: r4}, {cp: r5}, {cp: r6},
		{cp: badSummary, storedSummary: "turn 10, edited"}, {cp: noKey}, {cp: badSig},
	})
	return ghyllImportFixture{good: []checkpoint.Checkpoint{r1, r2, r3, r4, r5, r6}, dbPath: dbPath, keys: keys,
		bad:   map[string]string{badSummary.Hash: "hash_mismatch", noKey.Hash: "no public key", badSig.Hash: "bad_signature"},
		rules: []checkpoint.Rule{checkpoint.RuleGhyllV2, checkpoint.RuleGhyllV2, checkpoint.RuleGhyllV2, checkpoint.RuleGhyllV2, checkpoint.RuleSeedV1, checkpoint.RuleGhyllV2}}
}

// wantFirstImport checks the result of the first import of fx.
func (fx ghyllImportFixture) wantFirstImport(t *testing.T, res *checkpoints.ImportResult) {
	t.Helper()
	good, wantRules := fx.good, fx.rules
	if len(res.Imported) != len(good) || res.Already != 0 || len(res.Skipped) != 3 {
		t.Fatalf("import: %d imported, %d skipped, %d already: %+v", len(res.Imported), len(res.Skipped), res.Already, res)
	}
	for i, r := range res.Imported {
		if r.From != good[i].Hash || r.Rule != wantRules[i] || !checkpoint.IsHexHash(r.Hash) {
			t.Errorf("imported %d: %+v, want from %s rule %s", i, r, good[i].Hash[:12], wantRules[i])
		}
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.Hash] = s.Reason
	}
	for h, want := range fx.bad {
		if !strings.Contains(skipped[h], want) {
			t.Errorf("skipped %s: reason %q, want it to mention %q", h[:12], skipped[h], want)
		}
	}

}

// wantImportedRecords checks the imported records on the branch and in the
// cache of a.
func (fx ghyllImportFixture) wantImportedRecords(t *testing.T, a *workspacetest.Dev, res *checkpoints.ImportResult, before string) {
	t.Helper()
	good := fx.good
	// The imported records: on this device's chain after the earlier one,
	// re-signed here, content kept (nil lists stay null), origin named.
	got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	if len(got) != 1+len(good) {
		t.Fatalf("cache holds %d checkpoints, want %d", len(got), 1+len(good))
	}
	me := a.MustDeviceID(t)
	for i, r := range res.Imported {
		e := got[r.Hash]
		if e == nil {
			t.Fatalf("imported record %s not on the branch", r.Hash[:12])
		}
		g := good[i]
		if e.DeviceID != me || e.Seq != i+1 || e.Version != checkpoint.WriteVersion || e.Summary != g.Summary ||
			e.Timestamp != g.Timestamp || e.SessionID != g.SessionID || e.Turn != g.Turn || e.ActiveModel != g.ActiveModel ||
			e.AuthorID != g.AuthorID {
			t.Errorf("imported %d: %+v", i, e.Checkpoint)
		}
		wantEmb := g.Embedding
		if r.Rule == checkpoint.RuleGhyllV2 {
			wantEmb = nil
		}
		if (e.FilesTouched == nil) != (g.FilesTouched == nil) || (e.ToolsUsed == nil) != (g.ToolsUsed == nil) ||
			(e.Embedding == nil) != (wantEmb == nil) {
			t.Errorf("imported %d: nil/empty lists not kept: files %#v tools %#v emb %#v", i, e.FilesTouched, e.ToolsUsed, e.Embedding)
		}
		wantOrigin := `"imported_from": "ghyll:` + g.Hash + `"`
		raw, _ := e.MarshalFile()
		if !bytes.Contains(raw, []byte(wantOrigin)) {
			t.Errorf("imported %d lacks %s:\n%s", i, wantOrigin, raw)
		}
		if i == 0 && (!bytes.Contains(raw, []byte(`"files": null`)) || !bytes.Contains(raw, []byte(`"tools": null`))) {
			t.Errorf("vector A imported with lists other than null:\n%s", raw)
		}
	}
	if got[before] == nil || got[res.Imported[0].Hash].ParentHash != before {
		t.Errorf("the import does not continue this device's chain")
	}
}

// TestImportGhyllDBV2Columns: plan_mode and resumed_from come across.
func TestImportGhyllDBV2Columns(t *testing.T) {
	w, a := importingDevice(t)
	ctx := workspacetest.Ctx(t)
	alice := vectorKey()
	c := checkpoint.Checkpoint{Version: 2, ParentHash: checkpoint.ZeroHash, DeviceID: "alice-laptop", AuthorID: "alice-laptop",
		Timestamp: 1712345678123456789, RepoRemote: "git@github.com:example/repo.git", Branch: "main",
		SessionID: "alice-laptop-1712345600000000000", Turn: 5, ActiveModel: "m25",
		Summary: "handoff: m25 → glm5 (reason: x<y & z)", FilesTouched: []string{"auth.go"}, ToolsUsed: []string{"bash", "read_file"},
		PlanMode: true, ResumedFrom: &checkpoint.ResumedFrom{Session: "alice-laptop-1712000000000000000", Hash: strings.Repeat("a", 64)},
		InjectionSig: []string{"instruction_override"}}
	r := ghyllSign(t, c, checkpoint.RuleGhyllV2, alice)
	// Vector C of the reference.
	if r.Hash != "806b4d380a38e9e0c610597e25a99d4dee245dfef7980de37e8aa06d9c54b361" {
		t.Fatalf("setup: vector C does not reproduce: %s", r.Hash)
	}
	dbPath := filepath.Join(w.Root, "memory.db")
	keys := filepath.Join(w.Root, "keys")
	writeKey(t, keys, "alice-laptop", alice.Public().(ed25519.PublicKey))
	writeGhyllDB(t, dbPath, ghylldbtest.V2Schema, []ghyllRow{{cp: r}})
	res, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 1 || len(res.Skipped) != 0 {
		t.Fatalf("import: %+v", res)
	}
	got := workspacetest.CacheEqualsBranch(t, a.Workspace, nil)
	e := got[res.Imported[0].Hash]
	if e == nil || !e.PlanMode || e.ResumedFrom == nil || *e.ResumedFrom != *c.ResumedFrom || e.Summary != c.Summary ||
		len(e.InjectionSig) != 1 || !chain.BindsTo(e.RepoRemote, e.RepoID) || e.Branch != "main" {
		t.Fatalf("imported record: %+v", e)
	}
	if rep, err := checkpoints.Verify(ctx, a.Workspace); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
