package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/output"
)

// Helpers shared by the hooks_*_test.go files.

// newHookSandbox is a sandbox plus the environment of device "dev" with its
// own CODEX_HOME (agent hooks read it), so no test can see a real Codex
// configuration.
func newHookSandbox(t *testing.T) (*sandbox, []string) {
	t.Helper()
	s := newSandbox(t)
	codex := s.dir(t, "codex-home")
	return s, withEnv(s.env("dev"), "CODEX_HOME="+codex)
}

// hkCodexConfig is $CODEX_HOME/config.toml of env.
func hkCodexConfig(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			return filepath.Join(v, "config.toml")
		}
	}
	return ""
}

// hkPathWithoutGitCtx is env with a PATH on which no git-ctx can be found:
// the test binary's directory and any other directory holding a git-ctx
// are left out.
func hkPathWithoutGitCtx(env []string) []string {
	var keep []string
	for _, d := range filepath.SplitList(origPATH) {
		if d == "" || d == binDir {
			continue
		}
		if fi, err := os.Stat(filepath.Join(d, "git-ctx")); err == nil && !fi.IsDir() {
			continue
		}
		keep = append(keep, d)
	}
	return withEnv(env, "PATH="+strings.Join(keep, string(os.PathListSeparator)))
}

// hkConfigHooks reports whether git is new enough (2.54) for git-ctx to
// use config-based hooks instead of stub files.
func hkConfigHooks(t *testing.T, dir string, env []string) bool {
	t.Helper()
	m := regexp.MustCompile(`git version (\d+)\.(\d+)`).FindStringSubmatch(gitOut(t, dir, env, "version"))
	if m == nil {
		t.Fatalf("cannot read the git version")
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 2 || major == 2 && minor >= 54
}

// hkRequireStubHooks skips tests that inspect hook files when git-ctx uses
// config-based hooks.
func hkRequireStubHooks(t *testing.T, dir string, env []string) {
	t.Helper()
	if hkConfigHooks(t, dir, env) {
		t.Skip("git >= 2.54: git-ctx uses config-based hooks; this test inspects hook files")
	}
}

// ---- git ctx hooks status --json ----

// hkHookState is a `hooks` element of hkStatus.
type hkHookState = output.HookState

// hkStatus is `git ctx hooks status --json` (its shape in internal/output).
type hkStatus struct{ output.HooksStatus }

// hkHooksStatus runs `git ctx hooks status --json`.
func hkHooksStatus(t *testing.T, dir string, env []string) hkStatus {
	t.Helper()
	out := mustCtx(t, dir, env, "hooks", "status", "--json")
	var st hkStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("decode hooks status --json: %v\n%s", err, out)
	}
	return st
}

// hook returns the state of one git hook.
func (st hkStatus) hook(t *testing.T, name string) hkHookState {
	t.Helper()
	for _, h := range st.Hooks {
		if h.Hook == name {
			return h
		}
	}
	t.Fatalf("hooks status has no %s: %+v", name, st)
	return hkHookState{}
}

// hkWantHook checks one hook's installed/via/chained/modified/foreign state.
func hkWantHook(t *testing.T, what string, st hkStatus, name string, installed bool, via string, chained, modified, foreign bool) {
	t.Helper()
	h := st.hook(t, name)
	if h.Installed != installed || h.Via != via || h.Chained != chained || h.Modified != modified || h.Foreign != foreign {
		t.Fatalf("%s: hooks status of %s = %+v; want installed=%v via=%q chained=%v modified=%v foreign=%v",
			what, name, h, installed, via, chained, modified, foreign)
	}
}

// hkHooksStatusText runs `git ctx hooks status` and returns its text.
func hkHooksStatusText(t *testing.T, dir string, env []string) string {
	t.Helper()
	return mustCtx(t, dir, env, "hooks", "status")
}

// hkWantStatusLine fails unless the status text has a line for hook (aligned
// as "%-12s state") whose state starts with prefix.
func hkWantStatusLine(t *testing.T, text, hook, prefix string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if name, state, ok := strings.Cut(l, " "); ok && name == hook {
			if !strings.HasPrefix(strings.TrimSpace(state), prefix) {
				t.Fatalf("hooks status line for %s = %q, want it to start with %q\n%s", hook, l, prefix, text)
			}
			return
		}
	}
	t.Fatalf("hooks status has no line for %s:\n%s", hook, text)
}

// ---- the hook log ----

// hkCommonDir is the absolute git common directory of dir.
func hkCommonDir(t *testing.T, dir string, env []string) string {
	t.Helper()
	return gitOut(t, dir, env, "rev-parse", "--path-format=absolute", "--git-common-dir")
}

// hkHookLog returns the lines of <git-common-dir>/ctx/hooks.log.
func hkHookLog(t *testing.T, dir string, env []string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hkCommonDir(t, dir, env), "ctx", "hooks.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// hkHookRuns counts hook log lines of hook (the second field of a line).
func hkHookRuns(lines []string, hook string) int {
	n := 0
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && f[1] == hook {
			n++
		}
	}
	return n
}

// ---- commits and their checkpoints ----

// hkCommitTrailerRE finds the "Commit: <sha>" line of a commit's checkpoint.
var hkCommitTrailerRE = regexp.MustCompile(`(?m)^Commit: ([0-9a-f]{40})$`)

// hkRecordedCommits returns the commit each checkpoint (oldest first)
// records, "" for a checkpoint without a Commit line.
func hkRecordedCommits(list []record) []string {
	var out []string
	for _, r := range list {
		m := hkCommitTrailerRE.FindAllStringSubmatch(r.Summary, -1)
		if len(m) == 1 {
			out = append(out, m[0][1])
		} else {
			out = append(out, "")
		}
	}
	return out
}

// hkOldestFirst runs `git ctx log --json` and returns it oldest first.
func hkOldestFirst(t *testing.T, dir string, env []string) []record {
	t.Helper()
	list := logJSON(t, dir, env)
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list
}

// hkChangedPaths lists the paths commit sha changed against its first
// parent, sorted.
func hkChangedPaths(t *testing.T, dir string, env []string, sha string) []string {
	t.Helper()
	return inpNULList(mustRun(t, dir, env, "git", "diff", "--no-renames", "--name-only", "-z", sha+"^1", sha, "--"))
}

// hkWantCommitRecord checks that r is the checkpoint of commit sha: the
// summary is its subject, its (trimmed) body and the Commit line; the files
// are the paths it changed.
func hkWantCommitRecord(t *testing.T, dir string, env []string, r record, sha string) {
	t.Helper()
	subject := gitOut(t, dir, env, "log", "-1", "--format=%s", sha)
	body := gitOut(t, dir, env, "log", "-1", "--format=%b", sha)
	want := subject
	if body != "" {
		want += "\n\n" + body
	}
	want += "\n\nCommit: " + sha
	if r.Summary != want {
		t.Fatalf("checkpoint of %s: summary\n%q\nwant\n%q", sha[:12], r.Summary, want)
	}
	files := append([]string(nil), r.Files...)
	sort.Strings(files)
	if wantFiles := hkChangedPaths(t, dir, env, sha); strings.Join(files, "\x00") != strings.Join(wantFiles, "\x00") {
		t.Fatalf("checkpoint of %s: files %q, want %q", sha[:12], r.Files, wantFiles)
	}
}

// hkGitCommit runs `git commit -q ARGS` and returns its result (never fails
// the test by itself).
func hkGitCommit(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return execute(t, dir, env, nil, append([]string{"git", "commit", "-q"}, args...)...)
}

// hkQuietCommit writes files, commits them with msg, wants exit 0 and an
// empty stderr (a recording hook says nothing), and returns the commit.
func hkQuietCommit(t *testing.T, dir string, env []string, msg string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
		mustRun(t, dir, env, "git", "add", "--", p)
	}
	r := hkGitCommit(t, dir, env, "-m", msg)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("git commit -m %q: want exit 0 and no stderr, got %s", msg, r)
	}
	return gitOut(t, dir, env, "rev-parse", "HEAD")
}

// hkWriteExec writes an executable file with exactly mode.
func hkWriteExec(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// hkFileMode is the permission bits of path.
func hkFileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// hkExists reports whether path hkExists (without following a final symlink).
func hkExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// hkDirNames lists the names in dir, sorted, skipping git's *.sample hooks.
func hkDirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sample") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
