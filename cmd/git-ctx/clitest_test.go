package main

// The in-process CLI harness. Command behaviour (arguments, messages, exit
// codes, output, what lands on the branch) is tested here by calling run
// with in-memory streams, against real repositories made with the real git
// executable, each test in its own temporary directories with its own HOME,
// git config and one GIT_CTX_HOME per simulated device. What needs several
// processes (concurrency, crash safety, remotes served by git daemon or
// http-backend, hooks that git runs, terminals) stays in ../../integration,
// which runs the built binary.
//
// run reads the process's working directory and environment (repository
// discovery, GIT_CTX_HOME, git config, NO_COLOR, …), so a call here swaps
// both for exactly the directory and environment the test names and puts
// them back afterwards. Tests in this package must therefore run one at a
// time: none may call t.Parallel (newSandbox calls t.Setenv, which panics in
// a parallel test, so a mistake fails loudly).
//
// The API follows the integration harness (sandbox, env, gitCtx, mustCtx,
// execute, syncDevice, …) so that a test reads the same in both places.
// Three names differ, because package main already declares or imports
// them: runArgv is that harness's run (run is the CLI), cliCheckpoint and
// cliStatus are its checkpoint and status. The call itself goes through
// runIn (exitcodes_test.go).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// cliCmdTimeout bounds every git command a test runs (run itself is bounded
// by go test's -timeout, which then shows where it hung).
const cliCmdTimeout = 2 * time.Minute

// ---- sandbox: an isolated HOME, git config and per-device GIT_CTX_HOMEs ----

// sandbox is the shared testrepo.Sandbox with bin (see newSandbox) first
// on PATH.
type sandbox struct {
	tr   *testrepo.Sandbox
	root string
}

// newSandbox makes the test's root directory. It also puts on PATH a
// "git-ctx" that fails when run: commands that look git-ctx up (doctor,
// hooks install) find it as they would after an install, and anything that
// tried to run it as a process would fail the test instead of silently
// running some other build.
func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	tr := testrepo.NewSandbox(t, "")
	// Never reached by a call (each sets its whole environment), but makes
	// t.Parallel panic and keeps a stray direct call away from the real home.
	t.Setenv("GIT_CTX_HOME", filepath.Join(tr.Root, "ctxhome-unset"))
	tr.Bin = tr.Dir(t, "bin")
	stub := "#!/bin/sh\necho 'git-ctx: the in-process tests run the CLI in process, not this stub' >&2\nexit 125\n"
	if err := os.WriteFile(filepath.Join(tr.Bin, "git-ctx"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return &sandbox{tr: tr, root: tr.Root}
}

// ctxHome is the GIT_CTX_HOME of the simulated device name.
func (s *sandbox) ctxHome(device string) string { return s.tr.CtxHome(device) }

// env is the complete environment of a command run as device name.
func (s *sandbox) env(device string) []string { return s.tr.Env(device) }

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

// execute runs argv in dir with exactly env. `git ctx ARGS` (also with
// leading `git -c KEY=VALUE` options, which git hands to its subcommands
// as GIT_CONFIG_PARAMETERS) and `git-ctx ARGS` run the CLI in process;
// everything else runs as a process ("git" is the real git).
func execute(t *testing.T, dir string, env []string, stdin []byte, argv ...string) result {
	t.Helper()
	if args, env2, ok := cliArgs(env, argv); ok {
		return cliInProcess(t, dir, env2, stdin, args)
	}
	r, err := testrepo.Run(cliCmdTimeout, dir, env, stdin, argv[0], argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return fromRepo(r)
}

// fromRepo is r with this package's field names.
func fromRepo(r testrepo.Result) result {
	return result{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

// toRepo is r as a testrepo.Result.
func (r result) toRepo() testrepo.Result {
	return testrepo.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// cliArgs recognises a git-ctx command line: it returns the CLI's arguments
// and the environment git would give it.
func cliArgs(env, argv []string) ([]string, []string, bool) {
	switch {
	case len(argv) > 0 && argv[0] == "git-ctx":
		return argv[1:], env, true
	case len(argv) < 2 || argv[0] != "git":
		return nil, nil, false
	}
	var params []string
	i := 1
	for ; i+1 < len(argv) && argv[i] == "-c"; i += 2 {
		k, v, _ := strings.Cut(argv[i+1], "=")
		params = append(params, fmt.Sprintf("'%s'='%s'", k, v))
	}
	if i >= len(argv) || argv[i] != "ctx" {
		return nil, nil, false
	}
	if len(params) > 0 {
		env = withEnv(env, "GIT_CONFIG_PARAMETERS="+strings.Join(params, " "))
	}
	return argv[i+1:], env, true
}

// cliInProcess calls run (through runIn) in dir with exactly env as the
// process environment, then restores both.
func cliInProcess(t *testing.T, dir string, env []string, stdin []byte, args []string) result {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Environ()
	defer func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		if err := os.Chdir(wd); err != nil {
			panic(err) // every later test would run in the wrong place
		}
	}()
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatalf("git-ctx %q: %v", args, err)
	}
	var r result
	r.code, r.stdout, r.stderr = runIn(string(stdin), args...)
	return r
}

// runArgv runs argv and returns stdout, stderr and the exit code.
func runArgv(t *testing.T, dir string, env []string, argv ...string) (string, string, int) {
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

// gitCtx runs `git ctx ARGS` (in process).
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

// wantFsckClean fails unless git fsck --strict finds nothing but dangling
// objects.
func wantFsckClean(t *testing.T, dir string, env []string) {
	t.Helper()
	testrepo.WantFsckClean(t, dir, env)
}

// ---- checkpoints ----

// record is a checkpoint as git-ctx prints it.
type record = testrepo.Record

const zeroHash = testrepo.ZeroHash

var hexHash = testrepo.HexHash

// cliCheckpoint runs `git ctx checkpoint --json ARGS` and returns the record.
func cliCheckpoint(t *testing.T, dir string, env []string, args ...string) record {
	t.Helper()
	out := mustCtx(t, dir, env, append([]string{"checkpoint", "--json"}, args...)...)
	return decodeRecord(t, []byte(out))
}

func decodeRecord(t *testing.T, data []byte) record {
	t.Helper()
	return testrepo.DecodeRecord(t, data)
}

// logJSON runs `git ctx log --json ARGS`.
func logJSON(t *testing.T, dir string, env []string, args ...string) []record {
	t.Helper()
	out := mustCtx(t, dir, env, append([]string{"log", "--json"}, args...)...)
	var list []record
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decode log --json: %v\n%s", err, out)
	}
	return list
}

// statusInfo is `git ctx status --json`.
type statusInfo = testrepo.StatusInfo

// cliStatus runs `git ctx status --json`.
func cliStatus(t *testing.T, dir string, env []string) statusInfo {
	t.Helper()
	out := mustCtx(t, dir, env, "status", "--json")
	var st statusInfo
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("decode status --json: %v\n%s", err, out)
	}
	return st
}

// verifyReport is the part of `git ctx verify --json` the tests read.
type verifyReport = testrepo.VerifyReport

// verifyJSON runs `git ctx verify --json`, checks the exit code agrees with
// ok, and returns the report.
func verifyJSON(t *testing.T, dir string, env []string) verifyReport {
	t.Helper()
	return testrepo.DecodeVerify(t, gitCtx(t, dir, env, "verify", "--json").toRepo())
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

// newPublicKeyPEM returns a fresh, valid ed25519 public key in the PEM form
// device keys use.
func newPublicKeyPEM(t *testing.T) string { t.Helper(); return testrepo.NewPublicKeyPEM(t) }

// ---- devices and remotes ----

// syncDevice is one simulated machine: a checkout and its own GIT_CTX_HOME.
type syncDevice struct {
	name string // the sandbox device name (GIT_CTX_HOME suffix)
	dir  string
	env  []string
	s    *sandbox
}

func newSyncDevice(s *sandbox, name, dir string) *syncDevice {
	return &syncDevice{name: name, dir: dir, env: s.env(name), s: s}
}

// id is the device id git-ctx created for this device.
func (d *syncDevice) id(t *testing.T) string { t.Helper(); return d.s.tr.DeviceID(t, d.name) }

func (d *syncDevice) ctx(t *testing.T, args ...string) result {
	t.Helper()
	return gitCtx(t, d.dir, d.env, args...)
}

func (d *syncDevice) must(t *testing.T, args ...string) string {
	t.Helper()
	return mustCtx(t, d.dir, d.env, args...)
}

func (d *syncDevice) cp(t *testing.T, summary string) record {
	t.Helper()
	return cliCheckpoint(t, d.dir, d.env, "-m", summary)
}

func (d *syncDevice) git(t *testing.T, args ...string) string {
	t.Helper()
	return gitOut(t, d.dir, d.env, args...)
}

// tip is the device's memory branch tip ("" when there is none).
func (d *syncDevice) tip(t *testing.T) string { t.Helper(); return testrepo.Tip(t, d.dir, d.env) }

// hashes is the set of checkpoint hashes `git ctx log --json` lists.
func (d *syncDevice) hashes(t *testing.T) map[string]bool {
	t.Helper()
	return testrepo.HashSet(t, d.name, logJSON(t, d.dir, d.env))
}

// wantVerifies fails unless `git ctx verify --json` passes on the device.
func (d *syncDevice) wantVerifies(t *testing.T) verifyReport {
	t.Helper()
	rep := verifyJSON(t, d.dir, d.env)
	if !rep.OK {
		t.Fatalf("device %s: verify fails:\n%s", d.name, rep.Raw)
	}
	return rep
}

// syncRemote is a bare repository and the URL devices use to reach it (a
// path: remotes served over a network are tested in ../../integration).
type syncRemote struct {
	bare string
	url  string
}

// syncNewRemote creates srv/remote.git in the sandbox, reached by its path
// (kind "file", the only kind here).
func syncNewRemote(t *testing.T, s *sandbox, kind string) *syncRemote {
	t.Helper()
	if kind != "file" {
		t.Fatalf("remote kind %q needs a server: test it in ../../integration", kind)
	}
	return repoidRemote(t, s, "remote")
}

// repoidRemote creates the empty bare repository srv/NAME.git, reached by
// its path.
func repoidRemote(t *testing.T, s *sandbox, name string) *syncRemote {
	t.Helper()
	bare := testrepo.NewBareRemote(t, s.tr, name)
	return &syncRemote{bare: bare, url: bare}
}

// syncFirstDevice makes a repository whose origin is r, with main pushed
// to it by plain git, so the remote has a default branch.
func syncFirstDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	return newSyncDevice(s, name, testrepo.NewOriginRepo(t, s.tr, name, r.url))
}

// syncCloneDevice clones r as a new device.
func syncCloneDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	return newSyncDevice(s, name, testrepo.Clone(t, s.tr, name, r.url))
}

// syncWantHashes fails unless got equals want (as sets).
func syncWantHashes(t *testing.T, what string, got map[string]bool, want ...string) {
	t.Helper()
	testrepo.WantHashes(t, what, got, want...)
}

// syncHashesOf is the hashes of cps, in order.
func syncHashesOf(cps ...record) []string {
	return testrepo.HashesOf(cps...)
}

// chainLine is one line of a device chain.
type chainLine = testrepo.ChainLine

func parseChain(t *testing.T, data string) []chainLine {
	t.Helper()
	return testrepo.ParseChain(t, data)
}

// syncPulled matches the per-device line a pull prints for verified news.
func syncPulled(device string, n int) string {
	return testrepo.Pulled(device, n)
}

// syncWantLine fails unless out holds a line equal to want.
func syncWantLine(t *testing.T, what, out, want string) {
	t.Helper()
	testrepo.WantLine(t, what, out, want)
}
