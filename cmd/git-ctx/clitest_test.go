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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// cliCmdTimeout bounds every git command a test runs (run itself is bounded
// by go test's -timeout, which then shows where it hung).
const cliCmdTimeout = 2 * time.Minute

// ---- sandbox: an isolated HOME, git config and per-device GIT_CTX_HOMEs ----

type sandbox struct {
	root string
	bin  string // on PATH: a git-ctx that refuses to run (see newSandbox)
}

// newSandbox makes the test's root directory. It also puts on PATH a
// "git-ctx" that fails when run: commands that look git-ctx up (doctor,
// hooks install) find it as they would after an install, and anything that
// tried to run it as a process would fail the test instead of silently
// running some other build.
func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	// Never reached by a call (each sets its whole environment), but makes
	// t.Parallel panic and keeps a stray direct call away from the real home.
	t.Setenv("GIT_CTX_HOME", filepath.Join(root, "ctxhome-unset"))
	for _, d := range []string{"home", "xdg", "xdgdata", "bin"} {
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
	stub := "#!/bin/sh\necho 'git-ctx: the in-process tests run the CLI in process, not this stub' >&2\nexit 125\n"
	if err := os.WriteFile(filepath.Join(root, "bin", "git-ctx"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return &sandbox{root: root, bin: filepath.Join(root, "bin")}
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
		"PATH=" + s.bin + string(os.PathListSeparator) + cliOrigPATH,
		"LC_ALL=C",
		"TZ=UTC",
		"GIT_EDITOR=true",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CEILING_DIRECTORIES=" + s.root,
	}
}

// cliOrigPATH is the PATH the tests started with (for git).
var cliOrigPATH = os.Getenv("PATH")

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

// execute runs argv in dir with exactly env. `git ctx ARGS` (also with
// leading `git -c KEY=VALUE` options, which git hands to its subcommands
// as GIT_CONFIG_PARAMETERS) and `git-ctx ARGS` run the CLI in process;
// everything else runs as a process ("git" is the real git).
func execute(t *testing.T, dir string, env []string, stdin []byte, argv ...string) result {
	t.Helper()
	if args, env2, ok := cliArgs(env, argv); ok {
		return cliInProcess(t, dir, env2, stdin, args)
	}
	c, cancel := context.WithTimeout(context.Background(), cliCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(c, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && c.Err() == nil:
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run %q in %s: %v (ctx %v)\n%s", argv, dir, err, c.Err(), res)
	}
	return res
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

// wantFsckClean fails unless git fsck --strict finds nothing but dangling
// objects.
func wantFsckClean(t *testing.T, dir string, env []string) {
	t.Helper()
	r := execute(t, dir, env, nil, "git", "fsck", "--strict", "--no-progress")
	if r.code != 0 {
		t.Fatalf("git fsck --strict: %s", r)
	}
	for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
		if l != "" && !strings.HasPrefix(l, "dangling ") {
			t.Fatalf("git fsck --strict reports %q", l)
		}
	}
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

// cliCheckpoint runs `git ctx checkpoint --json ARGS` and returns the record.
func cliCheckpoint(t *testing.T, dir string, env []string, args ...string) record {
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
	out := gitOut(t, dir, env, "ls-tree", "-r", "--name-only", "-z", memRef)
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
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
	if _, _, code := runArgv(t, dir, env, "git", "update-ref", memRef, commit, old); code != 0 {
		t.Fatalf("update-ref %s %s %s failed", memRef, commit, old)
	}
	return commit
}

// plumbingCommit builds a commit whose parent is old and whose tree is
// old's tree with edits applied. It never touches any ref.
func plumbingCommit(t *testing.T, dir string, env []string, old, msg string, edits ...fileEdit) (string, bool) {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index") // git creates it itself
	ienv := withEnv(env, "GIT_INDEX_FILE="+idx)
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
func (d *syncDevice) id(t *testing.T) string {
	t.Helper()
	id := strings.TrimSpace(string(readFile(t, filepath.Join(d.s.ctxHome(d.name), "device-id"))))
	if id == "" {
		t.Fatalf("device %s has no device id", d.name)
	}
	return id
}

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
func (d *syncDevice) tip(t *testing.T) string {
	t.Helper()
	out, _, code := runArgv(t, d.dir, d.env, "git", "rev-parse", "--verify", "-q", memRef)
	if code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

// hashes is the set of checkpoint hashes `git ctx log --json` lists.
func (d *syncDevice) hashes(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range logJSON(t, d.dir, d.env) {
		if out[r.Hash] {
			t.Fatalf("device %s: log lists %s twice", d.name, r.Hash)
		}
		out[r.Hash] = true
	}
	return out
}

// wantVerifies fails unless `git ctx verify --json` passes on the device.
func (d *syncDevice) wantVerifies(t *testing.T) verifyReport {
	t.Helper()
	rep := verifyJSON(t, d.dir, d.env)
	if !rep.OK {
		t.Fatalf("device %s: verify fails:\n%s", d.name, rep.raw)
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
	bare := filepath.Join(s.dir(t, "srv"), name+".git")
	mustRun(t, s.root, s.env("setup"), "git", "init", "-q", "--bare", "-b", "main", bare)
	return &syncRemote{bare: bare, url: bare}
}

// syncFirstDevice makes a repository whose origin is r, with main pushed
// to it by plain git, so the remote has a default branch.
func syncFirstDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	d := newSyncDevice(s, name, newRepo(t, s, name))
	d.git(t, "remote", "add", "origin", r.url)
	d.git(t, "push", "-q", "origin", "main")
	return d
}

// syncCloneDevice clones r as a new device.
func syncCloneDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	dir := filepath.Join(s.root, name)
	mustRun(t, s.root, s.env(name), "git", "clone", "-q", r.url, dir)
	return newSyncDevice(s, name, dir)
}

// syncWantHashes fails unless got equals want (as sets).
func syncWantHashes(t *testing.T, what string, got map[string]bool, want ...string) {
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

// syncHashesOf is the hashes of cps, in order.
func syncHashesOf(cps ...record) []string {
	out := make([]string, len(cps))
	for i, c := range cps {
		out[i] = c.Hash
	}
	return out
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

// syncPulled matches the per-device line a pull prints for verified news.
func syncPulled(device string, n int) string {
	return fmt.Sprintf("%s: +%d checkpoints, verified", device, n)
}

// syncWantLine fails unless out holds a line equal to want.
func syncWantLine(t *testing.T, what, out, want string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l == want {
			return
		}
	}
	t.Fatalf("%s: no line %q in output:\n%s", what, want, out)
}
