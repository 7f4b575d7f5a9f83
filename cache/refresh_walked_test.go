package cache_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
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

// TestRebuildTreeNamingARecordTwice: a hand-made leaf tree that names one
// record's file twice (a valid copy and junk, in either order) gives a
// rebuild the same log, unverified list and quarantine as a refresh: the
// listing leaves a name it saw twice to the view, which decides which entry
// counts.
func TestRebuildTreeNamingARecordTwice(t *testing.T) {
	for _, junkFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("junkFirst=%v", junkFirst), func(t *testing.T) {
			_, _, a := initDev(t, "")
			ctx := workspacetest.Ctx(t)
			a.Record(t, workspacetest.Say("cp 1"))
			c2 := a.Record(t, workspacetest.Say("cp 2"))
			a.Record(t, workspacetest.Say("cp 3"))
			repoID := a.MustRepoID(t)
			v, err := a.Store.View()
			if err != nil {
				t.Fatal(err)
			}
			old := strings.TrimSpace(workspacetest.Git(t, a.Dir, "rev-parse", gitstore.BranchRef))
			right := v.CheckpointPath(repoID, c2)
			junk := gitInput(t, a.Dir, `{"junk":true}`, "hash-object", "-w", "--stdin")
			// The leaf tree, rebuilt raw with c2's name twice.
			leaf := path.Dir(right)
			var raw bytes.Buffer
			for _, line := range strings.Split(strings.TrimSpace(workspacetest.Git(t, a.Dir, "ls-tree", old+":"+leaf)), "\n") {
				meta, name, _ := strings.Cut(line, "\t")
				f := strings.Fields(meta)
				entry := func(id string) {
					b, _ := hex.DecodeString(id)
					raw.WriteString("100644 " + name + "\x00")
					raw.Write(b)
				}
				if name != path.Base(right) {
					entry(f[2])
					continue
				}
				if junkFirst {
					entry(junk)
					entry(f[2])
				} else {
					entry(f[2])
					entry(junk)
				}
			}
			id := gitInput(t, a.Dir, raw.String(), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
			// Its ancestors, each with the new child.
			for dir := leaf; dir != "."; dir = path.Dir(dir) {
				parent := path.Dir(dir)
				spec := old + ":" + parent
				if parent == "." {
					spec = old + "^{tree}"
				}
				var b strings.Builder
				for _, line := range strings.Split(strings.TrimSpace(workspacetest.Git(t, a.Dir, "ls-tree", spec)), "\n") {
					meta, name, _ := strings.Cut(line, "\t")
					if name == path.Base(dir) {
						f := strings.Fields(meta)
						meta = f[0] + " " + f[1] + " " + id
					}
					b.WriteString(meta + "\t" + name + "\n")
				}
				id = gitInput(t, a.Dir, b.String(), "mktree")
			}
			commit := strings.TrimSpace(workspacetest.Git(t, a.Dir, "commit-tree", id, "-p", old, "-m", "name a record twice"))
			workspacetest.Git(t, a.Dir, "update-ref", gitstore.BranchRef, commit, old)

			var seen []string
			for _, how := range []string{"refresh", "rebuild"} {
				if how == "rebuild" {
					if err := a.Reindex(ctx); err != nil {
						seen = append(seen, "reindex error: "+err.Error())
						continue
					}
				}
				all, err1 := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{})
				un, err2 := checkpoints.Log(ctx, a.Workspace, checkpoints.Filter{Unverified: true})
				q, err3 := checkpoints.Quarantine(ctx, a.Workspace)
				var rs []string
				for _, x := range q {
					rs = append(rs, x.Record+" "+x.Reason)
				}
				seen = append(seen, fmt.Sprintf("log %v %v; unverified %v %v; quarantine %v %v",
					entryHashes(all), err1, entryHashes(un), err2, rs, err3))
			}
			if seen[0] != seen[1] {
				t.Errorf("refresh: %s\nrebuild: %s", seen[0], seen[1])
			}
		})
	}
}

// gitInput runs git in dir with input on stdin and returns its trimmed output.
func gitInput(t *testing.T, dir, input string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
