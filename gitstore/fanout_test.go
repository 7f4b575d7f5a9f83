package gitstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// TestParseLayoutFile: LAYOUT is read as exactly the forms FORMAT §2 lists
// — "ctx-v1" (one fan-out level), "ctx-v1 fanout=2", "ghyll-v1" — and
// anything else, above all a depth or field this binary does not know, is
// refused with ErrLayoutUnknown (exit 1) naming the content, never read as
// a known layout.
func TestParseLayoutFile(t *testing.T) {
	for _, c := range []struct {
		in     string
		layout Layout
		fanout int
	}{
		{"ctx-v1\n", LayoutCtxV1, 1},
		{"ctx-v1", LayoutCtxV1, 1},
		{" ctx-v1 fanout=2 \n", LayoutCtxV1, 2},
		{"ctx-v1\tfanout=2\n", LayoutCtxV1, 2},
		{"ghyll-v1\n", LayoutGhyllV1, 0},
	} {
		l, f, err := ParseLayoutFile(c.in)
		if err != nil || l != c.layout || f != c.fanout {
			t.Errorf("ParseLayoutFile(%q) = %s, %d, %v; want %s, %d", c.in, l, f, err, c.layout, c.fanout)
		}
		if err == nil && string(LayoutFileContent(l, f)) != strings.TrimSpace(c.in)+"\n" && !strings.ContainsAny(strings.TrimSpace(c.in), " \t") {
			t.Errorf("LayoutFileContent(%s, %d) = %q", l, f, LayoutFileContent(l, f))
		}
	}
	for _, in := range []string{"", "ctx-v1 fanout=3\n", "ctx-v1 fanout=1\n", "ctx-v1 fanout=2 extra\n", "ctx-v1 depth=2\n",
		"ctx-v2\n", "ghyll-v1 fanout=2\n", "ctx-v1 fanout=02\n", "CTX-V1\n"} {
		_, _, err := ParseLayoutFile(in)
		if k, _ := fault.KindOf(err); !errors.Is(err, ErrLayoutUnknown) || k != fault.Failed || !strings.Contains(err.Error(), "upgrade git-ctx") {
			t.Errorf("ParseLayoutFile(%q): %v, want ErrLayoutUnknown", in, err)
		}
	}
	if got := string(LayoutFileContent(LayoutCtxV1, FanoutTwo)); got != "ctx-v1 fanout=2\n" {
		t.Errorf("two-level LAYOUT is %q", got)
	}
	if got := string(LayoutFileContent(LayoutCtxV1, FanoutOne)); got != "ctx-v1\n" {
		t.Errorf("one-level LAYOUT is %q", got)
	}
}

// TestCheckpointPathDepths: one function makes every depth's path.
func TestCheckpointPathDepths(t *testing.T) {
	h := "abcdef" + strings.Repeat("0", 58)
	for depth, want := range []string{
		"repos/r/checkpoints/" + h + ".json",
		"repos/r/checkpoints/ab/" + h + ".json",
		"repos/r/checkpoints/ab/cd/" + h + ".json",
	} {
		if got := CheckpointPath("r", h, depth); got != want {
			t.Errorf("depth %d: %s, want %s", depth, got, want)
		}
	}
}

// TestFanoutBranches: a new ctx-v1 branch is two-level; a branch made at
// one level stays one-level through appends (LAYOUT untouched); on both,
// records sit at the depth's path, read back, resolve by any prefix
// length, and verify; an Init asking for a depth that does not exist
// writes nothing.
func TestFanoutBranches(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	for _, c := range []struct {
		opt    InitOptions
		fanout int
		layout string
	}{
		{InitOptions{}, FanoutTwo, "ctx-v1 fanout=2"},
		{InitOptions{Layout: LayoutCtxV1}, FanoutTwo, "ctx-v1 fanout=2"},
		{InitOptions{Layout: LayoutCtxV1, Fanout: FanoutOne}, FanoutOne, "ctx-v1"},
		{InitOptions{Layout: LayoutGhyllV1, Fanout: FanoutTwo}, 0, "ghyll-v1"},
	} {
		t.Run(c.layout, func(t *testing.T) {
			s, dir := newStore(t)
			d := device(t, "dev-a", 1)
			c.opt.Device = d
			res, err := s.Init(ctx, c.opt)
			if err != nil || res.Fanout != c.fanout {
				t.Fatalf("init: %+v %v", res, err)
			}
			for i := 0; i < 3; i++ {
				if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(40, "x")}); err != nil {
					t.Fatal(err)
				}
			}
			v, err := s.View()
			if err != nil || v.Fanout != c.fanout || v.LayoutName() != c.layout {
				t.Fatalf("view: fanout %d, layout %q, %v", v.Fanout, v.LayoutName(), err)
			}
			if c.fanout > 0 {
				if got := git(t, dir, "show", BranchRef+":"+LayoutFile); got != c.layout {
					t.Fatalf("LAYOUT holds %q after appends, want %q", got, c.layout)
				}
			}
			good, bad, err := v.WalkCheckpoints(repoID)
			if err != nil || len(good) != 120 || len(bad) != 0 {
				t.Fatalf("walk: %d good, bad %v, %v", len(good), bad, err)
			}
			for _, g := range good {
				if want := CheckpointPath(repoID, g.Hash, c.fanout); g.Path != want || strings.Count(g.Path, "/") != 3+c.fanout {
					t.Fatalf("record at %s, want %s", g.Path, want)
				}
			}
			fanWantResolves(t, v, good[7].Hash)
			rep, err := v.Verify()
			if err != nil || !rep.OK || rep.Verified() != 120 {
				t.Fatalf("verify: %+v %v", rep, err)
			}
		})
	}
	s, _ := newStore(t)
	if _, err := s.Init(ctx, InitOptions{Fanout: 3, Device: device(t, "dev-a", 1)}); !errors.Is(err, ErrLayoutUnknown) {
		t.Fatalf("init at depth 3: %v", err)
	}
	if tip, err := s.Tip(); err != nil || !tip.IsZero() {
		t.Fatalf("a refused init left the branch at %s (%v)", tip, err)
	}
}

// fanWantResolves: every prefix length of h resolves to h, and to nothing
// that does not start with the prefix.
func fanWantResolves(t *testing.T, v *View, h string) {
	t.Helper()
	for _, n := range []int{1, 2, 3, 4, 5, 64} {
		got, err := v.Resolve(repoID, h[:n])
		if err != nil || !slices.Contains(got, h) {
			t.Fatalf("Resolve(%s) = %v, %v", h[:n], got, err)
		}
		for _, o := range got {
			if !strings.HasPrefix(o, h[:n]) {
				t.Fatalf("Resolve(%s) returned %s", h[:n], o)
			}
		}
	}
}

// TestVerifyReadsEachTreeOnce: a whole-branch verify with two fan-out
// levels reads each tree of the branch about once, with a decoded-tree
// cache far smaller than the branch: the layout check and the checkpoint
// walk share one pass over the record directories, and the upper levels
// stay cached while the leaves stream through.
func TestVerifyReadsEachTreeOnce(t *testing.T) {
	isolate(t)
	defer func(n int) { maxCachedTrees = n }(maxCachedTrees)
	maxCachedTrees = 16
	s, dir := newStore(t)
	ctx := context.Background()
	d := device(t, "dev-a", 1)
	if _, err := s.Init(ctx, InitOptions{Fanout: FanoutTwo, Device: d}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(300, "x")}); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range strings.Split(git(t, dir, "ls-tree", "-r", "-t", BranchRef), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "tree" {
			ids[f[2]] = true
		}
	}
	trees := int64(len(ids) + 1) // and the root
	s = reopen(t, dir)
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	before := s.treeDecodes.Load()
	rep, err := v.Verify()
	if err != nil || !rep.OK || rep.Verified() != 300 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	got := s.treeDecodes.Load() - before
	t.Logf("verify decoded %d trees; the branch has %d", got, trees)
	if got > trees+trees/10 {
		t.Fatalf("verify decoded %d trees; the branch has %d", got, trees)
	}
}

// packedTwoLevelBranch is the directory of a store whose branch holds n
// checkpoints of one device in two fan-out levels, packed as after `git gc`.
func packedTwoLevelBranch(t *testing.T, n int) string {
	t.Helper()
	isolate(t)
	s, dir := newStore(t)
	ctx := context.Background()
	d := device(t, "dev-a", 1)
	if _, err := s.Init(ctx, InitOptions{Fanout: FanoutTwo, Device: d}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(n, "x")}); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "repack", "-adq")
	return dir
}

// TestVerifyReadsTreesInPackOrder: a whole-branch verify of a packed
// two-level branch reads the trees' pack entries a window at a time (git
// packs a commit's trees in the order the layout walk meets them), not one
// read per tree.
func TestVerifyReadsTreesInPackOrder(t *testing.T) {
	dir := packedTwoLevelBranch(t, 600)
	trees := strings.Count(git(t, dir, "ls-tree", "-r", "-t", BranchRef), " tree ")
	s := reopen(t, dir)
	s.direct.reads = directReadLimit // a long operation from the start
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := v.Verify()
	if err != nil || !rep.OK || rep.Verified() != 600 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	windows := s.direct.windowReads + int(s.treeWindowReads.Load())
	t.Logf("%d windows read for %d trees (%d by the walk's workers)", windows, trees, s.treeWindowReads.Load())
	if windows > trees/10 {
		t.Fatalf("%d windows read for %d trees", windows, trees)
	}
}
