package cache_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
)

func makeGhyllDB(t *testing.T, path, schema string, inserts ...string) {
	t.Helper()
	var list []ghylldbtest.Insert
	for _, q := range inserts {
		list = append(list, ghylldbtest.Insert{Query: q})
	}
	ghylldbtest.Write(t, path, schema, list...)
}

func TestReadGhyllDBSeedSchema(t *testing.T) {
	path := filepath.Join(isolateMade(t), "memory.db")
	ctx := testCtx(t)
	h1, h2, h3 := strings.Repeat("1", 64), strings.Repeat("2", 64), strings.Repeat("3", 64)
	sig := strings.Repeat("ab", 64)
	makeGhyllDB(t, path, seedTable,
		// Inserted out of ts order: ReadGhyllDB returns oldest first.
		`INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig)
		 VALUES ('`+h2+`','`+h1+`','alice','alice',200,'','','alice-1',2,'m25','turn 2',x'','[]','[]',NULL,'`+sig+`')`,
		`INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig)
		 VALUES ('`+h1+`','`+checkpoint.ZeroHash+`','alice','alice',100,'git@github.com:example/repo.git','main','alice-1',1,'m25','x<y & z',
		 x'0000003f000080bf','["a.go","b.go"]','["bash"]','["instruction_override"]','`+sig+`')`,
		`INSERT INTO checkpoints (hash,parent,device,author,ts,repo,branch,session,turn,model,summary,embedding,files,tools,injections,sig,verified,imported)
		 VALUES ('`+h3+`','`+h2+`','alice','alice',300,'','','alice-1',3,'m25','turn 3',x'','null','[]','[]','`+sig+`',0,1712345678)`,
	)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := cache.ReadGhyllDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Checkpoint.Hash != h1 || rows[1].Checkpoint.Hash != h2 || rows[2].Checkpoint.Hash != h3 {
		t.Fatalf("rows: %+v", rows)
	}
	checkGhyllSeedRows(t, rows, h1, sig)
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("ReadGhyllDB changed the ghyll database")
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("ReadGhyllDB left %s%s behind", path, suffix)
		}
	}
}

// checkGhyllSeedRows: the seed-schema rows decode to the checkpoints they
// stand for, keeping the stored text of the JSON columns.
func checkGhyllSeedRows(t *testing.T, rows []cache.GhyllRow, h1, sig string) {
	t.Helper()
	a := rows[0].Checkpoint
	want := checkpoint.Checkpoint{
		Hash: h1, ParentHash: checkpoint.ZeroHash, DeviceID: "alice", AuthorID: "alice", Timestamp: 100,
		RepoRemote: "git@github.com:example/repo.git", Branch: "main", SessionID: "alice-1", Turn: 1, ActiveModel: "m25",
		Summary: "x<y & z", Embedding: []float32{0.5, -1}, FilesTouched: []string{"a.go", "b.go"}, ToolsUsed: []string{"bash"},
		InjectionSig: []string{"instruction_override"}, Signature: sig,
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("row 1:\n got  %+v\n want %+v", a, want)
	}
	if rows[0].FilesText != `["a.go","b.go"]` || rows[0].ToolsText != `["bash"]` {
		t.Errorf("row 1 stored text: %q %q", rows[0].FilesText, rows[0].ToolsText)
	}
	b := rows[1]
	if b.FilesText != "[]" || b.ToolsText != "[]" || b.Checkpoint.FilesTouched == nil || len(b.Checkpoint.FilesTouched) != 0 ||
		b.Checkpoint.Embedding != nil || b.Checkpoint.InjectionSig != nil || b.Checkpoint.Version != 0 ||
		b.Checkpoint.PlanMode || b.Checkpoint.ResumedFrom != nil {
		t.Errorf("row 2: %+v (files %q tools %q)", b.Checkpoint, b.FilesText, b.ToolsText)
	}
	c := rows[2]
	if c.FilesText != "null" || c.Checkpoint.FilesTouched != nil {
		t.Errorf("row 3: files %q decoded %#v", c.FilesText, c.Checkpoint.FilesTouched)
	}
}

func TestReadGhyllDBV2Schema(t *testing.T) {
	path := filepath.Join(isolateMade(t), "memory.db")
	ctx := testCtx(t)
	h1, h2 := strings.Repeat("4", 64), strings.Repeat("5", 64)
	sig := strings.Repeat("cd", 64)
	makeGhyllDB(t, path, ghylldbtest.V2Schema,
		`INSERT INTO checkpoints (hash,parent,device,author,ts,repo,session,turn,model,plan_mode,resumed_from,summary,sig)
		 VALUES ('`+h1+`','`+checkpoint.ZeroHash+`','bob','bob',1712345678123456789,'','bob-2',1,'glm5',1,
		 '{"session":"bob-1","hash":"`+strings.Repeat("a", 64)+`"}','resumed','`+sig+`')`,
		`INSERT INTO checkpoints (hash,parent,device,author,ts,repo,session,turn,model,resumed_from,summary,sig)
		 VALUES ('`+h2+`','`+h1+`','bob','bob',1712345678123456790,'','bob-2',2,'glm5','','turn 2','`+sig+`')`,
	)
	rows, err := cache.ReadGhyllDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	a := rows[0].Checkpoint
	if a.Hash != h1 || !a.PlanMode || a.ResumedFrom == nil || *a.ResumedFrom != (checkpoint.ResumedFrom{Session: "bob-1", Hash: strings.Repeat("a", 64)}) ||
		a.Timestamp != 1712345678123456789 || a.Branch != "" || a.FilesTouched == nil || a.Embedding != nil || rows[0].FilesText != "[]" {
		t.Errorf("row 1: %+v", a)
	}
	b := rows[1].Checkpoint
	if b.PlanMode || b.ResumedFrom != nil || b.Summary != "turn 2" {
		t.Errorf("row 2: %+v", b)
	}
}

func TestReadGhyllDBRefusesOtherFiles(t *testing.T) {
	dir := isolateMade(t)
	ctx := testCtx(t)
	if _, err := cache.ReadGhyllDB(ctx, filepath.Join(dir, "absent.db")); err == nil {
		t.Errorf("missing file: no error")
	}
	other := filepath.Join(dir, "other.db")
	makeGhyllDB(t, other, `CREATE TABLE checkpoints (hash TEXT PRIMARY KEY, summary TEXT)`)
	if _, err := cache.ReadGhyllDB(ctx, other); err == nil || !strings.Contains(err.Error(), "not a ghyll memory.db") {
		t.Errorf("table without the seed's columns: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not sqlite "), 500), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.ReadGhyllDB(ctx, junk); err == nil {
		t.Errorf("garbage file: no error")
	}
}
