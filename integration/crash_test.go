package integration

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// Crash safety: git-ctx is killed with SIGKILL at seeded random moments of
// an operation (the delay drawn from the measured duration of one
// uninterrupted run). After every kill the repository must be sound:
// `git fsck --strict` finds no error, `git ctx verify` passes, no lock file
// blocks the next run, the cache answers exactly what a rebuilt cache
// answers, and running the operation again just works and ends in the same
// state as an uninterrupted run.

const (
	crashSeed     = 20261130
	crashTrials   = 50 // per operation
	crashParallel = 3
	// crashHelperEnv makes the test binary a helper process that writes
	// many signed checkpoints in process (see TestCrashHelperBuild).
	crashHelperEnv = "GIT_CTX_CRASH_BUILD"
	crashRemoteN   = 60 // checkpoints per helper device on the pulled remote
)

// crashOps is the table of operations on the memory branch; session
// restore, whose state lives in HOME and a store rather than in the
// branch, has its own test (TestCrashSessionRestore).
var crashOps = []struct {
	name string
	// dir is the pristine checkout the operation runs in (a copy per trial).
	dir func(f *crashFixture) string
	// env is the device it runs as.
	env  func(f *crashFixture) []string
	args func(trial int) []string
	// done checks the state after a successful (re-)run against the
	// reference state of an uninterrupted run.
	done func(t *testing.T, f *crashFixture, dir string, env []string, ref crashState)
}{
	{
		name: "append",
		dir:  func(f *crashFixture) string { return f.writer },
		env:  func(f *crashFixture) []string { return f.s.env("W") },
		args: func(trial int) []string { return []string{"checkpoint", "-m", "crash trial " + strconv.Itoa(trial)} },
		done: func(t *testing.T, f *crashFixture, dir string, env []string, ref crashState) {
			st := crashRead(t, dir, env)
			// Every record of the reference but the reference's own new one,
			// plus this trial's one or two (a kill after the commit leaves
			// one, the re-run adds another).
			if n := len(st.hashes) - (len(ref.hashes) - 1); n < 1 || n > 2 {
				t.Errorf("append: %d checkpoints after the re-run, reference %d", len(st.hashes), len(ref.hashes))
			}
		},
	},
	{
		name: "pull",
		dir:  func(f *crashFixture) string { return f.puller },
		env:  func(f *crashFixture) []string { return f.s.env("P") },
		args: func(int) []string { return []string{"pull"} },
		done: func(t *testing.T, f *crashFixture, dir string, env []string, ref crashState) {
			if st := crashRead(t, dir, env); !equalSets(st.hashes, ref.hashes) {
				t.Errorf("pull: %d checkpoints after the re-run, an uninterrupted pull gives %d", len(st.hashes), len(ref.hashes))
			}
		},
	},
	{
		name: "reindex",
		dir:  func(f *crashFixture) string { return f.writer },
		env:  func(f *crashFixture) []string { return f.s.env("W") },
		args: func(int) []string { return []string{"reindex"} },
		done: func(t *testing.T, f *crashFixture, dir string, env []string, ref crashState) {
			if st := crashRead(t, dir, env); st.log != ref.log {
				t.Errorf("reindex: log --json after the re-run differs from the uninterrupted run's")
			}
		},
	},
}

type crashFixture struct {
	s      *sandbox
	bare   string
	writer string // W: a branch of 3 + 3×crashRemoteN checkpoints, pushed to bare
	puller string // P: its own 3 checkpoints, has not pulled W's yet
}

// crashState is what the cache answers.
type crashState struct {
	log    string // git ctx log --json
	hashes map[string]bool
}

func crashRead(t *testing.T, dir string, env []string) crashState {
	t.Helper()
	st := crashState{log: mustCtx(t, dir, env, "log", "--json", "-n", "100000"), hashes: map[string]bool{}}
	var list []record
	if err := json.Unmarshal([]byte(st.log), &list); err != nil {
		t.Fatalf("decode log --json: %v", err)
	}
	for _, r := range list {
		st.hashes[r.Hash] = true
	}
	return st
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func newCrashFixture(t *testing.T) *crashFixture {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	f := &crashFixture{s: s, bare: rem.bare}
	w := syncFirstDevice(t, s, rem, "W")
	w.must(t, "init")
	for i := 1; i <= 3; i++ {
		w.cp(t, "w"+strconv.Itoa(i)+": before the helper")
	}
	// The helper writes 3 devices × crashRemoteN signed checkpoints in
	// process, with W's isolated environment.
	helper := exec.Command(os.Args[0], "-test.run=^TestCrashHelperBuild$", "-test.count=1")
	helper.Dir = w.dir
	helper.Env = append(append([]string{}, w.env...), crashHelperEnv+"="+w.dir)
	if out, err := helper.CombinedOutput(); err != nil || !strings.Contains(string(out), "crash helper: wrote") {
		t.Fatalf("crash helper: %v\n%s", err, out)
	}
	w.git(t, "config", "gc.auto", "0")
	w.must(t, "push")
	w.must(t, "reindex")
	f.writer = w.dir

	p := syncCloneDevice(t, s, rem, "P")
	p.git(t, "config", "gc.auto", "0")
	p.must(t, "init")
	for i := 1; i <= 3; i++ {
		p.cp(t, "p"+strconv.Itoa(i)+": the puller's own")
	}
	f.puller = p.dir
	for _, d := range []string{f.writer, f.puller} {
		gitOut(t, d, s.env("setup"), "repack", "-adq")
	}
	return f
}

// TestCrashHelperBuild is not a test: run by newCrashFixture as a helper
// process (with a sandbox's environment), it appends crashRemoteN
// checkpoints for each of three devices to the repository named by
// $GIT_CTX_CRASH_BUILD through gitstore's real write path.
func TestCrashHelperBuild(t *testing.T) {
	dir := os.Getenv(crashHelperEnv)
	if dir == "" {
		t.Skip("helper process of the crash tests")
	}
	ctx := context.Background()
	r, err := gitrepo.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(r)
	if err != nil {
		t.Fatal(err)
	}
	repoID, err := r.RepoID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for d := 0; d < 3; d++ {
		seed := make([]byte, 32)
		seed[0], seed[1] = byte(d), 0xc7
		dev := gitstore.Device{ID: fmt.Sprintf("crash-dev-%d", d), Key: ed25519.NewKeyFromSeed(seed)}
		drafts := make([]gitstore.Draft, crashRemoteN)
		for i := range drafts {
			drafts[i] = gitstore.Draft{AuthorID: "crash@example.org", SessionID: "s" + strconv.Itoa(i/10), Turn: i%10 + 1,
				ActiveModel: "m", Summary: fmt.Sprintf("device %d record %d: a summary of some length to index", d, i),
				FilesTouched: []string{fmt.Sprintf("pkg/f%d.go", i)}, ToolsUsed: []string{"Edit"}}
		}
		if _, err := st.Append(ctx, gitstore.AppendRequest{RepoID: repoID, Device: dev, Drafts: drafts}); err != nil {
			t.Fatal(err)
		}
		n += len(drafts)
	}
	fmt.Printf("crash helper: wrote %d checkpoints\n", n)
}

// crashRun starts git-ctx ARGS in its own process group and, after delay,
// kills the group with SIGKILL. It reports whether the process was still
// running when the kill came.
func crashRun(dir string, env []string, delay time.Duration, args ...string) (killed bool, res result, err error) {
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return false, res, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(delay):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
		killed = true
	}
	res = result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true, res, nil
		}
		res.code = ee.ExitCode()
		killed = false
	} else if werr != nil {
		return killed, res, werr
	} else {
		killed = false
	}
	// The process finished first; its children are gone with it.
	return killed, res, nil
}

// crashLocks lists lock files under the git dir, but for the two flock files
// git-ctx keeps on purpose (they hold no state: the kernel drops the lock
// with the process).
func crashLocks(gitDir string) []string {
	var out []string
	filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			rel, _ := filepath.Rel(gitDir, p)
			if rel != filepath.Join("ctx", "memory.lock") && rel != filepath.Join("ctx", "cache.lock") {
				out = append(out, rel)
			}
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestCrashSafety(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := newCrashFixture(t)
	t.Logf("crash fixture built in %v", time.Since(start).Round(time.Millisecond))
	for oi, op := range crashOps {
		t.Run(op.name, func(t *testing.T) {
			opStart := time.Now()
			env := op.env(f)
			// The reference: uninterrupted runs, timed.
			var ds []time.Duration
			var ref crashState
			for i := 0; i < 3; i++ {
				dir := filepath.Join(t.TempDir(), "ref")
				syncCopy(t, op.dir(f), dir)
				t0 := time.Now()
				if r := execute(t, dir, env, nil, append([]string{"git-ctx"}, op.args(-1)...)...); r.code != 0 {
					t.Fatalf("uninterrupted %s: %s", op.name, r)
				}
				ds = append(ds, time.Since(t0))
				ref = crashRead(t, dir, env)
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			median := ds[1]
			rng := rand.New(rand.NewPCG(crashSeed, uint64(oi)))
			delays := make([]time.Duration, crashTrials)
			for i := range delays {
				delays[i] = time.Duration(rng.Float64() * 1.2 * float64(median))
			}

			var mu sync.Mutex
			var mid, after, stale int
			var staleSeen []string
			sem := make(chan struct{}, crashParallel)
			var wg sync.WaitGroup
			for trial := 0; trial < crashTrials; trial++ {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					dir := filepath.Join(f.s.root, "crash-"+op.name+"-"+strconv.Itoa(trial))
					defer os.RemoveAll(dir)
					if out, err := exec.Command("cp", "-a", op.dir(f), dir).CombinedOutput(); err != nil {
						t.Errorf("trial %d: copy: %v\n%s", trial, err, out)
						return
					}
					killed, res, err := crashRun(dir, env, delays[trial], op.args(trial)...)
					if err != nil {
						t.Errorf("trial %d: %v", trial, err)
						return
					}
					if !killed && res.code != 0 {
						t.Errorf("trial %d: %s exited %d without being killed:\n%s", trial, op.name, res.code, res)
						return
					}
					locks := crashLocks(filepath.Join(dir, ".git"))
					mu.Lock()
					if killed {
						mid++
					} else {
						after++
					}
					if len(locks) > 0 {
						stale++
						staleSeen = append(staleSeen, locks...)
					}
					mu.Unlock()
					if err := crashCheck(dir, env, op.args(trial)); err != nil {
						t.Errorf("trial %d (killed after %v, mid-operation %v, locks left %v): %v", trial, delays[trial].Round(time.Millisecond), killed, locks, err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			// The re-run state of the last trial is compared with the
			// reference by op.done, on one more trial run in the test
			// goroutine (t.Fatal is not allowed in the workers).
			dir := filepath.Join(t.TempDir(), "last")
			syncCopy(t, op.dir(f), dir)
			if _, _, err := crashRun(dir, env, median/2, op.args(crashTrials)...); err != nil {
				t.Fatal(err)
			}
			if err := crashCheck(dir, env, op.args(crashTrials)); err != nil {
				t.Fatal(err)
			}
			if r := gitCtx(t, dir, env, "verify"); r.code != 0 {
				t.Fatalf("verify after the re-run: %s", r)
			}
			op.done(t, f, dir, env, ref)
			t.Logf("%s: %d trials in %v (uninterrupted run: median %v); killed mid-operation %d, finished before the kill %d; stale lock files left %d %v",
				op.name, crashTrials, time.Since(opStart).Round(time.Millisecond), median.Round(time.Millisecond), mid, after, stale, staleSeen)
			if mid < crashTrials/3 {
				t.Errorf("%s: only %d of %d kills landed mid-operation", op.name, mid, crashTrials)
			}
		})
	}
	t.Logf("crash safety: %v in all", time.Since(start).Round(time.Millisecond))
}

// crashCheck is everything that must hold after a kill: fsck clean, verify
// passes, the cache equals a rebuilt one, and the operation runs again.
// It never calls t (it runs in worker goroutines).
func crashCheck(dir string, env []string, args []string) error {
	run := func(argv ...string) (result, error) { return syncExec(dir, env, argv...) }
	r, err := run("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	if err != nil {
		return err
	}
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "error") {
		return fmt.Errorf("git fsck --strict: %s", r)
	}
	if r, err = run("git", "ctx", "verify"); err != nil {
		return err
	} else if r.code != 0 {
		return fmt.Errorf("git ctx verify after the kill: %s", r)
	}
	before, err := run("git", "ctx", "log", "--json", "-n", "100000")
	if err != nil || before.code != 0 {
		return fmt.Errorf("git ctx log after the kill: %v %s", err, before)
	}
	if r, err = run("git", "ctx", "reindex"); err != nil || r.code != 0 {
		return fmt.Errorf("git ctx reindex after the kill: %v %s", err, r)
	}
	after, err := run("git", "ctx", "log", "--json", "-n", "100000")
	if err != nil || after.code != 0 {
		return fmt.Errorf("git ctx log after reindex: %v %s", err, after)
	}
	if before.stdout != after.stdout {
		return fmt.Errorf("the cache after the kill differs from a rebuilt one (%d vs %d bytes of log --json)", len(before.stdout), len(after.stdout))
	}
	t0 := time.Now()
	if r, err = run(append([]string{"git", "ctx"}, args...)...); err != nil || r.code != 0 {
		return fmt.Errorf("re-running %v: %v %s", args, err, r)
	}
	if d := time.Since(t0); d > 30*time.Second {
		return fmt.Errorf("re-running %v took %v", args, d)
	}
	return nil
}
