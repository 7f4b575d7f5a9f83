package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// DefaultPackEvery is how many writes to the memory branch (appends,
// snapshots, publishes) git-ctx lets pass before it packs the objects they
// wrote; git config ctx.packEvery changes it and 0 turns packing off.
//
// Each write leaves about ten small loose objects. Left alone, ten
// thousand appends would leave a hundred thousand loose files, slow every
// git command that scans them and make git's own automatic gc start in the
// middle of some later commit. Packing them in batches keeps the loose
// count below a few thousand.
//
// The packing never runs inside the write that triggers it: the write
// starts a detached `git repack` (its own session, stdio away from the
// caller's, lowest CPU and I/O priority where nice/ionice exist) and
// returns. The repack holds <git-common-dir>/ctx/repack.lock, a lock of its
// own: writes never wait for it, and at most one repack runs at a time.
const DefaultPackEvery = 256

// The files of the background repack, in <git-common-dir>/ctx.
const (
	// packStateFile holds "<writes since the last repack started> <failed
	// repacks in a row> <started>", started being 1 while the outcome of
	// the last repack started has not been looked at yet.
	packStateFile = "pack-state"
	// repackLockFile is flocked by the running repack (inherited by it
	// from the write that started it, released when its last process
	// exits, even on kill -9).
	repackLockFile = "repack.lock"
	// RepackLogFile is the repack's stderr: empty after a repack that
	// succeeded, git's message after one that failed (doctor shows it).
	RepackLogFile = "repack.log"
)

// maxRepackBackoff bounds the doubling of the wait after failed repacks:
// after n failures in a row the next attempt waits packEvery<<n writes.
const maxRepackBackoff = 10

// packEvery reads ctx.packEvery (DefaultPackEvery when unset or invalid).
func (s *Store) packEvery() int {
	v := strings.TrimSpace(s.Repo.Config("ctx.packEvery"))
	if v == "" {
		return DefaultPackEvery
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return DefaultPackEvery
	}
	return n
}

// packState is pack-state's content.
type packState struct {
	count    int  // writes since the last repack was started
	failures int  // repacks in a row that failed
	started  bool // a repack was started and its outcome not read yet
}

func readPackState(path string) packState {
	var st packState
	b, err := os.ReadFile(path)
	if err != nil {
		return st
	}
	f := strings.Fields(string(b))
	if len(f) >= 1 {
		st.count, _ = strconv.Atoi(f[0])
	}
	// Field 2 held a commit id before repacks ran in the background.
	if len(f) >= 4 {
		st.failures, _ = strconv.Atoi(f[2])
		st.started = f[3] == "1"
	}
	if st.count < 0 || st.failures < 0 {
		st = packState{}
	}
	return st
}

func (st packState) threshold(every int) int {
	return every << min(st.failures, maxRepackBackoff)
}

// afterWrite counts one write and, when a batch is complete, starts a
// background repack (startRepack). It runs under the git-ctx lock, takes
// microseconds (one small file read and written; at a batch's end one
// flock and a fork) and never fails the write that called it: packing is
// housekeeping.
func (s *Store) afterWrite(ctx context.Context) {
	every := s.packEvery()
	if every == 0 {
		return
	}
	dir := filepath.Join(s.Repo.CommonDir, "ctx")
	path := filepath.Join(dir, packStateFile)
	st := readPackState(path)
	st.count++
	if st.count >= st.threshold(every) {
		st = s.tryRepack(ctx, dir, st, every)
	}
	started := "0"
	if st.started {
		started = "1"
	}
	// Best effort, not synced: a lost count only delays the next pack.
	_ = atomicfile.WriteFile(path, []byte(fmt.Sprintf("%d - %d %s\n", st.count, st.failures, started)),
		atomicfile.Options{Perm: 0o644, Replace: true, NoSync: true})
}

// tryRepack starts a repack unless one is running (then the next write
// tries again). The outcome of the previous repack is read first: a failed
// one (its log not empty) doubles the wait before the next attempt, so a
// repack that keeps failing is not restarted after every batch; doctor
// shows its message.
func (s *Store) tryRepack(ctx context.Context, dir string, st packState, every int) packState {
	lock, err := tryRepackLock(dir)
	if err != nil || lock == nil {
		return st // running (or no lock file possible): retry next write
	}
	defer lock.Close()
	if st.started {
		st.started = false
		if b, err := os.ReadFile(filepath.Join(dir, RepackLogFile)); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			st.failures++
		} else {
			st.failures = 0
		}
		if st.count < st.threshold(every) {
			return st
		}
	}
	if err := s.startRepack(ctx, dir, lock); err != nil {
		_ = os.WriteFile(filepath.Join(dir, RepackLogFile), []byte("git-ctx: "+err.Error()+"\n"), 0o644)
		st.failures++
		st.count = 0
		return st
	}
	st.count, st.started = 0, true
	return st
}

// tryRepackLock takes the repack lock without waiting: nil, nil when a
// repack holds it.
func tryRepackLock(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, repackLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open repack lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// repackStarted, when set (by tests), is told the process id of every
// repack started.
var repackStarted func(pid int)

// startRepack starts `git repack` detached, handing it the repack lock:
// the lock's open file is the child's fd 3, so the lock stays held until
// the repack and every process it starts have exited, and is released by
// the kernel even if they are killed.
//
// The child inherits nothing else of the caller: Go opens every file
// close-on-exec (the git-ctx branch lock included), stdin and stdout are
// /dev/null and stderr is ctx/repack.log, so a hook's or a script's pipes
// are never held open by the repack. Setsid puts it in a session of its
// own: a terminal's Ctrl-C or the hook's process group ending does not
// reach it.
//
// Why a concurrent write loses nothing: `git repack -d --geometric=2`
// (without -a, -A, --cruft or any prune) packs every loose object it finds
// regardless of reachability, rolls small packs whole into the new pack
// (again regardless of reachability), and with -d deletes only the packs
// it rolled up and, through prune-packed, the loose objects now in a pack.
// An object a writer adds while the repack runs is either in the new pack
// or still loose; nothing unreachable-yet (an object whose ref update has
// not happened yet) is ever dropped, because nothing here drops
// unreachable objects. (`git gc --prune=now`, or `repack -a -d` on packs
// holding such objects, would not be safe; git-ctx never runs them.) A
// repack killed half way leaves at most a temporary pack that git ignores:
// the old packs and loose objects are removed only after the new pack and
// its index are complete.
func (s *Store) startRepack(ctx context.Context, dir string, lock *os.File) error {
	// With a git older than 2.32 (no --geometric), `repack -d` packs the
	// loose objects into one more pack and removes them.
	args := []string{"--git-dir=" + s.Repo.CommonDir, "repack", "-d", "-q"}
	if gitHasGeometric(ctx) {
		args = append(args, "--geometric=2")
	}
	argv := lowPriority(append([]string{"git"}, args...))
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("start background repack: %w", err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("start background repack: %w", err)
	}
	defer null.Close()
	logf, err := os.OpenFile(filepath.Join(dir, RepackLogFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("start background repack: %w", err)
	}
	defer logf.Close()
	cmd := &exec.Cmd{
		Path:        path,
		Args:        argv,
		Dir:         s.Repo.CommonDir,
		Env:         gitexec.Environ(false),
		Stdin:       null,
		Stdout:      null,
		Stderr:      logf,
		ExtraFiles:  []*os.File{lock},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start background repack: %w", err)
	}
	lowerSessionPriority(cmd.Process.Pid)
	if repackStarted != nil {
		repackStarted(cmd.Process.Pid)
	}
	// A long-lived caller (a benchmark, a test) reaps it; a command that
	// exits first leaves it to init.
	go func() { _ = cmd.Wait() }()
	return nil
}

// lowerSessionPriority gives the session of process pid (the repack's,
// made by Setsid) the lowest CPU share, where the kernel schedules by
// session ("autogroups", Linux's sched_autogroup_enabled): there a nice
// value only orders processes within their own session, so the repack's
// `nice -n 19` left it an equal share beside the user's session, and the
// commits made while it ran were the slowest (in 400 hooked commits at
// 100k checkpoints the 12 slowest all ran beside a repack). Best effort:
// without autogroups, or where the kernel refuses (unprivileged, it takes
// one such change per 100 ms across the system), nothing changes.
func lowerSessionPriority(pid int) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/autogroup", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString("19")
	_ = f.Close()
}

// lowPriority prefixes argv with `ionice -c2 -n7 -t` and `nice -n19` where
// those programs exist: the repack yields the CPU and the disk to the
// user's own work (-t: where the I/O class cannot be set, run anyway).
func lowPriority(argv []string) []string {
	if _, err := exec.LookPath("nice"); err == nil {
		argv = append([]string{"nice", "-n", "19"}, argv...)
	}
	if _, err := exec.LookPath("ionice"); err == nil {
		argv = append([]string{"ionice", "-c", "2", "-n", "7", "-t"}, argv...)
	}
	return argv
}

// gitHasGeometric reports whether git knows `repack --geometric` (2.32+).
func gitHasGeometric(ctx context.Context) bool {
	out, err := gitexec.Git(ctx, "", "version")
	if err != nil {
		return false
	}
	f := strings.Fields(string(out)) // git version 2.39.5
	if len(f) < 3 {
		return false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major > 2 || major == 2 && minor >= 32)
}

// RepackFailure returns the message of the last background repack of the
// repository whose common dir is commonDir when it failed ("" when it
// succeeded, is running or never ran): the first line of ctx/repack.log.
func RepackFailure(commonDir string) string {
	f, err := os.Open(filepath.Join(commonDir, "ctx", RepackLogFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), "\n")
	return line
}
