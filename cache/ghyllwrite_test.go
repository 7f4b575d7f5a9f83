package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// TestWriteGhyllDBRoundTrip: what WriteGhyllDB writes, ReadGhyllDB (the
// import's reader) reads back member for member, nil and empty lists kept
// apart in the stored text; a path that exists is refused and untouched;
// a directory path with URI syntax ('?', '#', '%') is no problem.
func TestWriteGhyllDBRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "odd ?#% dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := &checkpoint.Checkpoint{Hash: "a1", ParentHash: checkpoint.ZeroHash, DeviceID: "d", AuthorID: "d", Timestamp: 1712345678123456789,
		SessionID: "s", Turn: 1, ActiveModel: "m", Summary: "x<y & z"}
	b := &checkpoint.Checkpoint{Hash: "b2", ParentHash: "a1", DeviceID: "d", AuthorID: "d", Timestamp: 1712345678123456790,
		RepoRemote: "r", Branch: "main", SessionID: "s", Turn: 2, ActiveModel: "m", PlanMode: true,
		ResumedFrom: &checkpoint.ResumedFrom{Session: "s0", Hash: "a1"}, Summary: "two", Embedding: []float32{0.5, -2},
		FilesTouched: []string{}, ToolsUsed: []string{"bash"}, InjectionSig: []string{"instruction_override"}, Signature: "5e"}
	path := filepath.Join(dir, "memory.db")
	if err := cache.WriteGhyllDB(ctx, path, []*checkpoint.Checkpoint{a, b}); err != nil {
		t.Fatal(err)
	}
	rows, err := cache.ReadGhyllDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("read %d rows", len(rows))
	}
	if rows[0].FilesText != "null" || rows[0].ToolsText != "null" || rows[1].FilesText != "[]" || rows[1].ToolsText != `["bash"]` {
		t.Errorf("stored lists: %q %q %q %q", rows[0].FilesText, rows[0].ToolsText, rows[1].FilesText, rows[1].ToolsText)
	}
	for i, want := range []*checkpoint.Checkpoint{a, b} {
		if got := rows[i].Checkpoint; !reflect.DeepEqual(&got, want) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got, *want)
		}
	}
	before, _ := os.ReadFile(path)
	if err := cache.WriteGhyllDB(ctx, path, nil); !errors.Is(err, os.ErrExist) {
		t.Errorf("writing over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the existing file changed")
	}
}
