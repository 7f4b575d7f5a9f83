package gitrepo_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// sha256Hex is the expected form of every derived repo id, computed here
// independently of gitrepo.HashID.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOpen(t *testing.T) {
	isolateGit(t)
	top := newRepo(t)
	commitFiles(t, top, "first", map[string]string{"README": "hi\n"})
	sub := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(realPath(t, t.TempDir()), "linked")
	gitOut(t, top, "worktree", "add", "-q", "-b", "side", wt)
	bare := filepath.Join(realPath(t, t.TempDir()), "srv.git")
	gitOut(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	mainGit := filepath.Join(top, ".git")

	tests := []struct {
		name       string
		dir        string
		gitDir     string
		commonDir  string
		bare       bool
		inWorkTree bool
		workTree   string
	}{
		{"top", top, mainGit, mainGit, false, true, top},
		{"subdirectory", sub, mainGit, mainGit, false, true, top},
		{"linked worktree", wt, filepath.Join(mainGit, "worktrees", "linked"), mainGit, false, true, wt},
		{"bare", bare, bare, bare, true, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := open(t, tc.dir)
			if r.Dir != tc.dir {
				t.Errorf("Dir = %s, want %s", r.Dir, tc.dir)
			}
			if got := realPath(t, r.GitDir); got != tc.gitDir {
				t.Errorf("GitDir = %s, want %s", r.GitDir, tc.gitDir)
			}
			if got := realPath(t, r.CommonDir); got != tc.commonDir {
				t.Errorf("CommonDir = %s, want %s", r.CommonDir, tc.commonDir)
			}
			if !filepath.IsAbs(r.GitDir) || !filepath.IsAbs(r.CommonDir) {
				t.Errorf("GitDir %q and CommonDir %q must be absolute", r.GitDir, r.CommonDir)
			}
			if r.Bare != tc.bare || r.InWorkTree != tc.inWorkTree {
				t.Errorf("Bare, InWorkTree = %v, %v; want %v, %v", r.Bare, r.InWorkTree, tc.bare, tc.inWorkTree)
			}
			w, err := r.WorkTree(context.Background())
			if err != nil {
				t.Fatalf("WorkTree: %v", err)
			}
			if w != "" {
				w = realPath(t, w)
			}
			if w != tc.workTree {
				t.Errorf("WorkTree = %q, want %q", w, tc.workTree)
			}
		})
	}
	// The linked worktree has a git dir of its own but shares objects and refs.
	if l, m := open(t, wt), open(t, top); l.GitDir == m.GitDir || l.CommonDir != m.CommonDir {
		t.Errorf("linked: GitDir %s CommonDir %s; main: GitDir %s CommonDir %s", l.GitDir, l.CommonDir, m.GitDir, m.CommonDir)
	}
}

func TestOpenOutsideRepo(t *testing.T) {
	isolateGit(t)
	dir := realPath(t, t.TempDir())
	// Stop discovery at the temporary directory's parent, whatever lies above.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	for _, d := range []string{dir, filepath.Join(dir, "nested")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := gitrepo.Open(context.Background(), d)
		if !errors.Is(err, gitrepo.ErrNotARepo) {
			t.Errorf("Open(%s) = %v, %v; want ErrNotARepo", d, r, err)
		}
	}
	if _, err := gitrepo.Open(context.Background(), filepath.Join(dir, "missing")); err == nil {
		t.Error("Open of a missing directory succeeded")
	}
}

func TestOpenHonoursGitDir(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	elsewhere := realPath(t, t.TempDir())
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	r := open(t, elsewhere)
	if got, want := realPath(t, r.CommonDir), filepath.Join(repo, ".git"); got != want {
		t.Errorf("with GIT_DIR: CommonDir = %s, want %s", got, want)
	}
}

func TestParseConfigListFromGit(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	cfg := filepath.Join(dir, ".git", "config")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[remote \"Up\"]\n\turl = https://one.example/x.git\n\tURL = https://two.example/x.git\n" +
		"[Ctx]\n\tRepoId = my-project\n\tflag\n\tempty =\n" +
		"[x]\n\tml = \"line1\\nline2\"\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out := gitOut(t, dir, "config", "-z", "--list")
	m := gitrepo.ParseConfigList([]byte(out))
	check := func(key string, want ...string) {
		t.Helper()
		got := m[key]
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	check("remote.Up.url", "https://one.example/x.git", "https://two.example/x.git")
	check("ctx.repoid", "my-project")
	check("ctx.flag", "")
	check("ctx.empty", "")
	check("x.ml", "line1\nline2")
	check("user.email", "test@example.org") // from the global file
	check("core.bare", "false")

	// The same through Repo.
	r := open(t, dir)
	if got := r.Config("CTX.REPOID"); got != "my-project" {
		t.Errorf("Config(CTX.REPOID) = %q", got)
	}
	if got := r.Config("remote.Up.url"); got != "https://two.example/x.git" {
		t.Errorf("Config(remote.Up.url) = %q, want the last value", got)
	}
	if got := r.ConfigAll("REMOTE.Up.Url"); len(got) != 2 {
		t.Errorf("ConfigAll(REMOTE.Up.Url) = %q, want two values", got)
	}
	if got := r.ConfigAll("remote.up.url"); len(got) != 0 {
		t.Errorf("ConfigAll(remote.up.url) = %q: the subsection is case-sensitive", got)
	}
	if got := r.Remotes(); strings.Join(got, ",") != "Up" {
		t.Errorf("Remotes() = %q, want [Up]", got)
	}
	if name, email := r.Identity(); name != "Test User" || email != "test@example.org" {
		t.Errorf("Identity() = %q, %q", name, email)
	}
}

// setRemote adds remote name with url to the repository at dir.
func setRemote(t *testing.T, dir, name, url string) {
	t.Helper()
	gitOut(t, dir, "remote", "add", name, url)
}

func repoID(t *testing.T, dir string) (string, error) {
	t.Helper()
	return open(t, dir).RepoID(context.Background())
}

func mustRepoID(t *testing.T, dir string) string {
	t.Helper()
	id, err := repoID(t, dir)
	if err != nil {
		t.Fatalf("RepoID(%s): %v", dir, err)
	}
	return id
}

func TestRepoIDFromRemote(t *testing.T) {
	isolateGit(t)
	want := sha256Hex("github.com/example/app")

	// Clones of one repository over ssh and https agree.
	for _, url := range []string{
		"git@github.com:example/app.git",
		"https://github.com/example/app.git",
		"https://user:token@GitHub.com/example/app/",
		"ssh://git@github.com:22/example/app",
	} {
		dir := newRepo(t)
		commitFiles(t, dir, "root "+url, map[string]string{"f": url})
		setRemote(t, dir, "origin", url)
		if got := mustRepoID(t, dir); got != want {
			t.Errorf("origin %s: RepoID = %s, want %s", url, got, want)
		}
		if got := open(t, dir).RemoteURL(); got != "github.com/example/app" {
			t.Errorf("origin %s: RemoteURL = %q", url, got)
		}
	}

	tests := []struct {
		name    string
		remotes [][2]string // name, url (added in this order)
		config  map[string]string
		want    string // normalised URL whose hash is the id; "" = root commit rule
	}{
		{"origin preferred", [][2]string{{"alpha", "https://h/alpha"}, {"origin", "https://h/origin"}}, nil, "h/origin"},
		{"ctx.remote wins over origin", [][2]string{{"origin", "https://h/origin"}, {"upstream", "git@h:up/stream.git"}},
			map[string]string{"ctx.remote": "upstream"}, "h/up/stream"},
		{"only remote", [][2]string{{"fork", "ssh://git@h:2222/me/app.git"}}, nil, "h:2222/me/app"},
		{"several remotes, none chosen", [][2]string{{"a", "https://h/a"}, {"b", "https://h/b"}}, nil, ""},
		{"ctx.remote names a remote without url", [][2]string{{"origin", "https://h/origin"}},
			map[string]string{"ctx.remote": "nosuch"}, ""},
		{"ctx.repoId overrides", [][2]string{{"origin", "https://h/origin"}},
			map[string]string{"ctx.repoId": "my-project"}, "=my-project"},
		{"ctx.repoId trimmed", nil, map[string]string{"ctx.repoId": "  spaced  "}, "=spaced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			root := commitFiles(t, dir, "root", map[string]string{"f": "x"})
			for _, r := range tc.remotes {
				setRemote(t, dir, r[0], r[1])
			}
			for k, v := range tc.config {
				gitOut(t, dir, "config", k, v)
			}
			want := sha256Hex(root)
			switch {
			case strings.HasPrefix(tc.want, "="):
				want = tc.want[1:]
			case tc.want != "":
				want = sha256Hex(tc.want)
			}
			if got := mustRepoID(t, dir); got != want {
				t.Errorf("RepoID = %s, want %s", got, want)
			}
		})
	}
}

// A second URL on the memory remote (a push mirror added with
// `git remote set-url --add`) must not rename the repository: the id follows
// the first URL, the one git fetches from.
func TestRepoIDIgnoresAddedPushURL(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	setRemote(t, dir, "origin", "https://github.com/example/app.git")
	before := mustRepoID(t, dir)
	gitOut(t, dir, "remote", "set-url", "--add", "origin", "git@mirror.example:backup/app.git")
	if after := mustRepoID(t, dir); after != before {
		t.Errorf("RepoID changed from %s to %s after adding a second URL", before, after)
	}
	if got := open(t, dir).RemoteURL(); got != "github.com/example/app" {
		t.Errorf("RemoteURL = %q, want the first URL", got)
	}
}

func TestRepoIDInvalidOverride(t *testing.T) {
	isolateGit(t)
	for _, v := range []string{"a/b", "..", ".", `a\b`, strings.Repeat("x", 129), ".git", ".GIT", "git~1", ".git. ", ".g\u200cit", ".gitmodules", "GITMOD~1"} {
		dir := newRepo(t)
		setRemote(t, dir, "origin", "https://github.com/example/app.git")
		gitOut(t, dir, "config", "ctx.repoId", v)
		if id, err := repoID(t, dir); err == nil {
			t.Errorf("ctx.repoId=%q: RepoID = %q, want an error", v, id)
		}
	}
}

func TestRepoIDFromRootCommit(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	root := commitFiles(t, dir, "root", map[string]string{"a": "1"})
	commitFiles(t, dir, "second", map[string]string{"a": "2"})
	if got, want := mustRepoID(t, dir), sha256Hex(root); got != want {
		t.Errorf("RepoID = %s, want sha256(%s) = %s", got, root, want)
	}

	// Two roots (unrelated histories merged): the smallest id is used.
	gitOut(t, dir, "checkout", "-q", "--orphan", "other")
	gitOut(t, dir, "rm", "-q", "-rf", ".")
	other := commitFiles(t, dir, "other root", map[string]string{"b": "1"})
	gitOut(t, dir, "checkout", "-q", "main")
	gitOut(t, dir, "merge", "-q", "--allow-unrelated-histories", "-m", "join", "other")
	// The id found first is kept (cached under the common dir): memory
	// recorded so far stays under it.
	if got, want := mustRepoID(t, dir), sha256Hex(root); got != want {
		t.Errorf("after merging another root: RepoID = %s, want the first one %s", got, want)
	}
	cache := filepath.Join(dir, ".git", "ctx", "root-commit")
	if b, err := os.ReadFile(cache); err != nil || strings.TrimSpace(string(b)) != root {
		t.Fatalf("root commit cache = %q, %v; want %s", b, err, root)
	}
	// Without the cache the smallest root is used.
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	roots := []string{root, other}
	sort.Strings(roots)
	if got, want := mustRepoID(t, dir), sha256Hex(roots[0]); got != want {
		t.Errorf("two roots: RepoID = %s, want sha256(%s) = %s", got, roots[0], want)
	}
	// A damaged cache is ignored.
	if err := os.WriteFile(cache, []byte("not an id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := mustRepoID(t, dir), sha256Hex(roots[0]); got != want {
		t.Errorf("damaged cache: RepoID = %s, want %s", got, want)
	}
}

func TestRepoIDNoRemoteNoCommit(t *testing.T) {
	isolateGit(t)
	dir := newRepo(t)
	if id, err := repoID(t, dir); !errors.Is(err, gitrepo.ErrNoRepoID) {
		t.Errorf("RepoID = %q, %v; want ErrNoRepoID", id, err)
	}
	// ctx.repoId still works in an empty repository.
	gitOut(t, dir, "config", "ctx.repoId", "named")
	if got := mustRepoID(t, dir); got != "named" {
		t.Errorf("RepoID = %q, want named", got)
	}
}

// conflictingBranches makes main and feature both change file "f" from one
// base, and leaves feature checked out.
func conflictingBranches(t *testing.T, dir string) {
	t.Helper()
	commitFiles(t, dir, "base", map[string]string{"f": "base\n"})
	gitOut(t, dir, "checkout", "-q", "-b", "feature")
	commitFiles(t, dir, "feature change", map[string]string{"f": "feature\n"})
	gitOut(t, dir, "checkout", "-q", "main")
	commitFiles(t, dir, "main change", map[string]string{"f": "main\n"})
	gitOut(t, dir, "checkout", "-q", "feature")
}

// stoppedRebase starts `git rebase [extra...] main` and checks that it
// stopped on a conflict.
func stoppedRebase(t *testing.T, dir string, extra ...string) {
	t.Helper()
	if out, err := gitTry(dir, append(append([]string{"rebase"}, extra...), "main")...); err == nil {
		t.Fatalf("rebase did not stop on the conflict: %s", out)
	}
	if _, err := gitTry(dir, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Fatal("HEAD is still on a branch: the rebase did not stop")
	}
}

func TestCurrentBranch(t *testing.T) {
	isolateGit(t)
	t.Run("on a branch", func(t *testing.T) {
		dir := newRepo(t)
		if got := open(t, dir).CurrentBranch(); got != "main" {
			t.Errorf("unborn main: CurrentBranch = %q", got)
		}
		commitFiles(t, dir, "one", map[string]string{"a": "1"})
		gitOut(t, dir, "checkout", "-q", "-b", "feat/x-1")
		if got := open(t, dir).CurrentBranch(); got != "feat/x-1" {
			t.Errorf("CurrentBranch = %q, want feat/x-1", got)
		}
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := open(t, sub).CurrentBranch(); got != "feat/x-1" {
			t.Errorf("from a subdirectory: CurrentBranch = %q, want feat/x-1", got)
		}
	})
	t.Run("detached", func(t *testing.T) {
		dir := newRepo(t)
		commitFiles(t, dir, "one", map[string]string{"a": "1"})
		gitOut(t, dir, "checkout", "-q", "--detach")
		if got := open(t, dir).CurrentBranch(); got != "" {
			t.Errorf("CurrentBranch = %q, want empty", got)
		}
	})
	t.Run("linked worktree", func(t *testing.T) {
		dir := newRepo(t)
		commitFiles(t, dir, "one", map[string]string{"a": "1"})
		wt := filepath.Join(realPath(t, t.TempDir()), "wt")
		gitOut(t, dir, "worktree", "add", "-q", "-b", "elsewhere", wt)
		if got := open(t, wt).CurrentBranch(); got != "elsewhere" {
			t.Errorf("worktree: CurrentBranch = %q, want elsewhere", got)
		}
		if got := open(t, dir).CurrentBranch(); got != "main" {
			t.Errorf("main worktree: CurrentBranch = %q, want main", got)
		}
	})
	t.Run("bare", func(t *testing.T) {
		bare := filepath.Join(realPath(t, t.TempDir()), "b.git")
		gitOut(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
		if got := open(t, bare).CurrentBranch(); got != "" {
			t.Errorf("bare: CurrentBranch = %q, want empty", got)
		}
	})
	for _, backend := range [][]string{nil, {"--apply"}} {
		name := "stopped rebase (merge backend)"
		if backend != nil {
			name = "stopped rebase (apply backend)"
		}
		t.Run(name, func(t *testing.T) {
			dir := newRepo(t)
			conflictingBranches(t, dir)
			stoppedRebase(t, dir, backend...)
			if got := open(t, dir).CurrentBranch(); got != "feature" {
				t.Errorf("CurrentBranch = %q, want feature", got)
			}
			gitOut(t, dir, "rebase", "--abort")
			if got := open(t, dir).CurrentBranch(); got != "feature" {
				t.Errorf("after abort: CurrentBranch = %q, want feature", got)
			}
		})
	}
	t.Run("stopped rebase of a detached HEAD", func(t *testing.T) {
		dir := newRepo(t)
		conflictingBranches(t, dir)
		gitOut(t, dir, "checkout", "-q", "--detach")
		stoppedRebase(t, dir)
		if got := open(t, dir).CurrentBranch(); got != "" {
			t.Errorf("CurrentBranch = %q, want empty (no branch is being rebased)", got)
		}
	})
}
