// Package workspacetest builds sandboxes for tests of code that acts
// through a workspace.Workspace (the checkpoint, snapshot and package
// capabilities, the cache refresh): an isolated HOME, git configuration and
// per-device GIT_CTX_HOME, real repositories made with the real git, a
// Workspace per simulated device, checkpoints recorded through
// internal/checkpoints, and checks that the cache mirrors the
// branch exactly. It is imported by tests only; it runs git and writes
// only under the test's temporary directories.
package workspacetest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// World is one test's sandbox: HOME, git configuration and the GIT_CTX_HOME
// of each simulated device live under root.
type World struct {
	Root string // the sandbox directory
}

// NewWorld isolates the process environment (t.Setenv: these tests are not
// parallel) and returns the sandbox.
func NewWorld(t *testing.T) *World {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"home", "xdg", "xdgdata"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(root, "gitconfig")
	body := "[user]\n\tname = Memory Test\n\temail = memory@example.org\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "xdgdata"))
	t.Setenv("GIT_CTX_HOME", filepath.Join(root, "ctxhome-default"))
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	t.Setenv("GIT_CTX_SESSION", "")
	t.Setenv("GIT_CTX_MODEL", "")
	t.Setenv("TZ", "UTC")
	return &World{Root: root}
}

// Home is the GIT_CTX_HOME of device name.
func (w *World) Home(name string) string { return filepath.Join(w.Root, "ctxhome-"+name) }

// NewRepo makes a repository with one commit on main.
func (w *World) NewRepo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(w.Root, name)
	Git(t, w.Root, "init", "-q", "-b", "main", dir)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "initial commit")
	return dir
}

// Git runs git in dir with the test's environment.
func Git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return GitEnv(t, dir, nil, args...)
}

// GitEnv runs git in dir with the test's environment plus extra.
func GitEnv(t *testing.T, dir string, extra []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %q in %s: %v\n%s", args, dir, err, errb.String())
	}
	return out.String()
}

// Notices collects Workspace.Notice lines (safe for concurrent use).
type Notices struct {
	mu    sync.Mutex
	lines []string
}

// Add records one notice.
func (n *Notices) Add(s string) { n.mu.Lock(); n.lines = append(n.lines, s); n.mu.Unlock() }

// Take returns the notices recorded since the last Take.
func (n *Notices) Take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.lines
	n.lines = nil
	return out
}

// Dev is one Workspace as one device sees one repository.
type Dev struct {
	*workspace.Workspace
	Notes *Notices // every notice of the workspace
	Dir   string
}

// Record appends one checkpoint by d and returns its hash.
func (d *Dev) Record(t *testing.T, in checkpoints.RecordInput) string {
	t.Helper()
	cp, err := checkpoints.Record(context.Background(), d.Workspace, in)
	if err != nil {
		t.Fatalf("Record %q: %v", in.Summary, err)
	}
	return cp.Hash
}

// Say is a checkpoint input whose summary is the formatted s.
func Say(s string, args ...any) checkpoints.RecordInput {
	return checkpoints.RecordInput{Summary: fmt.Sprintf(s, args...)}
}

// Open opens the repository at dir as the device whose GIT_CTX_HOME is home.
// The identity is loaded at once, so later changes of GIT_CTX_HOME (for
// other devices) do not affect this one.
func Open(t *testing.T, dir, home string) *Dev {
	t.Helper()
	t.Setenv("GIT_CTX_HOME", home)
	m, err := workspace.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Identity(); err != nil {
		t.Fatal(err)
	}
	d := &Dev{Workspace: m, Notes: &Notices{}, Dir: dir}
	m.Notice = d.Notes.Add
	return d
}

// MustDeviceID is this device's id.
func (d *Dev) MustDeviceID(t *testing.T) string {
	t.Helper()
	id, err := d.Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.DeviceID
}

// MustRepoID is the repository id (Workspace.RepoID).
func (d *Dev) MustRepoID(t *testing.T) string {
	t.Helper()
	id, err := d.RepoID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// MustTip is the memory branch tip.
func (d *Dev) MustTip(t *testing.T) string {
	t.Helper()
	h, err := d.Store.Tip()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// Ctx is a context that ends with the test (3 minutes at most).
func Ctx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// BranchRecord is one checkpoint on the branch.
type BranchRecord struct {
	Repo, Device string
	Seq          int
	Raw          []byte
}

// BranchRecords lists every checkpoint every chain on the branch names,
// with its file bytes, keyed by hash.
func BranchRecords(t *testing.T, m *workspace.Workspace) map[string]BranchRecord {
	t.Helper()
	out := map[string]BranchRecord{}
	v, err := m.Store.View()
	if err != nil {
		t.Fatalf("branch view: %v", err)
	}
	repos, err := v.Repos()
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range repos {
		devs, err := v.ChainDevices(repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			entries, err := v.Chain(repo, d)
			if err != nil {
				t.Fatalf("chain %s/%s: %v", repo[:8], d, err)
			}
			for i, e := range entries {
				raw, err := v.CheckpointFile(repo, e.Hash)
				if err != nil {
					t.Fatalf("checkpoint %s: %v", e.Hash, err)
				}
				if _, dup := out[e.Hash]; dup {
					t.Fatalf("checkpoint %s named twice on the branch", e.Hash)
				}
				out[e.Hash] = BranchRecord{Repo: repo, Device: d, Seq: i, Raw: raw}
			}
		}
	}
	return out
}

// CacheEqualsBranch brings the cache up to date (Workspace.Cache) and checks it
// holds exactly the checkpoints of the branch: the same hashes in every
// repository, each entry's MarshalFile() equal to the branch file byte for
// byte, at its chain position, verified unless listed in unverified. It
// returns the entries by hash.
func CacheEqualsBranch(t *testing.T, m *workspace.Workspace, unverified map[string]bool) map[string]*cache.Entry {
	t.Helper()
	ctx := Ctx(t)
	want := BranchRecords(t, m)
	repos := map[string]bool{}
	for _, r := range want {
		repos[r.Repo] = true
	}
	if own, err := m.RepoID(ctx); err == nil {
		repos[own] = true
	}
	db, err := m.Cache(ctx)
	if err != nil {
		t.Fatalf("Cache: %v", err)
	}
	got := map[string]*cache.Entry{}
	for repo := range repos {
		es, err := db.Log(ctx, cache.Query{RepoID: repo})
		if err != nil {
			db.Close()
			t.Fatalf("Log: %v", err)
		}
		for _, e := range es {
			got[e.Hash] = e
		}
	}
	tip, _ := db.Tip(ctx, gitstore.BranchRef)
	db.Close()
	if branchTip, _ := m.Store.Tip(); tip != branchTip.String() {
		t.Errorf("cache tip %s, branch tip %s", tip, branchTip)
	}
	var missing, extra []string
	for h := range want {
		if got[h] == nil {
			missing = append(missing, h[:12])
		}
	}
	for h := range got {
		if _, ok := want[h]; !ok {
			extra = append(extra, h[:12])
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("cache differs from the branch: missing %v, not on the branch %v", missing, extra)
	}
	for h, w := range want {
		e := got[h]
		b, err := e.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, w.Raw) {
			t.Errorf("checkpoint %s: cache entry differs from the branch file\n cache  %s\n branch %s", h[:12], b, w.Raw)
		}
		if e.RepoID != w.Repo || e.DeviceID != w.Device || e.Seq != w.Seq {
			t.Errorf("checkpoint %s: cached at %s/%s/%d, on the branch at %s/%s/%d", h[:12], e.RepoID[:8], e.DeviceID, e.Seq, w.Repo[:8], w.Device, w.Seq)
		}
		if e.Verified == unverified[h] {
			t.Errorf("checkpoint %s: verified %v, want %v", h[:12], e.Verified, !unverified[h])
		}
	}
	// Nothing else hides in the file (e.g. rows of a repository that left
	// the branch).
	n := RawCount(t, m, `SELECT count(*) FROM checkpoints`)
	if n != len(want) {
		t.Errorf("cache.db holds %d checkpoint rows, the branch %d", n, len(want))
	}
	return got
}

// RawCount runs a count query on cache.db directly.
func RawCount(t *testing.T, m *workspace.Workspace, q string) int {
	t.Helper()
	db := OpenRaw(t, m)
	defer db.Close()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// OpenRaw opens cache.db with plain database/sql (no cache lock).
func OpenRaw(t *testing.T, m *workspace.Workspace) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+cache.Path(m.CacheDir())+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// EditBranch commits edits (path → content) on top of the memory branch
// with plumbing only and moves the ref with a compare-and-swap.
func EditBranch(t *testing.T, dir, msg string, edits map[string]string) string {
	t.Helper()
	old := strings.TrimSpace(Git(t, dir, "rev-parse", gitstore.BranchRef))
	idx := filepath.Join(t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	GitEnv(t, dir, env, "read-tree", old)
	for p, content := range edits {
		f := filepath.Join(t.TempDir(), "blob")
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		blob := strings.TrimSpace(GitEnv(t, dir, env, "hash-object", "-w", f))
		GitEnv(t, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := strings.TrimSpace(GitEnv(t, dir, env, "write-tree"))
	commit := strings.TrimSpace(Git(t, dir, "commit-tree", tree, "-p", old, "-m", msg))
	Git(t, dir, "update-ref", gitstore.BranchRef, commit, old)
	return commit
}

// ContainsAny reports whether a line of lines contains sub.
func ContainsAny(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
