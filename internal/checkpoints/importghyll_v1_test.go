package checkpoints_test

import (
	"bytes"
	"crypto/ed25519"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestImportGhyllDBIntoGhyllV1: in a ghyll-v1 branch the re-signed copy is
// sealed under ghyll's rule (v2) and its file is exactly what ghyll's
// MarshalIndent writes: no unknown member, the origin named by the last
// summary line instead, which the hash covers; importing again adds
// nothing.
func TestImportGhyllDBIntoGhyllV1(t *testing.T) {
	w := workspacetest.NewWorld(t)
	ctx := workspacetest.Ctx(t)
	a := workspacetest.Open(t, w.NewRepo(t, "repo"), w.Home("a"))
	if _, err := a.Init(ctx, gitstore.LayoutGhyllV1); err != nil {
		t.Fatal(err)
	}
	alice := vectorKey()
	c := checkpoint.Checkpoint{Version: 2, ParentHash: checkpoint.ZeroHash, DeviceID: "alice-laptop", AuthorID: "alice-laptop",
		Timestamp: 1712345678123456789, SessionID: "alice-laptop-1712345600000000000", Turn: 5, ActiveModel: "m25", Summary: "turn 5"}
	g := ghyllSign(t, c, checkpoint.RuleGhyllV2, alice)
	dbPath := filepath.Join(w.Root, "memory.db")
	keys := filepath.Join(w.Root, "keys")
	writeKey(t, keys, "alice-laptop", alice.Public().(ed25519.PublicKey))
	writeGhyllDB(t, dbPath, ghylldbtest.V2Schema, []ghyllRow{{cp: g}})
	res, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys)
	if err != nil || len(res.Imported) != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	rid, err := a.RepoID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, err := v.ReadFile(v.CheckpointPath(rid, res.Imported[0].Hash), gitstore.MaxBlob)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := a.Device()
	if rule, err := cp.Verify(dev.Key.Public().(ed25519.PublicKey)); err != nil || rule != checkpoint.RuleGhyllV2 || cp.Version != 2 {
		t.Fatalf("re-signed copy: v%d rule %s %v", cp.Version, rule, err)
	}
	if len(cp.Extra) != 0 || bytes.Contains(body, []byte(`"imported_from":`)) {
		t.Fatalf("unknown member outside the hash written:\n%s", body)
	}
	if want := "turn 5\n\nimported_from: ghyll:" + g.Hash; cp.Summary != want {
		t.Fatalf("summary %q, want %q", cp.Summary, want)
	}
	if file, _ := cp.MarshalFile(); !bytes.Equal(file, body) || strings.HasSuffix(string(body), "\n") {
		t.Fatalf("file is not the record's MarshalIndent encoding:\n%s", body)
	}
	again, err := checkpoints.ImportGhyllDB(ctx, a.Workspace, dbPath, keys)
	if err != nil || len(again.Imported) != 0 || again.Already != 1 {
		t.Fatalf("second import: %+v %v", again, err)
	}
	if rep, err := checkpoints.Verify(ctx, a.Workspace); err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
