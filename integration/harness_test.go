// Package integration runs the real git-ctx binary against real git
// repositories, end to end. TestMain builds the binary once; every test gets
// its own temporary directories and an explicit, isolated environment.
package integration

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// Set by TestMain.
var (
	binDir   string // directory holding the built git-ctx
	binPath  string // the built git-ctx
	gitPath  string // the real git executable
	origPATH string
)

// cmdTimeout bounds every command a test runs, so a hang fails instead of
// blocking the whole package.
const cmdTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if os.Getenv(crashHelperEnv) != "" {
		// A helper process of the crash tests: it needs no binary.
		return m.Run()
	}
	var err error
	if gitPath, err = exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "integration: git not found on PATH:", err)
		return 1
	}
	origPATH = os.Getenv("PATH")
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	binDir, err = os.MkdirTemp("", "git-ctx-integration-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	binPath = filepath.Join(binDir, "git-ctx")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", binPath, "./cmd/git-ctx")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "integration: go build failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// moduleRoot finds the directory of go.mod (via `go env GOMOD`, else "..").
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the module root: %v", err)
	}
	return abs, nil
}

// ---- sandbox: an isolated HOME, git config and per-device GIT_CTX_HOMEs ----

type sandbox struct {
	root string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"home", "xdg", "xdgdata"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "[user]\n\tname = Test User\n\temail = test@example.org\n" +
		"[init]\n\tdefaultBranch = main\n" +
		"[commit]\n\tgpgsign = false\n" +
		"[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(filepath.Join(root, "gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return &sandbox{root: root}
}

// ctxHome is the GIT_CTX_HOME of the simulated device name (created by
// git-ctx itself on first use, with the modes it wants).
func (s *sandbox) ctxHome(device string) string {
	return filepath.Join(s.root, "ctxhome-"+device)
}

// env is the complete environment of a command run as device name.
func (s *sandbox) env(device string) []string {
	return []string{
		"HOME=" + filepath.Join(s.root, "home"),
		"GIT_CTX_HOME=" + s.ctxHome(device),
		"GIT_CONFIG_GLOBAL=" + filepath.Join(s.root, "gitconfig"),
		"GIT_CONFIG_NOSYSTEM=1",
		"XDG_CONFIG_HOME=" + filepath.Join(s.root, "xdg"),
		"XDG_DATA_HOME=" + filepath.Join(s.root, "xdgdata"),
		"PATH=" + binDir + string(os.PathListSeparator) + origPATH,
		"LC_ALL=C",
		"TZ=UTC",
		"GIT_EDITOR=true",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CEILING_DIRECTORIES=" + s.root,
		// An error that reaches the CLI without a fault kind exits 70
		// ("error without a kind"): no test passes over one.
		strictErrors,
	}
}

// strictErrors is in the environment of every git-ctx the suite runs.
const strictErrors = "GIT_CTX_STRICT_ERRORS=1"

// dir makes a directory under the sandbox.
func (s *sandbox) dir(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(s.root, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// withEnv returns env with extra KEY=VALUE entries replacing or adding.
func withEnv(env []string, extra ...string) []string {
	out := append([]string(nil), env...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, e := range out {
			if strings.HasPrefix(e, k+"=") {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

// ---- running commands ----

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// execute runs argv in dir with exactly env. argv[0] "git" is the real git,
// "git-ctx" is the built binary; anything else is looked up as is.
func execute(t *testing.T, dir string, env []string, stdin []byte, argv ...string) result {
	t.Helper()
	res, err := inpExec(cmdTimeout, dir, env, stdin, argv...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// inpExec runs argv like execute, bounded by limit, and never calls t (it
// is safe in goroutines): "git" is the real git, "git-ctx" the built
// binary; stdin nil is /dev/null. A non-zero exit is a result; a command
// that could not run or outlived limit is an error.
func inpExec(limit time.Duration, dir string, env []string, stdin []byte, argv ...string) (result, error) {
	prog := argv[0]
	switch prog {
	case "git":
		prog = gitPath
	case "git-ctx":
		prog = binPath
		env = withEnv(env, strictErrors)
	}
	c, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(c, prog, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res, err := inpResult(&stdout, &stderr, cmd.Run(), c.Err())
	if err != nil {
		return res, fmt.Errorf("run %q in %s: %w", argv, dir, err)
	}
	return res, nil
}

// inpResult makes the result of a finished command from its output and the
// error of Run or Wait: an exit status is the result's code; any other
// failure, or one while timedOut (the context's error) is set, is an error
// that quotes the output.
func inpResult(stdout, stderr *bytes.Buffer, err, timedOut error) (result, error) {
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && timedOut == nil:
		res.code = ee.ExitCode()
	default:
		return res, fmt.Errorf("%v (ctx %v)\n%s", err, timedOut, res)
	}
	return res, nil
}

// inpNULList splits NUL-terminated git output (-z) into its non-empty
// entries, sorted.
func inpNULList(out string) []string {
	var list []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	sort.Strings(list)
	return list
}

// run runs argv and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, env []string, argv ...string) (string, string, int) {
	t.Helper()
	r := execute(t, dir, env, nil, argv...)
	return r.stdout, r.stderr, r.code
}

// mustRun runs argv, fails the test unless it exits 0, and returns stdout.
func mustRun(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	r := execute(t, dir, env, nil, argv...)
	if r.code != 0 {
		t.Fatalf("%q in %s: %s", argv, dir, r)
	}
	return r.stdout
}

// gitOut runs git and returns its trimmed stdout; it must succeed.
func gitOut(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, dir, env, append([]string{"git"}, args...)...))
}

// gitCtx runs `git ctx ARGS` through git's dispatch.
func gitCtx(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return execute(t, dir, env, nil, append([]string{"git", "ctx"}, args...)...)
}

// mustCtx runs `git ctx ARGS`, which must exit 0, and returns stdout.
func mustCtx(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	r := gitCtx(t, dir, env, args...)
	if r.code != 0 {
		t.Fatalf("git ctx %q in %s: %s", args, dir, r)
	}
	return r.stdout
}

// wantCode fails unless r exited with code.
func wantCode(t *testing.T, what string, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: want exit %d, got %s", what, code, r)
	}
}

// wantOneLine fails unless s is exactly one non-empty line ending in "\n".
func wantOneLine(t *testing.T, what, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 || strings.TrimSpace(s) == "" {
		t.Fatalf("%s: want one line on stderr, got %q", what, s)
	}
}

// ---- repositories ----

// newRepo makes a non-bare repository under the sandbox with one commit on
// main.
func newRepo(t *testing.T, s *sandbox, name string) string {
	t.Helper()
	dir := filepath.Join(s.root, name)
	env := s.env("setup")
	mustRun(t, s.root, env, "git", "init", "-q", "-b", "main", dir)
	writeFile(t, filepath.Join(dir, "README.md"), "hello\n")
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n")
	mustRun(t, dir, env, "git", "add", "-A")
	mustRun(t, dir, env, "git", "commit", "-q", "-m", "initial commit")
	return dir
}

// commitFiles writes files (path → content) and commits them with msg.
func commitFiles(t *testing.T, dir string, env []string, msg string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
		mustRun(t, dir, env, "git", "add", "--", p)
	}
	mustRun(t, dir, env, "git", "commit", "-q", "-m", msg)
	return gitOut(t, dir, env, "rev-parse", "HEAD")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sha256Hex is the lowercase hex SHA-256 of s (how repo ids are made).
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ---- checkpoints ----

// record is a checkpoint as git-ctx prints it.
type record struct {
	V          int       `json:"v"`
	Hash       string    `json:"hash"`
	Parent     string    `json:"parent"`
	Device     string    `json:"device"`
	Author     string    `json:"author"`
	TS         int64     `json:"ts"`
	Repo       string    `json:"repo"`
	Branch     string    `json:"branch"`
	Session    string    `json:"session"`
	Turn       int       `json:"turn"`
	Model      string    `json:"model"`
	Summary    string    `json:"summary"`
	Emb        []float64 `json:"emb"`
	Files      []string  `json:"files"`
	Tools      []string  `json:"tools"`
	Injections []string  `json:"injections"`
	Sig        string    `json:"sig"`
}

const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkpoint runs `git ctx checkpoint --json ARGS` and returns the record.
func checkpoint(t *testing.T, dir string, env []string, args ...string) record {
	t.Helper()
	out := mustCtx(t, dir, env, append([]string{"checkpoint", "--json"}, args...)...)
	return decodeRecord(t, []byte(out))
}

func decodeRecord(t *testing.T, data []byte) record {
	t.Helper()
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("decode checkpoint: %v\n%s", err, data)
	}
	if !hexHash.MatchString(r.Hash) {
		t.Fatalf("checkpoint hash %q is not 64 hex characters", r.Hash)
	}
	return r
}

// inpCtxJSON runs `git ctx ARGS`, which must exit 0, and decodes its
// stdout into v.
func inpCtxJSON(t *testing.T, dir string, env []string, v any, args ...string) {
	t.Helper()
	out := mustCtx(t, dir, env, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode git ctx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// logJSON runs `git ctx log --json ARGS`.
func logJSON(t *testing.T, dir string, env []string, args ...string) []record {
	t.Helper()
	var list []record
	inpCtxJSON(t, dir, env, &list, append([]string{"log", "--json"}, args...)...)
	return list
}

// statusInfo is `git ctx status --json`.
type statusInfo struct {
	Initialized       bool   `json:"initialized"`
	Branch            string `json:"branch"`
	Tip               string `json:"tip"`
	Layout            string `json:"layout"`
	Device            string `json:"device"`
	Fingerprint       string `json:"fingerprint"`
	KeyPublished      bool   `json:"key_published"`
	RepoID            string `json:"repo_id"`
	Remote            string `json:"remote"`
	Checkpoints       int    `json:"checkpoints"`
	DeviceCheckpoints int    `json:"device_checkpoints"`
	Devices           int    `json:"devices"`
}

// status runs `git ctx status --json`.
func status(t *testing.T, dir string, env []string) statusInfo {
	t.Helper()
	var st statusInfo
	inpCtxJSON(t, dir, env, &st, "status", "--json")
	return st
}

// verifyReport is the part of `git ctx verify --json` the tests read;
// the rest is kept raw so assertions can search it.
type verifyReport struct {
	OK     bool   `json:"ok"`
	Commit string `json:"commit"`
	Layout string `json:"layout"`
	Chains []struct {
		Repo     string          `json:"repo"`
		Device   string          `json:"device"`
		Entries  int             `json:"entries"`
		Verified int             `json:"verified"`
		Failure  json.RawMessage `json:"failure"`
	} `json:"chains"`
	Problems []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"problems"`
	raw string
}

// verifyJSON runs `git ctx verify --json`, checks the exit code agrees with
// ok, and returns the report.
func verifyJSON(t *testing.T, dir string, env []string) verifyReport {
	t.Helper()
	r := gitCtx(t, dir, env, "verify", "--json")
	var rep verifyReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode verify --json: %v\n%s", err, r)
	}
	rep.raw = r.stdout
	if rep.OK != (r.code == 0) || (r.code != 0 && r.code != 1) {
		t.Fatalf("verify --json: ok=%v but %s", rep.OK, r)
	}
	return rep
}

// ---- the memory branch ----

const memRef = "refs/heads/ghyll/memory"

// branchPaths lists every file path on the memory branch.
func branchPaths(t *testing.T, dir string, env []string) []string {
	t.Helper()
	return inpNULList(gitOut(t, dir, env, "ls-tree", "-r", "--name-only", "-z", memRef))
}

// branchFile returns the exact bytes of path on the memory branch.
func branchFile(t *testing.T, dir string, env []string, path string) string {
	t.Helper()
	return mustRun(t, dir, env, "git", "show", memRef+":"+path)
}

// ctxV1CheckpointPath / ghyllV1CheckpointPath are where a checkpoint lives.
func ctxV1CheckpointPath(repoID, hash string) string {
	return "repos/" + repoID + "/checkpoints/" + hash[0:2] + "/" + hash + ".json"
}

func ghyllV1CheckpointPath(repoID, hash string) string {
	return "repos/" + repoID + "/checkpoints/" + hash + ".json"
}

// chainLine is one line of a device chain.
type chainLine struct {
	Hash   string `json:"hash"`
	Parent string `json:"parent"`
	TS     int64  `json:"ts"`
}

func parseChain(t *testing.T, data string) []chainLine {
	t.Helper()
	var out []chainLine
	if data == "" {
		return nil
	}
	if !strings.HasSuffix(data, "\n") {
		t.Fatalf("chain does not end in a newline: %q", data)
	}
	for _, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		var e chainLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("chain line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// fileEdit is one change to the memory branch's tree made with plumbing.
type fileEdit struct {
	path    string
	content string
	remove  bool
}

// rewriteBranch commits edits on top of the memory branch using only git
// plumbing (a temporary index via GIT_INDEX_FILE, hash-object, write-tree,
// commit-tree) and moves the branch with a compare-and-swap update-ref.
// The repository's own index is not involved. It returns the new commit.
func rewriteBranch(t *testing.T, dir string, env []string, msg string, edits ...fileEdit) string {
	t.Helper()
	old := gitOut(t, dir, env, "rev-parse", memRef)
	commit, ok := plumbingCommit(t, dir, env, old, msg, edits...)
	if !ok {
		t.Fatalf("plumbing commit on %s failed", memRef)
	}
	if _, _, code := run(t, dir, env, "git", "update-ref", memRef, commit, old); code != 0 {
		t.Fatalf("update-ref %s %s %s failed", memRef, commit, old)
	}
	return commit
}

// plumbingCommit builds a commit whose parent is old and whose tree is
// old's tree with edits applied. It never touches any ref.
func plumbingCommit(t *testing.T, dir string, env []string, old, msg string, edits ...fileEdit) (string, bool) {
	t.Helper()
	idx, err := os.CreateTemp("", "ctx-it-index-")
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	os.Remove(idx.Name()) // git wants to create it itself
	defer os.Remove(idx.Name())
	ienv := withEnv(env, "GIT_INDEX_FILE="+idx.Name())
	mustRun(t, dir, ienv, "git", "read-tree", old)
	for _, e := range edits {
		if e.remove {
			mustRun(t, dir, ienv, "git", "update-index", "--force-remove", "--", e.path)
			continue
		}
		r := execute(t, dir, ienv, []byte(e.content), "git", "hash-object", "-w", "--stdin")
		if r.code != 0 {
			t.Fatalf("hash-object: %s", r)
		}
		blob := strings.TrimSpace(r.stdout)
		mustRun(t, dir, ienv, "git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+e.path)
	}
	tree := gitOut(t, dir, ienv, "write-tree")
	r := execute(t, dir, env, nil, "git", "commit-tree", tree, "-p", old, "-m", msg)
	if r.code != 0 {
		return "", false
	}
	return strings.TrimSpace(r.stdout), true
}

// newPublicKeyPEM returns a fresh, valid ed25519 public key in the PEM form
// device keys use.
func newPublicKeyPEM(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "ED25519 PUBLIC KEY", Bytes: pub}))
}

// ---- HEAD / index / work tree snapshots ----

// repoState is everything git-ctx must leave alone in one checkout.
type repoState struct {
	head, symref string
	index        []byte
	indexExists  bool
	status       string
	refs         string
	files        map[string]string // work tree (no .git), or a git-dir subdirectory
	extra        map[string]string // e.g. .git/rebase-merge
}

// snapshot records HEAD, the index bytes, the status, every ref but the
// memory branch and the work tree's files. extraDir (relative to the git
// dir, may be "") is recorded too. Status is run with GIT_OPTIONAL_LOCKS=0
// so that taking the snapshot does not itself refresh the index.
func snapshot(t *testing.T, dir string, env []string, extraDir string) repoState {
	t.Helper()
	env = withEnv(env, "GIT_OPTIONAL_LOCKS=0")
	var st repoState
	st.head = gitOut(t, dir, env, "rev-parse", "HEAD")
	so, se, code := run(t, dir, env, "git", "symbolic-ref", "HEAD")
	st.symref = fmt.Sprintf("%d %s %s", code, so, se)
	bare := gitOut(t, dir, env, "rev-parse", "--is-bare-repository") == "true"
	indexPath := gitOut(t, dir, env, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if b, err := os.ReadFile(indexPath); err == nil {
		st.index, st.indexExists = b, true
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var refs []string
	for _, l := range strings.Split(gitOut(t, dir, env, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, memRef+" ") {
			refs = append(refs, l)
		}
	}
	st.refs = strings.Join(refs, "\n")
	if !bare {
		st.status = gitOut(t, dir, env, "status", "--porcelain=v2", "--branch", "--untracked-files=all")
		top := gitOut(t, dir, env, "rev-parse", "--show-toplevel")
		st.files = treeFiles(t, top, true)
	}
	if extraDir != "" {
		gd := gitOut(t, dir, env, "rev-parse", "--path-format=absolute", "--git-dir")
		st.extra = treeFiles(t, filepath.Join(gd, extraDir), false)
	}
	return st
}

// treeFiles maps every regular file under root to its mode and content.
func treeFiles(t *testing.T, root string, skipGit bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if skipGit && rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = info.Mode().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (a repoState) diff(b repoState) []string {
	var d []string
	cmp := func(what, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s changed:\n  before %q\n  after  %q", what, x, y))
		}
	}
	cmp("HEAD", a.head, b.head)
	cmp("symbolic-ref HEAD", a.symref, b.symref)
	cmp("index existence", fmt.Sprint(a.indexExists), fmt.Sprint(b.indexExists))
	if !bytes.Equal(a.index, b.index) {
		d = append(d, fmt.Sprintf("index bytes changed (%d → %d bytes)", len(a.index), len(b.index)))
	}
	cmp("status --porcelain=v2", a.status, b.status)
	cmp("refs other than the memory branch", a.refs, b.refs)
	cmpMap := func(what string, x, y map[string]string) {
		for k, v := range x {
			if w, ok := y[k]; !ok {
				d = append(d, fmt.Sprintf("%s: %s disappeared", what, k))
			} else if v != w {
				d = append(d, fmt.Sprintf("%s: %s changed: %q → %q", what, k, v, w))
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				d = append(d, fmt.Sprintf("%s: %s appeared", what, k))
			}
		}
	}
	cmpMap("work tree", a.files, b.files)
	cmpMap("git dir", a.extra, b.extra)
	return d
}

func wantUnchanged(t *testing.T, before, after repoState) {
	t.Helper()
	if d := before.diff(after); len(d) > 0 {
		t.Fatalf("git-ctx touched the checkout:\n%s", strings.Join(d, "\n"))
	}
}

// equalStrings reports whether a and b hold the same strings in order.
func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
