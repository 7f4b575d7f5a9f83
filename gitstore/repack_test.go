package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// looseCount counts the loose object files of the repository at dir.
func looseCount(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	root := filepath.Join(dir, ".git", "objects")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Name()) == 2 && e.IsDir() {
			files, _ := os.ReadDir(filepath.Join(root, e.Name()))
			n += len(files)
		}
	}
	return n
}

// TestPackEveryBoundsLooseObjects: with ctx.packEvery=8, forty single
// appends leave at most one batch of loose objects, the objects are in
// packs, git fsck is clean and the branch verifies; with 0 nothing is
// packed.
func TestPackEveryBoundsLooseObjects(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		every    string
		maxLoose int
		packs    bool
	}{
		{"8", 8 * 12, true},
		{"0", 1 << 30, false},
	} {
		t.Run("packEvery="+tc.every, func(t *testing.T) {
			_, dir := newStore(t)
			git(t, dir, "config", "ctx.packEvery", tc.every)
			git(t, dir, "config", "gc.auto", "0")
			s := reopen(t, dir)
			ctx := context.Background()
			d := device(t, "dev-a", 1)
			if _, err := s.Init(ctx, InitOptions{Layout: LayoutCtxV1, Device: d}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 40; i++ {
				if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "a")}); err != nil {
					t.Fatal(err)
				}
			}
			loose := looseCount(t, dir)
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
			if loose > tc.maxLoose || (len(packs) > 0) != tc.packs {
				t.Fatalf("%d loose objects, %d packs (want at most %d loose, packs %v)", loose, len(packs), tc.maxLoose, tc.packs)
			}
			if tc.packs && len(packs) > 3 {
				t.Fatalf("%d packs after 5 batches: geometric repacking should keep at most 3", len(packs))
			}
			if !tc.packs && loose < 40*5 {
				t.Fatalf("only %d loose objects without packing: the test does not measure anything", loose)
			}
			git(t, dir, "fsck", "--strict", "--no-dangling")
			v, err := s.View()
			if err != nil {
				t.Fatal(err)
			}
			rep, err := v.Verify()
			if err != nil || !rep.OK || rep.Verified() != 40 {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
}
