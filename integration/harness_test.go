// Package integration runs the real git-ctx binary against real git
// repositories, end to end. TestMain builds the binary once; every test gets
// its own temporary directories and an explicit, isolated environment.
package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/s3test"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Set by TestMain.
var (
	binDir   string // directory holding the built git-ctx
	binPath  string // the built git-ctx (lean, as shipped)
	fullPath string // the built git-ctx-full beside it
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
	fullPath = filepath.Join(binDir, "git-ctx-full")
	// The shipped pair (Makefile, install.sh): without the man-page
	// renderer; git-ctx lean (ctx_lean: no MCP or AWS SDK), handing `mcp`
	// and s3:// session commands to git-ctx-full beside it.
	for _, b := range []struct{ tags, out string }{
		{"sqlite_fts5,urfave_cli_no_docs,ctx_lean", binPath},
		{"sqlite_fts5,urfave_cli_no_docs", fullPath},
	} {
		build := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, "./cmd/git-ctx")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "integration: go build -tags %s failed: %v\n%s", b.tags, err, out)
			return 1
		}
	}
	defer s3test.StopShared() // the S3 server of the S3 session tests, if one started
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

// sandbox is the shared testrepo.Sandbox with the binary's directory
// first on PATH and strictErrors in every environment.
type sandbox struct {
	tr   *testrepo.Sandbox
	root string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	tr := testrepo.NewSandbox(t, binDir,
		// An error that reaches the CLI without a fault kind exits 70
		// ("error without a kind"): no test passes over one.
		strictErrors)
	return &sandbox{tr: tr, root: tr.Root}
}

// ctxHome is the GIT_CTX_HOME of the simulated device name.
func (s *sandbox) ctxHome(device string) string { return s.tr.CtxHome(device) }

// env is the complete environment of a command run as device name.
func (s *sandbox) env(device string) []string { return s.tr.Env(device) }

// strictErrors is in the environment of every git-ctx the suite runs.
const strictErrors = "GIT_CTX_STRICT_ERRORS=1"

// dir makes a directory under the sandbox.
func (s *sandbox) dir(t *testing.T, name string) string { return s.tr.Dir(t, name) }

// withEnv returns env with extra KEY=VALUE entries replacing or adding.
func withEnv(env []string, extra ...string) []string { return testrepo.WithEnv(env, extra...) }

// ---- running commands ----

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// binCLI is the shared CLI test helpers (testrepo.CLI) running the built
// binary: the helpers below are this package's names for them.
var binCLI = testrepo.CLI{Exec: binRun}

// binRun runs argv in dir with exactly env, bounded by cmdTimeout. argv[0]
// "git" is the real git, "git-ctx" is the built binary; anything else is
// looked up as is.
func binRun(t testing.TB, dir string, env []string, stdin []byte, argv ...string) testrepo.Result {
	t.Helper()
	res, err := binExec(cmdTimeout, dir, env, stdin, argv...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// execute runs argv in dir with exactly env (binRun).
func execute(t *testing.T, dir string, env []string, stdin []byte, argv ...string) result {
	t.Helper()
	return fromRepo(binRun(t, dir, env, stdin, argv...))
}

// inpExec runs argv like execute, bounded by limit, and never calls t (it
// is safe in goroutines); see binExec.
func inpExec(limit time.Duration, dir string, env []string, stdin []byte, argv ...string) (result, error) {
	r, err := binExec(limit, dir, env, stdin, argv...)
	return fromRepo(r), err
}

// binExec runs argv bounded by limit and never calls t: "git" is the real
// git, "git-ctx" the built binary; stdin nil is /dev/null. A non-zero exit
// is a result; a command that could not run or outlived limit is an error.
func binExec(limit time.Duration, dir string, env []string, stdin []byte, argv ...string) (testrepo.Result, error) {
	prog := argv[0]
	switch prog {
	case "git":
		prog = gitPath
	case "git-ctx":
		prog = binPath
		env = withEnv(env, strictErrors)
	}
	return testrepo.Run(limit, dir, env, stdin, prog, argv[1:]...)
}

// fromRepo is r with this package's field names.
func fromRepo(r testrepo.Result) result {
	return result{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

// toRepo is r as a testrepo.Result.
func (r result) toRepo() testrepo.Result {
	return testrepo.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// inpResult makes the result of a finished command from its output and the
// error of Run or Wait: an exit status is the result's code; any other
// failure, or one while timedOut (the context's error) is set, is an error
// that quotes the output.
func inpResult(stdout, stderr *bytes.Buffer, err, timedOut error) (result, error) {
	r, err := testrepo.Finished(stdout, stderr, err, timedOut)
	return fromRepo(r), err
}

// inpNULList splits NUL-terminated git output (-z) into its non-empty
// entries, sorted.
func inpNULList(out string) []string {
	return testrepo.NULList(out)
}

// run runs argv and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, env []string, argv ...string) (string, string, int) {
	t.Helper()
	r := binCLI.Run(t, dir, env, argv...)
	return r.Stdout, r.Stderr, r.Code
}

// mustRun runs argv, fails the test unless it exits 0, and returns stdout.
func mustRun(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	return binCLI.MustRun(t, dir, env, argv...)
}

// gitOut runs git and returns its trimmed stdout; it must succeed.
func gitOut(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return binCLI.GitOut(t, dir, env, args...)
}

// gitCtx runs `git ctx ARGS` through git's dispatch.
func gitCtx(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return fromRepo(binCLI.Ctx(t, dir, env, args...))
}

// mustCtx runs `git ctx ARGS`, which must exit 0, and returns stdout.
func mustCtx(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return binCLI.MustCtx(t, dir, env, args...)
}

// wantCode fails unless r exited with code.
func wantCode(t *testing.T, what string, r result, code int) {
	t.Helper()
	testrepo.WantCode(t, what, r.toRepo(), code)
}

// wantOneLine fails unless s is exactly one non-empty line ending in "\n".
func wantOneLine(t *testing.T, what, s string) {
	t.Helper()
	testrepo.WantOneLine(t, what, s)
}

// ---- repositories ----

// newRepo makes a non-bare repository under the sandbox with one commit on
// main.
func newRepo(t *testing.T, s *sandbox, name string) string {
	t.Helper()
	return testrepo.NewRepo(t, s.tr, name)
}

// commitFiles writes files (path → content) and commits them with msg.
func commitFiles(t *testing.T, dir string, env []string, msg string, files map[string]string) string {
	t.Helper()
	return testrepo.CommitFiles(t, dir, env, msg, files)
}

func writeFile(t *testing.T, path, content string) { t.Helper(); testrepo.WriteFile(t, path, content) }

func readFile(t *testing.T, path string) []byte { t.Helper(); return testrepo.ReadFile(t, path) }

// sha256Hex is the lowercase hex SHA-256 of s (how repo ids are made).
func sha256Hex(s string) string { return testrepo.SHA256Hex(s) }

// ---- checkpoints ----

// record is a checkpoint as git-ctx prints it.
type record = testrepo.Record

const zeroHash = testrepo.ZeroHash

var hexHash = testrepo.HexHash

// checkpoint runs `git ctx checkpoint --json ARGS` and returns the record.
func checkpoint(t *testing.T, dir string, env []string, args ...string) record {
	t.Helper()
	return binCLI.Checkpoint(t, dir, env, args...)
}

func decodeRecord(t *testing.T, data []byte) record {
	t.Helper()
	return testrepo.DecodeRecord(t, data)
}

// inpCtxJSON runs `git ctx ARGS`, which must exit 0, and decodes its
// stdout into v.
func inpCtxJSON(t *testing.T, dir string, env []string, v any, args ...string) {
	t.Helper()
	binCLI.CtxJSON(t, dir, env, v, args...)
}

// logJSON runs `git ctx log --json ARGS`.
func logJSON(t *testing.T, dir string, env []string, args ...string) []record {
	t.Helper()
	var list []record
	inpCtxJSON(t, dir, env, &list, append([]string{"log", "--json"}, args...)...)
	return list
}

// statusInfo is `git ctx status --json`.
type statusInfo = testrepo.StatusInfo

// status runs `git ctx status --json`.
func status(t *testing.T, dir string, env []string) statusInfo {
	t.Helper()
	var st statusInfo
	inpCtxJSON(t, dir, env, &st, "status", "--json")
	return st
}

// verifyReport is the part of `git ctx verify --json` the tests read.
type verifyReport = testrepo.VerifyReport

// verifyJSON runs `git ctx verify --json`, checks the exit code agrees with
// ok, and returns the report.
func verifyJSON(t *testing.T, dir string, env []string) verifyReport {
	t.Helper()
	return binCLI.Verify(t, dir, env)
}

// ---- the memory branch ----

const memRef = testrepo.MemRef

// branchPaths lists every file path on the memory branch.
func branchPaths(t *testing.T, dir string, env []string) []string {
	t.Helper()
	return testrepo.BranchPaths(t, dir, env)
}

// branchFile returns the exact bytes of path on the memory branch.
func branchFile(t *testing.T, dir string, env []string, path string) string {
	t.Helper()
	return testrepo.BranchFile(t, dir, env, path)
}

// ctxV1CheckpointPath / ghyllV1CheckpointPath are where a checkpoint lives.
func ctxV1CheckpointPath(repoID, hash string) string {
	return testrepo.CtxV1CheckpointPath(repoID, hash)
}

func ghyllV1CheckpointPath(repoID, hash string) string {
	return testrepo.GhyllV1CheckpointPath(repoID, hash)
}

// chainLine is one line of a device chain.
type chainLine = testrepo.ChainLine

func parseChain(t *testing.T, data string) []chainLine {
	t.Helper()
	return testrepo.ParseChain(t, data)
}

// fileEdit is one change to the memory branch's tree made with plumbing.
type fileEdit struct {
	path    string
	content string
	remove  bool
}

// repoEdits is edits as testrepo.FileEdits.
func repoEdits(edits []fileEdit) []testrepo.FileEdit {
	out := make([]testrepo.FileEdit, len(edits))
	for i, e := range edits {
		out[i] = testrepo.FileEdit{Path: e.path, Content: e.content, Remove: e.remove}
	}
	return out
}

// rewriteBranch commits edits on top of the memory branch with plumbing
// and moves the branch with a compare-and-swap (testrepo.RewriteBranch).
func rewriteBranch(t *testing.T, dir string, env []string, msg string, edits ...fileEdit) string {
	t.Helper()
	return testrepo.RewriteBranch(t, dir, env, msg, repoEdits(edits)...)
}

// plumbingCommit builds a commit whose parent is old and whose tree is
// old's tree with edits applied. It never touches any ref.
func plumbingCommit(t *testing.T, dir string, env []string, old, msg string, edits ...fileEdit) (string, bool) {
	t.Helper()
	return testrepo.PlumbingCommit(t, dir, env, old, msg, repoEdits(edits)...)
}

// newPublicKeyPEM returns a fresh, valid ed25519 public key in the PEM form
// device keys use.
func newPublicKeyPEM(t *testing.T) string { t.Helper(); return testrepo.NewPublicKeyPEM(t) }

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
