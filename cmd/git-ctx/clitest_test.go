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
// The helpers are internal/testrepo's, the same ones the integration
// harness runs with the binary: inproc is its testrepo.CLI (Ctx, MustCtx,
// Checkpoint, Status, Verify, devices, …) over execute, which runs
// git-ctx in process (the call itself goes through runIn,
// exitcodes_test.go); sandboxes, repositories, remotes and the memory
// branch are testrepo's functions. This file adds only what running in
// process needs.

import (
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

// inproc is the shared CLI test helpers (testrepo.CLI) with git-ctx run
// in process (execute).
var inproc = testrepo.CLI{Exec: execute}

// newSandbox makes the test's sandbox (testrepo.NewSandbox). It also puts
// on PATH a "git-ctx" that fails when run: commands that look git-ctx up
// (doctor, hooks install) find it as they would after an install, and
// anything that tried to run it as a process would fail the test instead
// of silently running some other build.
func newSandbox(t *testing.T) *testrepo.Sandbox {
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
	return tr
}

// newRepoAs is a sandbox and its repository "repo" (not initialised),
// with the environment of the device name.
func newRepoAs(t *testing.T, device string) (s *testrepo.Sandbox, repo string, env []string) {
	t.Helper()
	s = newSandbox(t)
	return s, testrepo.NewRepo(t, s, "repo"), s.Env(device)
}

// newInitRepo is where most command tests start: newRepoAs "dev", after
// `git ctx init`.
func newInitRepo(t *testing.T) (s *testrepo.Sandbox, repo string, env []string) {
	t.Helper()
	s, repo, env = newRepoAs(t, "dev")
	inproc.MustCtx(t, repo, env, "init")
	return s, repo, env
}

// newTeam is where the sync tests start: a sandbox, the bare remote
// srv/remote.git and device "A", whose origin it is, initialised.
func newTeam(t *testing.T) (s *testrepo.Sandbox, remote string, a *testrepo.Device) {
	t.Helper()
	s = newSandbox(t)
	remote = testrepo.NewBareRemote(t, s, "remote")
	a = inproc.OriginDevice(t, s, "A", remote)
	a.Must(t, "init")
	return s, remote, a
}

// ---- running commands ----

// execute runs argv in dir with exactly env. `git ctx ARGS` (also with
// leading `git -c KEY=VALUE` options, which git hands to its subcommands
// as GIT_CONFIG_PARAMETERS) and `git-ctx ARGS` run the CLI in process;
// everything else runs as a process ("git" is the real git).
func execute(t testing.TB, dir string, env []string, stdin []byte, argv ...string) testrepo.Result {
	t.Helper()
	if args, env2, ok := cliArgs(env, argv); ok {
		return cliInProcess(t, dir, env2, stdin, args)
	}
	r, err := testrepo.Run(cliCmdTimeout, dir, env, stdin, argv[0], argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return r
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
		env = testrepo.WithEnv(env, "GIT_CONFIG_PARAMETERS="+strings.Join(params, " "))
	}
	return argv[i+1:], env, true
}

// cliInProcess calls run (through runIn) in dir with exactly env as the
// process environment, then restores both.
func cliInProcess(t testing.TB, dir string, env []string, stdin []byte, args []string) testrepo.Result {
	t.Helper()
	var r testrepo.Result
	inProcessEnv(t, dir, env, func() { r.Code, r.Stdout, r.Stderr = runIn(string(stdin), args...) })
	return r
}

// inProcessEnv calls fn in dir with exactly env as the process
// environment, then restores both.
func inProcessEnv(t testing.TB, dir string, env []string, fn func()) {
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
		t.Fatalf("chdir %s: %v", dir, err)
	}
	fn()
}

// wantGolden compares got with the golden file at path (what names the
// output in the message); UPDATE_GOLDEN=1 rewrites the file first.
func wantGolden(t *testing.T, path, got, what string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (UPDATE_GOLDEN=1 rewrites it):\n%s", what, path, got)
	}
}
