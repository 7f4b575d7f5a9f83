package testrepo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// MemRef is the memory branch.
const MemRef = "refs/heads/ghyll/memory"

// BranchPaths lists every file path on the memory branch, sorted.
func BranchPaths(t testing.TB, dir string, env []string) []string {
	t.Helper()
	return NULList(GitOut(t, dir, env, "ls-tree", "-r", "--name-only", "-z", MemRef))
}

// BranchFile returns the exact bytes of path on the memory branch.
func BranchFile(t testing.TB, dir string, env []string, path string) string {
	t.Helper()
	return MustGit(t, dir, env, "show", MemRef+":"+path)
}

// CtxV1CheckpointPath is where a ctx-v1 branch made by `git ctx init`
// (two fan-out levels, LAYOUT "ctx-v1 fanout=2") keeps a checkpoint.
func CtxV1CheckpointPath(repoID, hash string) string {
	return "repos/" + repoID + "/checkpoints/" + hash[0:2] + "/" + hash[2:4] + "/" + hash + ".json"
}

// CtxV1OneLevelCheckpointPath is where a ctx-v1 branch of one fan-out
// level (LAYOUT "ctx-v1", made before the fanout field) keeps a checkpoint.
func CtxV1OneLevelCheckpointPath(repoID, hash string) string {
	return "repos/" + repoID + "/checkpoints/" + hash[0:2] + "/" + hash + ".json"
}

// GhyllV1CheckpointPath is where a ghyll-v1 layout keeps a checkpoint.
func GhyllV1CheckpointPath(repoID, hash string) string {
	return "repos/" + repoID + "/checkpoints/" + hash + ".json"
}

// ChainLine is one line of a device chain.
type ChainLine struct {
	Hash   string `json:"hash"`
	Parent string `json:"parent"`
	TS     int64  `json:"ts"`
}

// ParseChain decodes a device chain file; it must end in a newline.
func ParseChain(t testing.TB, data string) []ChainLine {
	t.Helper()
	var out []ChainLine
	if data == "" {
		return nil
	}
	if !strings.HasSuffix(data, "\n") {
		t.Fatalf("chain does not end in a newline: %q", data)
	}
	for _, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		var e ChainLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("chain line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// FileEdit is one change to the memory branch's tree made with plumbing.
type FileEdit struct {
	Path    string
	Content string
	Remove  bool
}

// RewriteBranch commits edits on top of the memory branch using only git
// plumbing (a temporary index via GIT_INDEX_FILE, hash-object, write-tree,
// commit-tree) and moves the branch with a compare-and-swap update-ref.
// The repository's own index is not involved. It returns the new commit.
func RewriteBranch(t testing.TB, dir string, env []string, msg string, edits ...FileEdit) string {
	t.Helper()
	old := GitOut(t, dir, env, "rev-parse", MemRef)
	commit, ok := PlumbingCommit(t, dir, env, old, msg, edits...)
	if !ok {
		t.Fatalf("plumbing commit on %s failed", MemRef)
	}
	if r := Git(t, dir, env, nil, "update-ref", MemRef, commit, old); r.Code != 0 {
		t.Fatalf("update-ref %s %s %s failed", MemRef, commit, old)
	}
	return commit
}

// PlumbingCommit builds a commit whose parent is old and whose tree is
// old's tree with edits applied. It never touches any ref; ok is false
// when commit-tree refuses.
func PlumbingCommit(t testing.TB, dir string, env []string, old, msg string, edits ...FileEdit) (string, bool) {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index") // git creates it itself
	ienv := WithEnv(env, "GIT_INDEX_FILE="+idx)
	MustGit(t, dir, ienv, "read-tree", old)
	for _, e := range edits {
		if e.Remove {
			MustGit(t, dir, ienv, "update-index", "--force-remove", "--", e.Path)
			continue
		}
		r := Git(t, dir, ienv, []byte(e.Content), "hash-object", "-w", "--stdin")
		if r.Code != 0 {
			t.Fatalf("hash-object: %s", r)
		}
		blob := strings.TrimSpace(r.Stdout)
		MustGit(t, dir, ienv, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+e.Path)
	}
	tree := GitOut(t, dir, ienv, "write-tree")
	r := Git(t, dir, env, nil, "commit-tree", tree, "-p", old, "-m", msg)
	if r.Code != 0 {
		return "", false
	}
	return strings.TrimSpace(r.Stdout), true
}

// WantHashes fails unless got equals want (as sets).
func WantHashes(t testing.TB, what string, got map[string]bool, want ...string) {
	t.Helper()
	w := map[string]bool{}
	for _, h := range want {
		w[h] = true
	}
	var missing, extra []string
	for h := range w {
		if !got[h] {
			missing = append(missing, h[:12])
		}
	}
	for h := range got {
		if !w[h] {
			extra = append(extra, h[:12])
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		sort.Strings(missing)
		sort.Strings(extra)
		t.Fatalf("%s: %d hashes, want %d; missing %v, unexpected %v", what, len(got), len(w), missing, extra)
	}
}

// Pulled is the per-device line a pull prints for verified news.
func Pulled(device string, n int) string {
	return fmt.Sprintf("%s: +%d checkpoints, verified", device, n)
}

// WantLine fails unless out holds a line equal to want.
func WantLine(t testing.TB, what, out, want string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l == want {
			return
		}
	}
	t.Fatalf("%s: no line %q in output:\n%s", what, want, out)
}

// Tip is the memory branch's commit in the repository at dir ("" when
// there is none).
func Tip(t testing.TB, dir string, env []string) string {
	t.Helper()
	r := Git(t, dir, env, nil, "rev-parse", "--verify", "-q", MemRef)
	if r.Code != 0 {
		return ""
	}
	return strings.TrimSpace(r.Stdout)
}

// HashSet is the set of the hashes of list (what `git ctx log --json`
// printed on device); a hash listed twice fails the test.
func HashSet(t testing.TB, device string, list []Record) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range list {
		if out[r.Hash] {
			t.Fatalf("device %s: log lists %s twice", device, r.Hash)
		}
		out[r.Hash] = true
	}
	return out
}

// ChainLineRE matches one chain line in its canonical form.
var ChainLineRE = regexp.MustCompile(`^\{"hash":"[0-9a-f]{64}","parent":"[0-9a-f]{64}","ts":[0-9]+\}$`)

// WantPaths fails (now) unless got is exactly the set want, naming every
// path that is missing or unexpected.
func WantPaths(t testing.TB, got, want []string) {
	t.Helper()
	w := map[string]bool{}
	for _, p := range want {
		w[p] = true
	}
	g := map[string]bool{}
	for _, p := range got {
		g[p] = true
		if !w[p] {
			t.Errorf("unexpected path on the branch: %s", p)
		}
	}
	for _, p := range want {
		if !g[p] {
			t.Errorf("missing path on the branch: %s", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("branch has %d paths, want %d", len(got), len(want))
	}
	if t.Failed() {
		t.FailNow()
	}
}

// WantChain checks the chain text names cps in order, linked from the
// genesis, in the canonical line form.
func WantChain(t testing.TB, chain string, cps []Record) {
	t.Helper()
	lines := ParseChain(t, chain)
	if len(lines) != len(cps) {
		t.Fatalf("chain has %d lines, want %d", len(lines), len(cps))
	}
	for i, l := range strings.Split(strings.TrimSuffix(chain, "\n"), "\n") {
		if !ChainLineRE.MatchString(l) {
			t.Fatalf("chain line %d not canonical: %q", i+1, l)
		}
	}
	prev := ZeroHash
	for i, e := range lines {
		if e.Hash != cps[i].Hash || e.Parent != prev || e.Parent != cps[i].Parent || e.TS != cps[i].TS {
			t.Fatalf("chain line %d: %+v, checkpoint %s parent %s ts %d", i+1, e, cps[i].Hash, cps[i].Parent, cps[i].TS)
		}
		prev = e.Hash
	}
}

// WantCommitSubjects checks the newest len(cps) commits of the branch are
// "ctx: checkpoint <hash12> by <device> (turn N): <summary>".
func WantCommitSubjects(t testing.TB, repo string, env []string, cps []Record, device string) {
	t.Helper()
	subjects := strings.Split(GitOut(t, repo, env, "log", "--format=%s", "-n", strconv.Itoa(len(cps)), MemRef), "\n")
	for i, s := range subjects {
		cp := cps[len(cps)-1-i]
		want := fmt.Sprintf("ctx: checkpoint %s by %s (turn %d): %s", cp.Hash[:12], device, cp.Turn, cp.Summary)
		if s != want {
			t.Fatalf("commit subject %q, want %q", s, want)
		}
	}
}
