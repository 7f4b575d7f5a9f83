package gitstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// looseCount counts the loose object files of the repository at dir.
func looseCount(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	root := filepath.Join(dir, ".git", "objects")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Name()) == 2 && e.IsDir() {
			files, _ := os.ReadDir(filepath.Join(root, e.Name()))
			n += len(files)
		}
	}
	return n
}

// TestPackEveryBoundsLooseObjects: with ctx.packEvery=8, forty single
// appends leave at most one batch of loose objects, the objects are in
// packs, git fsck is clean and the branch verifies; with 0 nothing is
// packed.
func TestPackEveryBoundsLooseObjects(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		every    string
		maxLoose int
		packs    bool
	}{
		{"8", 8 * 12, true},
		{"0", 1 << 30, false},
	} {
		t.Run("packEvery="+tc.every, func(t *testing.T) {
			_, dir := newStore(t)
			git(t, dir, "config", "ctx.packEvery", tc.every)
			git(t, dir, "config", "gc.auto", "0")
			s := reopen(t, dir)
			ctx := context.Background()
			d := device(t, "dev-a", 1)
			if _, err := s.Init(ctx, InitOptions{Layout: LayoutCtxV1, Device: d}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 40; i++ {
				if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "a")}); err != nil {
					t.Fatal(err)
				}
				waitRepack(t, dir) // the repack runs in the background
			}
			loose := looseCount(t, dir)
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
			if loose > tc.maxLoose || (len(packs) > 0) != tc.packs {
				t.Fatalf("%d loose objects, %d packs (want at most %d loose, packs %v)", loose, len(packs), tc.maxLoose, tc.packs)
			}
			if tc.packs && len(packs) > 3 {
				t.Fatalf("%d packs after 5 batches: geometric repacking should keep at most 3", len(packs))
			}
			if !tc.packs && loose < 40*5 {
				t.Fatalf("only %d loose objects without packing: the test does not measure anything", loose)
			}
			wantSoundBranch(t, s, dir, 40, "verify")
		})
	}
}

// waitRepack waits until no background repack holds the repository's
// repack lock.
func waitRepack(t testing.TB, dir string) {
	t.Helper()
	ctxDir := filepath.Join(dir, ".git", "ctx")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		f, err := tryRepackLock(ctxDir)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			f.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("background repack still running after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// repackLockHeld reports whether a repack holds dir's repack lock now.
func repackLockHeld(t testing.TB, dir string) bool {
	t.Helper()
	f, err := tryRepackLock(filepath.Join(dir, ".git", "ctx"))
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f.Close()
		return false
	}
	return true
}

// recordRepacks makes startRepack report the pids it starts.
func recordRepacks(t *testing.T) func() []int {
	t.Helper()
	var mu sync.Mutex
	var pids []int
	repackStarted = func(pid int) { mu.Lock(); pids = append(pids, pid); mu.Unlock() }
	t.Cleanup(func() { repackStarted = nil })
	return func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(pids) }
}

// traceRepacks makes every git process write trace2 events to a file and
// returns a function counting the `git repack` commands that started.
func traceRepacks(t *testing.T) func() int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace2.json")
	t.Setenv("GIT_TRACE2_EVENT", path)
	return func() int {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			var ev struct {
				Event string   `json:"event"`
				Argv  []string `json:"argv"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "start" && slices.Contains(ev.Argv, "repack") {
				n++
			}
		}
		return n
	}
}

// repackFixture is a store with ctx.packEvery=every, its branch created,
// and extra loose blobs (random, so that packing them takes a while).
func repackFixture(t *testing.T, every string, blobs int) (*Store, string, Device) {
	t.Helper()
	isolate(t)
	_, dir := newStore(t)
	git(t, dir, "config", "ctx.packEvery", every)
	git(t, dir, "config", "gc.auto", "0")
	s := reopen(t, dir)
	d := device(t, "dev-a", 1)
	if _, err := s.Init(context.Background(), InitOptions{Layout: LayoutCtxV1, Device: d}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	for i := 0; i < blobs; i++ {
		rand.Read(buf)
		if _, err := s.writeLoose(plumbing.BlobObject, buf); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir, d
}

func appendN(t *testing.T, s *Store, d Device, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.Append(context.Background(), AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "a")}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRepackRunsDetached: the append that completes a batch returns while
// the repack it started runs in another process (which holds the repack
// lock after the append has returned); the repack then packs every loose
// object, leaves an empty log, and the branch verifies.
func TestRepackRunsDetached(t *testing.T) {
	s, dir, d := repackFixture(t, "8", 300)
	started := recordRepacks(t)
	appendN(t, s, d, 6) // with Init, 7 writes
	if n := len(started()); n != 0 {
		t.Fatalf("%d repacks started before the batch was complete", n)
	}
	before := looseCount(t, dir)
	appendN(t, s, d, 1)
	held := repackLockHeld(t, dir)
	pids := started()
	if len(pids) != 1 || pids[0] == os.Getpid() {
		t.Fatalf("repacks started by the 8th append: %v (this process %d)", pids, os.Getpid())
	}
	if !held {
		t.Fatal("the append returned after the repack ended: it ran in the foreground")
	}
	waitRepack(t, dir)
	if after := looseCount(t, dir); after != 0 || before < 300 {
		t.Fatalf("loose objects %d before, %d after the background repack", before, after)
	}
	if msg := RepackFailure(filepath.Join(dir, ".git")); msg != "" {
		t.Fatalf("repack log: %q", msg)
	}
	wantSoundBranch(t, s, dir, 7, "verify")
}

// TestRepackTwoTriggersOneRun: two writers completing a batch at the same
// moment start one repack between them (git's trace counts the `git
// repack` processes), and the count of writes keeps growing for the one
// that found the repack running, so it tries again later.
func TestRepackTwoTriggersOneRun(t *testing.T) {
	s, dir, _ := repackFixture(t, "4", 300)
	repacks := traceRepacks(t)
	started := recordRepacks(t)
	ctxDir := filepath.Join(dir, ".git", "ctx")
	var wg sync.WaitGroup
	states := make([]packState, 2)
	for i := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			states[i] = s.tryRepack(context.Background(), ctxDir, packState{count: 4}, 4)
		}()
	}
	wg.Wait()
	waitRepack(t, dir)
	if n, m := len(started()), repacks(); n != 1 || m != 1 {
		t.Fatalf("%d repacks started, %d git repack processes ran (want 1 and 1)", n, m)
	}
	ran := 0
	for _, st := range states {
		switch {
		case st.started && st.count == 0:
			ran++
		case !st.started && st.count == 4:
		default:
			t.Fatalf("unexpected state after a trigger: %+v", st)
		}
	}
	if ran != 1 {
		t.Fatalf("states %+v", states)
	}
	if n := looseCount(t, dir); n != 0 {
		t.Fatalf("%d loose objects after the repack", n)
	}
}

// TestRepackKilled: a repack killed with SIGKILL while it writes its pack
// leaves a repository git fsck finds clean and a branch that verifies; the
// lock is free again and the next repack packs everything.
func TestRepackKilled(t *testing.T) {
	s, dir, d := repackFixture(t, "4", 1500)
	started := recordRepacks(t)
	appendN(t, s, d, 3) // with Init, 4 writes
	pids := started()
	if len(pids) != 1 {
		t.Fatalf("repacks started: %v", pids)
	}
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	midway := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !midway; time.Sleep(time.Millisecond) {
		tmp, _ := filepath.Glob(filepath.Join(packDir, "tmp_pack_*"))
		midway = len(tmp) > 0
		if !repackLockHeld(t, dir) {
			break
		}
	}
	// The repack runs in a session of its own: kill the whole group.
	if err := syscall.Kill(-pids[0], syscall.SIGKILL); err != nil && midway {
		t.Fatal(err)
	}
	if !midway {
		t.Fatal("the repack ended before it was seen writing its pack: the test killed nothing")
	}
	waitRepack(t, dir)
	wantSoundBranch(t, s, dir, 3, "verify after the kill")
	appendN(t, s, d, 4)
	if len(started()) != 2 {
		t.Fatalf("no repack after the killed one: %v", started())
	}
	waitRepack(t, dir)
	if n := looseCount(t, dir); n != 0 {
		t.Fatalf("%d loose objects after the repack that followed the kill", n)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

// TestRepackFailureBacksOff: a repack that reports errors (a corrupt loose
// object) leaves its message where doctor reads it (RepackFailure), and is
// not restarted after every batch: the wait doubles after each failure.
func TestRepackFailureBacksOff(t *testing.T) {
	s, dir, d := repackFixture(t, "4", 0)
	started := recordRepacks(t)
	bad := filepath.Join(dir, ".git", "objects", "ab", strings.Repeat("c", 38))
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not zlib"), 0o444); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 63; i++ { // with Init, 64 writes
		appendN(t, s, d, 1)
		waitRepack(t, dir)
	}
	// Writes 4 (fails), 4+8=12 (fails), 12+16=28, 28+32=60: four, not 16.
	if n := len(started()); n != 4 {
		t.Fatalf("%d repacks started in 64 writes with packEvery=4 while each fails (want 4)", n)
	}
	if msg := RepackFailure(filepath.Join(dir, ".git")); !strings.Contains(msg, "error") {
		t.Fatalf("repack failure not recorded: %q", msg)
	}
	os.Remove(bad)
	for i := 0; i < 64+4; i++ {
		appendN(t, s, d, 1)
		waitRepack(t, dir)
	}
	if msg := RepackFailure(filepath.Join(dir, ".git")); msg != "" {
		t.Fatalf("repack log after a repack that succeeded: %q", msg)
	}
}

// wantSoundBranch checks the repository at dir after a repack: git fsck
// --strict finds nothing wrong (dangling objects aside) and the branch
// verifies with n records.
func wantSoundBranch(t *testing.T, s *Store, dir string, n int, what string) {
	t.Helper()
	git(t, dir, "fsck", "--strict", "--no-dangling")
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, v); !rep.OK || rep.Verified() != n {
		t.Fatalf("%s: %+v", what, rep)
	}
}

// TestLowerSessionPriority: the session of a process started the way the
// repack is (Setsid) gets the lowest CPU share where the kernel schedules
// by session (Linux autogroups: a process's nice value orders it only
// within its session); a process that is gone is not an error.
func TestLowerSessionPriority(t *testing.T) {
	if _, err := os.Stat("/proc/self/autogroup"); err != nil {
		t.Skip("no scheduler autogroups here:", err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	group := func() string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/autogroup", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	mine, _ := os.ReadFile("/proc/self/autogroup")
	if g := group(); !strings.HasSuffix(g, " nice 0") || g == strings.TrimSpace(string(mine)) {
		t.Fatalf("a new session's autogroup %q (this process's %q)", g, mine)
	}
	// Unprivileged, the kernel takes one such change per 100 ms across the
	// system (EAGAIN otherwise; a test elsewhere may have just made one).
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		lowerSessionPriority(cmd.Process.Pid)
		if strings.HasSuffix(group(), " nice 19") || time.Now().After(deadline) {
			break
		}
	}
	if g := group(); !strings.HasSuffix(g, " nice 19") {
		t.Errorf("after lowerSessionPriority the session's autogroup is %q, want nice 19", g)
	}
	if after, _ := os.ReadFile("/proc/self/autogroup"); string(after) != string(mine) {
		t.Errorf("this process's autogroup changed: %q -> %q", mine, after)
	}
	lowerSessionPriority(1 << 30) // no such process
}
