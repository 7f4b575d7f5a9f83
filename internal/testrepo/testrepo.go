// Package testrepo exists for tests only: it is the part of the CLI test
// harness that does not depend on how git-ctx itself is run, shared by the
// in-process tests of cmd/git-ctx and the end-to-end tests in integration
// (Go cannot share _test.go code between packages). It makes isolated
// sandboxes (HOME, git config, one GIT_CTX_HOME per simulated device), runs
// the real git, makes repositories and bare remotes, reads and rewrites the
// memory branch with plumbing, and decodes what `git ctx … --json` prints.
// How git-ctx runs is the caller's Exec (the binary in one package, run in
// process in the other); CLI and Device are the command helpers over it,
// one implementation for both packages.
package testrepo

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// CmdTimeout bounds every git command run through Git, so a hang fails
// the test instead of blocking the whole package.
const CmdTimeout = 2 * time.Minute

// origPATH is the PATH the test process started with (for git).
var origPATH = os.Getenv("PATH")

// ---- sandbox: an isolated HOME, git config and per-device GIT_CTX_HOMEs ----

// Sandbox is one test's root directory and the environment commands get.
type Sandbox struct {
	Root  string
	Bin   string   // put first on PATH when not empty
	Extra []string // KEY=VALUE entries appended to every Env
}

// NewSandbox makes the test's root directory with an empty HOME, XDG
// directories and a git config with a fixed identity and branch name.
// bin is put first on PATH; extra entries end every environment.
func NewSandbox(t testing.TB, bin string, extra ...string) *Sandbox {
	t.Helper()
	root := t.TempDir()
	// Runs before the directory is removed (cleanups run last first).
	t.Cleanup(func() { waitBackground(t, root) })
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
	return &Sandbox{Root: root, Bin: bin, Extra: extra}
}

// CtxHome is the GIT_CTX_HOME of the simulated device name (created by
// git-ctx itself on first use, with the modes it wants).
func (s *Sandbox) CtxHome(device string) string {
	return filepath.Join(s.Root, "ctxhome-"+device)
}

// Env is the complete environment of a command run as device name.
func (s *Sandbox) Env(device string) []string {
	path := origPATH
	if s.Bin != "" {
		path = s.Bin + string(os.PathListSeparator) + origPATH
	}
	env := []string{
		"HOME=" + filepath.Join(s.Root, "home"),
		"GIT_CTX_HOME=" + s.CtxHome(device),
		"GIT_CONFIG_GLOBAL=" + filepath.Join(s.Root, "gitconfig"),
		"GIT_CONFIG_NOSYSTEM=1",
		"XDG_CONFIG_HOME=" + filepath.Join(s.Root, "xdg"),
		"XDG_DATA_HOME=" + filepath.Join(s.Root, "xdgdata"),
		"PATH=" + path,
		"LC_ALL=C",
		"TZ=UTC",
		"GIT_EDITOR=true",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CEILING_DIRECTORIES=" + s.Root,
	}
	return append(env, s.Extra...)
}

// Dir makes a directory under the sandbox.
func (s *Sandbox) Dir(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(s.Root, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// WithEnv returns env with extra KEY=VALUE entries replacing or adding.
func WithEnv(env []string, extra ...string) []string {
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

// Result is how a command ended.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Run runs prog with args in dir with exactly env, bounded by limit, and
// never calls t (it is safe in goroutines); stdin nil is /dev/null. A
// non-zero exit is a Result; a command that could not run or outlived
// limit is an error that quotes its output.
func Run(limit time.Duration, dir string, env []string, stdin []byte, prog string, args ...string) (Result, error) {
	c, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(c, prog, args...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res, err := Finished(&stdout, &stderr, cmd.Run(), c.Err())
	if err != nil {
		return res, fmt.Errorf("run %q in %s: %w", append([]string{prog}, args...), dir, err)
	}
	return res, nil
}

// Finished makes the Result of a finished command from its output and the
// error of Run or Wait: an exit status is the result's code; any other
// failure, or one while timedOut (the context's error) is set, is an error
// that quotes the output.
func Finished(stdout, stderr *bytes.Buffer, err, timedOut error) (Result, error) {
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && timedOut == nil:
		res.Code = ee.ExitCode()
	default:
		return res, fmt.Errorf("%v (ctx %v)\n%s", err, timedOut, res)
	}
	return res, nil
}

// Git runs the real git with args in dir; only a git that could not run
// or hung fails the test.
func Git(t testing.TB, dir string, env []string, stdin []byte, args ...string) Result {
	t.Helper()
	res, err := Run(CmdTimeout, dir, env, stdin, "git", args...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// MustGit runs git, fails the test unless it exits 0, and returns stdout.
func MustGit(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	r := Git(t, dir, env, nil, args...)
	if r.Code != 0 {
		t.Fatalf("%q in %s: %s", append([]string{"git"}, args...), dir, r)
	}
	return r.Stdout
}

// GitOut runs git and returns its trimmed stdout; it must succeed.
func GitOut(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(MustGit(t, dir, env, args...))
}

// NULList splits NUL-terminated git output (-z) into its non-empty
// entries, sorted.
func NULList(out string) []string {
	var list []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	sort.Strings(list)
	return list
}

// ---- repositories and files ----

// NewRepo makes a non-bare repository under the sandbox with one commit on
// main.
func NewRepo(t testing.TB, s *Sandbox, name string) string {
	t.Helper()
	dir := filepath.Join(s.Root, name)
	env := s.Env("setup")
	MustGit(t, s.Root, env, "init", "-q", "-b", "main", dir)
	WriteFile(t, filepath.Join(dir, "README.md"), "hello\n")
	WriteFile(t, filepath.Join(dir, "a.go"), "package a\n")
	MustGit(t, dir, env, "add", "-A")
	MustGit(t, dir, env, "commit", "-q", "-m", "initial commit")
	return dir
}

// NewBareRemote creates the empty bare repository srv/NAME.git in the
// sandbox and returns its path.
func NewBareRemote(t testing.TB, s *Sandbox, name string) string {
	t.Helper()
	bare := filepath.Join(s.Dir(t, "srv"), name+".git")
	MustGit(t, s.Root, s.Env("setup"), "init", "-q", "--bare", "-b", "main", bare)
	return bare
}

// CommitFiles writes files (path → content) and commits them with msg; it
// returns the new commit.
func CommitFiles(t testing.TB, dir string, env []string, msg string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		WriteFile(t, filepath.Join(dir, p), c)
		MustGit(t, dir, env, "add", "--", p)
	}
	MustGit(t, dir, env, "commit", "-q", "-m", msg)
	return GitOut(t, dir, env, "rev-parse", "HEAD")
}

// WriteFile writes content to path, making its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the bytes of path; it must exist.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SHA256Hex is the lowercase hex SHA-256 of s (how repo ids are made).
func SHA256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// WantFsckClean fails unless git fsck --strict finds nothing but dangling
// objects.
func WantFsckClean(t testing.TB, dir string, env []string) {
	t.Helper()
	r := Git(t, dir, env, nil, "fsck", "--strict", "--no-progress")
	if r.Code != 0 {
		t.Fatalf("git fsck --strict: %s", r)
	}
	for _, l := range strings.Split(r.Stdout+r.Stderr, "\n") {
		if l != "" && !strings.HasPrefix(l, "dangling ") {
			t.Fatalf("git fsck --strict reports %q", l)
		}
	}
}

// NewPublicKeyPEM returns a fresh, valid ed25519 public key in the PEM form
// device keys use.
func NewPublicKeyPEM(t testing.TB) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "ED25519 PUBLIC KEY", Bytes: pub}))
}

// WantOneLine fails unless s is exactly one non-empty line ending in "\n".
func WantOneLine(t testing.TB, what, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 || strings.TrimSpace(s) == "" {
		t.Fatalf("%s: want one line on stderr, got %q", what, s)
	}
}

// DeviceID is the device id git-ctx created in the GIT_CTX_HOME of the
// sandbox's device name; it must exist.
func (s *Sandbox) DeviceID(t testing.TB, device string) string {
	t.Helper()
	id := strings.TrimSpace(string(ReadFile(t, filepath.Join(s.CtxHome(device), "device-id"))))
	if id == "" {
		t.Fatalf("device %s has no device id", device)
	}
	return id
}

// NewOriginRepo makes a repository like NewRepo whose origin is url, with
// main pushed to it by plain git so the remote has a default branch, as
// the sandbox's device name.
func NewOriginRepo(t testing.TB, s *Sandbox, name, url string) string {
	t.Helper()
	dir := NewRepo(t, s, name)
	env := s.Env(name)
	MustGit(t, dir, env, "remote", "add", "origin", url)
	MustGit(t, dir, env, "push", "-q", "origin", "main")
	return dir
}

// Clone clones url into the sandbox directory name as that device.
func Clone(t testing.TB, s *Sandbox, name, url string) string {
	t.Helper()
	dir := filepath.Join(s.Root, name)
	MustGit(t, s.Root, s.Env(name), "clone", "-q", url, dir)
	return dir
}
