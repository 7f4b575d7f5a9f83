package cache_test

import (
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestRebuildReadsRecordsOnlyAtTheirPaths: a rebuild reads a record's file
// from listings of the fan-out directories (walkedTree), where a refresh
// resolves the record's path. A record whose file sits in another
// fan-out directory than its name's is missing for both: the same quarantine row and the same
// unverified records, whichever way the cache was filled.
func TestRebuildReadsRecordsOnlyAtTheirPaths(t *testing.T) {
	_, _, a := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	c1 := a.Record(t, workspacetest.Say("cp 1"))
	c2 := a.Record(t, workspacetest.Say("cp 2"))
	c3 := a.Record(t, workspacetest.Say("cp 3"))
	repoID := a.MustRepoID(t)
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	if v.Fanout < 1 {
		t.Fatalf("setup: a new branch has fan-out %d, want at least 1", v.Fanout)
	}
	right := v.CheckpointPath(repoID, c2)
	other := "00"
	if strings.HasPrefix(path.Base(path.Dir(right)), other) {
		other = "ff"
	}
	wrong := path.Join(path.Dir(path.Dir(right)), other, c2+".json")
	moveOnBranch(t, a.Dir, right, wrong)

	var reasons []string
	for _, how := range []string{"refresh", "rebuild"} {
		if how == "rebuild" {
			if err := a.Reindex(ctx); err != nil {
				t.Fatal(err)
			}
		}
		all, err := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		un, err := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{Unverified: true})
		if err != nil {
			t.Fatal(err)
		}
		// c1 verified; c2 not cached (no file at its path), nor c3 after it.
		if len(all) != 1 || all[0].Hash != c1 || !all[0].Verified || len(un) != 0 {
			t.Errorf("%s: log %v, unverified %v; want %s alone (%s, %s not cached)", how, entryHashes(all), entryHashes(un), c1[:12], c2[:12], c3[:12])
		}
		q, err := checkpoints.Quarantine(ctx, a.Workspace)
		if err != nil {
			t.Fatal(err)
		}
		var rs []string
		for _, x := range q {
			rs = append(rs, x.Record+" "+x.Reason)
		}
		if len(rs) != 1 || !strings.HasPrefix(rs[0], c2) {
			t.Errorf("%s: quarantine %v, want one row for %s", how, rs, c2[:12])
		}
		reasons = append(reasons, strings.Join(rs, ","))
	}
	if reasons[0] != reasons[1] {
		t.Errorf("refresh quarantined %q, rebuild %q", reasons[0], reasons[1])
	}
}

// moveOnBranch moves the file at from to to on the memory branch of the
// repository in dir (a plumbing commit).
func moveOnBranch(t *testing.T, dir, from, to string) {
	t.Helper()
	old := strings.TrimSpace(workspacetest.Git(t, dir, "rev-parse", gitstore.BranchRef))
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	workspacetest.GitEnv(t, dir, env, "read-tree", old)
	blob := strings.TrimSpace(workspacetest.Git(t, dir, "rev-parse", old+":"+from))
	workspacetest.GitEnv(t, dir, env, "update-index", "--force-remove", from)
	workspacetest.GitEnv(t, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+to)
	tree := strings.TrimSpace(workspacetest.GitEnv(t, dir, env, "write-tree"))
	commit := strings.TrimSpace(workspacetest.Git(t, dir, "commit-tree", tree, "-p", old, "-m", "misplace a record"))
	workspacetest.Git(t, dir, "update-ref", gitstore.BranchRef, commit, old)
}
