package integration

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// prRepackLockHeld reports whether a background repack holds the repack
// lock of repo now.
func prRepackLockHeld(t *testing.T, repo string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(repo, ".git", "ctx", "repack.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// prWaitRepack waits until no background repack runs in repo.
func prWaitRepack(t *testing.T, repo string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); prRepackLockHeld(t, repo); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("background repack still running after 2 minutes")
		}
	}
}

// prLooseBlobs writes n random loose blobs of size bytes into repo (so that
// packing them takes a while).
func prLooseBlobs(t *testing.T, s *sandbox, repo string, env []string, n, size int) {
	t.Helper()
	dir := s.dir(t, "blobs")
	var paths []string
	buf := make([]byte, size)
	for i := 0; i < n; i++ {
		rand.Read(buf)
		p := filepath.Join(dir, strconv.Itoa(i))
		writeFile(t, p, string(buf))
		paths = append(paths, p)
	}
	if r := execute(t, repo, env, []byte(strings.Join(paths, "\n")+"\n"), "git", "hash-object", "-w", "--stdin-paths"); r.code != 0 {
		t.Fatalf("hash-object: %s", r)
	}
}

// prLooseCount is `git count-objects`' loose object count.
func prLooseCount(t *testing.T, repo string, env []string) int {
	t.Helper()
	for _, line := range strings.Split(gitOut(t, repo, env, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "count: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("count-objects printed no count")
	return 0
}

// prRepackStarts counts the `git repack` processes in a trace2 event file.
func prRepackStarts(t *testing.T, path string) int {
	t.Helper()
	b, _ := os.ReadFile(path)
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

// TestRepackDetachedCheckpointReturnsFirst: the `git ctx checkpoint` that
// completes a batch of ctx.packEvery writes exits while the repack it
// started still runs (another process holds the repack lock after the
// command has exited); the repack then packs the loose objects.
func TestRepackDetachedCheckpointReturnsFirst(t *testing.T) {
	t.Parallel()
	s, repo, env := tstNewRepo(t)
	mustCtx(t, repo, env, "init") // write 1
	gitOut(t, repo, env, "config", "ctx.packEvery", "2")
	gitOut(t, repo, env, "config", "gc.auto", "0")
	prLooseBlobs(t, s, repo, env, 600, 4096)
	before := prLooseCount(t, repo, env)
	checkpoint(t, repo, env, "-m", "completes the batch") // write 2
	if !prRepackLockHeld(t, repo) {
		t.Fatal("no repack running after the checkpoint exited: it packed in the foreground (or not at all)")
	}
	prWaitRepack(t, repo)
	if after := prLooseCount(t, repo, env); before < 600 || after != 0 {
		t.Fatalf("loose objects: %d before, %d after the background repack", before, after)
	}
	wantFsckClean(t, repo, env)
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestRepackDetachedConcurrentAppends: 50 checkpoints from two writers at
// once with ctx.packEvery=4, so background repacks run while appends
// write their objects: afterwards git fsck is clean, every checkpoint is
// in the log and verifies, the repacks ran (git's trace), and a later
// batch's repack packs whatever they left loose.
func TestRepackDetachedConcurrentAppends(t *testing.T) {
	t.Parallel()
	s, repo, env := tstNewRepo(t)
	trace := filepath.Join(s.dir(t, "trace"), "trace2.json")
	env = withEnv(env, "GIT_TRACE2_EVENT="+trace)
	mustCtx(t, repo, env, "init")
	gitOut(t, repo, env, "config", "ctx.packEvery", "4")
	gitOut(t, repo, env, "config", "gc.auto", "0")
	prLooseBlobs(t, s, repo, env, 200, 4096)
	const writers, each = 2, 25
	var wg sync.WaitGroup
	errs := make(chan string, writers*each)
	ddWorkers(&wg, nil, writers, each, func(w, i int) {
		if r := execute(t, repo, env, nil, "git-ctx", "checkpoint", "-m", fmt.Sprintf("pr%d-%02d", w, i)); r.code != 0 {
			errs <- fmt.Sprintf("writer %d checkpoint %d: %s", w, i, r)
		}
	})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	prWaitRepack(t, repo)
	// Twelve batches trigger twelve repacks, but a trigger that finds one
	// still running leaves it to that one (one repack for two triggers): on
	// a slow or loaded machine the first can outlast all 50 appends.
	if n := prRepackStarts(t, trace); n < 1 {
		t.Fatalf("%d background repacks ran during 50 appends with packEvery=4", n)
	}
	wantFsckClean(t, repo, env)
	log := logJSON(t, repo, env)
	got := map[string]bool{}
	for _, r := range log {
		got[r.Summary] = true
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if !got[fmt.Sprintf("pr%d-%02d", w, i)] {
				t.Fatalf("checkpoint pr%d-%02d lost (log has %d entries)", w, i, len(log))
			}
		}
	}
	rep := verifyJSON(t, repo, env)
	verified := 0
	for _, c := range rep.Chains {
		verified += c.Verified
	}
	if !rep.OK || verified != writers*each {
		t.Fatalf("verify: ok %v, %d verified (want %d)", rep.OK, verified, writers*each)
	}
	// What the concurrent phase leaves loose depends on timing: a trigger
	// that finds a repack running leaves the work to it, and that one may
	// have listed the loose objects before the last appends wrote theirs.
	// A later batch of ctx.packEvery writes, alone, starts a repack that
	// packs them: at most the writes after its trigger stay loose.
	for i := 0; i < 4; i++ {
		checkpoint(t, repo, env, "-m", fmt.Sprintf("after-%d", i))
	}
	prWaitRepack(t, repo)
	if n := prLooseCount(t, repo, env); n > 8*15 {
		t.Fatalf("%d loose objects left after a batch of ctx.packEvery writes on its own and its repack", n)
	}
}

// TestRepackDetachedFailureInDoctor: a background repack that fails (a
// corrupt loose object) is reported by doctor with git's message.
func TestRepackDetachedFailureInDoctor(t *testing.T) {
	t.Parallel()
	_, repo, env := tstNewRepo(t)
	mustCtx(t, repo, env, "init")
	gitOut(t, repo, env, "config", "ctx.packEvery", "2")
	gitOut(t, repo, env, "config", "gc.auto", "0")
	if out := mustCtx(t, repo, env, "doctor"); strings.Contains(out, "background repack") {
		t.Fatalf("doctor reports a repack before any ran:\n%s", out)
	}
	bad := filepath.Join(repo, ".git", "objects", "ab", strings.Repeat("c", 38))
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, bad, "not zlib")
	checkpoint(t, repo, env, "-m", "starts a repack")
	prWaitRepack(t, repo)
	r := gitCtx(t, repo, env, "doctor")
	if !strings.Contains(r.stdout, "WARN background repack") || !strings.Contains(r.stdout, "error") {
		t.Fatalf("doctor does not report the failed repack:\n%s", r)
	}
}
