package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacks on the cost of a pull (issue 14 items 5 and 6): an attacker with
// push access to the shared remote publishes one commit that makes every
// honest pull do a great deal of work or hold a great deal of memory. The
// honest devices must reject it in work linear in what was fetched and in
// bounded memory, and keep exchanging their own records. Timings are not
// asserted (benchmarks measure speed: bench/ctxbench, docs/PERFORMANCE.md);
// a generous limit only guards against a hang.

const (
	costJunkPaths   = 150_000 // junk paths outside the layout
	costOrphanPaths = 50_000  // checkpoint files named by no chain
	costHangGuard   = 5 * time.Minute
	costBlobSize    = 1 << 30  // the oversized blob
	costMaxExtraRSS = 64 << 20 // memory a pull of it may use above an idle pull
	costMaxMessage  = 64 << 10 // bytes of a merge commit message
	costMaxOutput   = 16 << 10 // bytes a pull prints for a huge rejection
)

// costWorld: a bare remote, honest devices A and B that have exchanged a
// record each, and the attacker M's clone with ghyll/memory as a ref.
type costWorld struct {
	s        *sandbox
	rem      *syncRemote
	a, b     *syncDevice
	m        string
	mEnv     []string
	repoID   string
	a1, b1   record
	idA, idB string
}

func costNewWorld(t *testing.T) *costWorld {
	t.Helper()
	s, rem, a := cltTeam(t, "file", "A")
	w := &costWorld{s: s, rem: rem, a: a, mEnv: s.env("M")}
	w.a1 = w.a.cp(t, "a1 before the attack")
	w.a.must(t, "push")
	w.b, w.b1 = cltJoin(t, s, w.rem, w.a, "b1 before the attack")
	w.idA, w.idB = w.a.id(t), w.b.id(t)
	w.repoID = status(t, w.a.dir, w.a.env).RepoID
	w.m = w.s.root + "/M"
	cltAttackerClone(t, s, w.rem.bare, w.m, w.mEnv)
	return w
}

// costFastImport commits on top of the attacker's ghyll/memory whatever
// stream writes (fast-import commands after the commit header), then
// pushes it to the remote as a fast-forward.
func (w *costWorld) costFastImport(t *testing.T, stream func(bw *bufio.Writer) error) {
	t.Helper()
	old := gitOut(t, w.m, w.mEnv, "rev-parse", memRef)
	cmd := exec.Command(gitPath, "fast-import", "--quiet", "--done")
	cmd.Dir, cmd.Env = w.m, w.mEnv
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(stdin, 1<<20)
	werr := func() error {
		if err := stream(bw); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(bw, "done\n"); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return stdin.Close()
	}()
	if err := cmd.Wait(); err != nil || werr != nil {
		t.Fatalf("fast-import: %v / %v\n%s", err, werr, stderr.String())
	}
	if tip := gitOut(t, w.m, w.mEnv, "rev-parse", memRef); tip == old {
		t.Fatal("fast-import did not move ghyll/memory")
	}
	gitOut(t, w.m, w.mEnv, "push", "-q", "origin", memRef+":"+memRef)
}

// costCommitHeader writes the header of a commit on ghyll/memory whose
// parent is its current tip.
func costCommitHeader(bw *bufio.Writer, msg string) error {
	_, err := fmt.Fprintf(bw, "commit %s\ncommitter M <m@example.org> 1700000000 +0000\ndata %d\n%s\nfrom %s^0\n",
		memRef, len(msg), msg, memRef)
	return err
}

// costRun runs `git ctx ARGS` as device d with the hang guard, returning
// the result, its max RSS (the process and everything it waited for) and
// its wall time.
func costRun(t *testing.T, d *syncDevice, args ...string) (result, int64, time.Duration) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), costHangGuard)
	defer cancel()
	cmd := exec.CommandContext(c, gitPath, append([]string{"ctx"}, args...)...)
	cmd.Dir, cmd.Env = d.dir, d.env
	// git runs git-ctx as its child: the guard ends the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	if c.Err() != nil {
		t.Fatalf("git ctx %q on %s did not finish within %s", args, d.name, costHangGuard)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("git ctx %q: %v", args, err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024
	}
	return res, rss, took
}

// costSelfRSS is this test process's max RSS (Linux folds it into the max
// RSS of a child started by vfork, see TestLimits).
func costSelfRSS() int64 {
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return self.Maxrss * 1024
}

// costPullJSON is the part of `git ctx pull --json` these tests read.
type costPullJSON struct {
	Rejected         []syncQuarantine `json:"rejected"`
	RejectedTotal    *int             `json:"rejected_total"`
	RejectedByReason map[string]int   `json:"rejected_by_reason"`
	Added            int              `json:"added"`
}

// costMergeMessages returns the sizes of the messages of d's merge commits.
func costMergeMessages(t *testing.T, d *syncDevice) []int {
	t.Helper()
	out := d.git(t, "log", "--merges", "--format=%H", memRef)
	var sizes []int
	for _, c := range strings.Fields(out) {
		sizes = append(sizes, len(d.git(t, "cat-file", "commit", c)))
	}
	return sizes
}

// TestCostPullManyJunkPaths: one attacker commit adds 200,000 paths that
// are all rejected (150,000 outside the layout, 50,000 checkpoint files no
// chain names). Each honest pull finishes (hang guard: 5 minutes; today
// the quarantine insert made it run for over 20), prints a bounded summary
// (a count per reason, the first few paths, where to see all), keeps
// --json bounded with the counts, quarantines every path (queryable with
// log --unverified), writes a bounded merge message, and the honest
// records pushed before and after the attack merge on both devices.
func TestCostPullManyJunkPaths(t *testing.T) {
	t.Parallel()
	w := costNewWorld(t)
	idle, idleRSS, _ := costRun(t, w.a, "pull")
	wantCode(t, "idle pull", idle, 0)

	tstCostJunkCommit(t, w)
	total := costJunkPaths + costOrphanPaths
	tstCostJunkPullText(t, w, total, idleRSS)
	tstCostJunkPullJSON(t, w, total)
	tstCostJunkAfter(t, w)
	// The whole quarantine stays queryable.
	q := syncUnverified(t, w.a)
	byReason := map[string]int{}
	for _, e := range q {
		byReason[e.Reason]++
	}
	if len(q) != total || byReason["unexpected_path"] != costJunkPaths || byReason["orphan_file"] != costOrphanPaths {
		t.Errorf("A's quarantine holds %d records %v, want %d", len(q), byReason, total)
	}
	if n := syncStatusQuarantined(t, w.a); n != total {
		t.Errorf("A's status counts %d quarantined, want %d", n, total)
	}
}

// tstCostJunkCommit: the attacker's one commit of costJunkPaths paths
// outside the layout and costOrphanPaths checkpoint files no chain names.
func tstCostJunkCommit(t *testing.T, w *costWorld) {
	t.Helper()
	w.costFastImport(t, func(bw *bufio.Writer) error {
		// Every path points to one small blob.
		if _, err := fmt.Fprintf(bw, "blob\nmark :1\ndata 5\njunk\n"); err != nil {
			return err
		}
		if err := costCommitHeader(bw, "ctx: checkpoint (nothing to see here)"); err != nil {
			return err
		}
		for i := 0; i < costJunkPaths; i++ {
			if _, err := fmt.Fprintf(bw, "M 100644 :1 junk/%03d/%06d.json\n", i/1000, i); err != nil {
				return err
			}
		}
		for i := 0; i < costOrphanPaths; i++ {
			sum := sha256.Sum256([]byte(fmt.Sprint("orphan", i)))
			h := hex.EncodeToString(sum[:])
			if _, err := fmt.Fprintf(bw, "M 100644 :1 %s\n", ctxV1CheckpointPath(w.repoID, h)); err != nil {
				return err
			}
		}
		return nil
	})
}

// tstCostJunkPullText: A pulls the attack; the output is bounded and gives
// the counts per reason, the first path and where to see all.
func tstCostJunkPullText(t *testing.T, w *costWorld, total int, idleRSS int64) {
	t.Helper()
	res, rss, took := costRun(t, w.a, "pull")
	t.Logf("A's pull of %d junk paths: exit %d in %s, max RSS %d MiB (idle pull %d MiB); %d bytes of output",
		total, res.code, took.Round(time.Millisecond), rss>>20, idleRSS>>20, len(res.stdout)+len(res.stderr))
	wantCode(t, "A's pull of the junk", res, 1)
	if n := len(res.stdout) + len(res.stderr); n > costMaxOutput {
		t.Errorf("A's pull printed %d bytes for one junk commit (limit %d)", n, costMaxOutput)
	}
	for _, want := range []string{
		fmt.Sprintf("rejected %d paths: %d unexpected_path, %d orphan_file", total, costJunkPaths, costOrphanPaths),
		"junk/000/000000.json", "git ctx log --unverified",
	} {
		if !strings.Contains(res.stdout+res.stderr, want) {
			t.Errorf("A's pull output lacks %q:\n%s", want, res)
		}
	}

}

// tstCostJunkPullJSON: B pulls the attack with --json: counts in full, the
// list of rejections bounded.
func tstCostJunkPullJSON(t *testing.T, w *costWorld, total int) {
	t.Helper()
	res, _, took := costRun(t, w.b, "pull", "--json")
	t.Logf("B's pull --json: exit %d in %s, %d bytes of output", res.code, took.Round(time.Millisecond), len(res.stdout))
	wantCode(t, "B's pull of the junk", res, 1)
	var pj costPullJSON
	if err := json.Unmarshal([]byte(res.stdout), &pj); err != nil {
		t.Fatalf("decode pull --json: %v\n%.2000s", err, res.stdout)
	}
	if pj.RejectedTotal == nil || *pj.RejectedTotal != total {
		t.Errorf("pull --json: rejected_total %v, want %d", pj.RejectedTotal, total)
	}
	if pj.RejectedByReason["unexpected_path"] != costJunkPaths || pj.RejectedByReason["orphan_file"] != costOrphanPaths {
		t.Errorf("pull --json: rejected_by_reason %v", pj.RejectedByReason)
	}
	if len(pj.Rejected) == 0 || len(pj.Rejected) > 1000 {
		t.Errorf("pull --json lists %d rejections (want the first ones, at most 1000)", len(pj.Rejected))
	}
}

// tstCostJunkAfter: B then A add a record and sync, B pulls; both hold the
// honest records, verify, wrote bounded merge messages and merged no junk.
func tstCostJunkAfter(t *testing.T, w *costWorld) {
	t.Helper()
	b2 := w.b.cp(t, "b2 after the attack")
	if r := w.b.ctx(t, "sync"); r.code != 0 && r.code != 1 {
		t.Fatalf("B's sync after the attack: %s", r)
	}
	a2 := w.a.cp(t, "a2 after the attack")
	if r, _, _ := costRun(t, w.a, "sync"); r.code != 0 && r.code != 1 {
		t.Fatalf("A's sync after the attack: %s", r)
	}
	if r, _, _ := costRun(t, w.b, "pull"); r.code != 0 && r.code != 1 {
		t.Fatalf("B's last pull: %s", r)
	}
	for _, d := range []*syncDevice{w.a, w.b} {
		syncWantHashes(t, d.name+" after the attack", d.hashes(t), syncHashesOf(w.a1, w.b1, a2, b2)...)
		d.wantVerifies(t)
		for _, n := range costMergeMessages(t, d) {
			if n > costMaxMessage {
				t.Errorf("%s: a merge commit of %d bytes (limit %d)", d.name, n, costMaxMessage)
			}
		}
		for _, p := range branchPaths(t, d.dir, d.env) {
			if strings.HasPrefix(p, "junk/") {
				t.Fatalf("%s merged %s", d.name, p)
			}
		}
	}
}

// costBigBlob writes a fast-import blob command for a blob of costBlobSize
// bytes (a compressible pattern: about 4 MB in a pack) with mark :1.
func costBigBlob(bw *bufio.Writer) error {
	if _, err := fmt.Fprintf(bw, "blob\nmark :1\ndata %d\n", costBlobSize); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("-----BEGIN PUBLIC KEY-----\nnot a key, just a great deal of it\n"), 1<<14)
	for n := 0; n < costBlobSize; {
		k := min(len(chunk), costBlobSize-n)
		if _, err := bw.Write(chunk[:k]); err != nil {
			return err
		}
		n += k
	}
	_, err := io.WriteString(bw, "\n")
	return err
}

// TestCostPullOversizedBlob: one attacker commit puts a 1 GiB blob (a few
// MB compressed) at every kind of limited path: a new device's key, a
// chain segment, a checkpoint file, a snapshot timeline segment, a
// package file. Each honest pull (A gets the objects loose,
// B packed) stays within 64 MiB of an idle pull's max RSS and rejects the
// paths too_large; `git ctx review` of what the pull brought stays within
// the same bound and says too_large (the checkpoint file, named by no
// readable chain, is an orphan and never read); the honest records pushed before and
// after the attack merge on both devices.
func TestCostPullOversizedBlob(t *testing.T) {
	t.Parallel()
	w := costNewWorld(t)
	w.b.git(t, "config", "fetch.unpackLimit", "1") // B keeps what it fetches packed
	_, idleA, _ := costRun(t, w.a, "pull")
	_, idleB, _ := costRun(t, w.b, "pull")

	hash := strings.Repeat("ab", 32)
	paths := []string{
		"devices/evil-0001.pub",
		"repos/" + w.repoID + "/chains/evil-0002/00000000.jsonl",
		ctxV1CheckpointPath(w.repoID, hash),
		"repos/" + w.repoID + "/timelines/evil-0003/00000000.jsonl",
		"repos/" + w.repoID + "/packages/evil/1.0.0.ctxpkg",
	}
	w.costFastImport(t, func(bw *bufio.Writer) error {
		if err := costBigBlob(bw); err != nil {
			return err
		}
		if err := costCommitHeader(bw, "ctx: checkpoint (a key)"); err != nil {
			return err
		}
		for _, p := range paths {
			if _, err := fmt.Fprintf(bw, "M 100644 :1 %s\n", p); err != nil {
				return err
			}
		}
		return nil
	})

	for _, c := range []struct {
		d    *syncDevice
		idle int64
	}{{w.a, idleA}, {w.b, idleB}} {
		tstCostPullBigBlob(t, c.d, c.idle, paths)
		tstCostReviewBigBlob(t, c.d, c.idle)
	}

	b2 := w.b.cp(t, "b2 after the attack")
	if r := w.b.ctx(t, "sync"); r.code != 0 && r.code != 1 {
		t.Fatalf("B's sync after the attack: %s", r)
	}
	a2 := w.a.cp(t, "a2 after the attack")
	if r := w.a.ctx(t, "sync"); r.code != 0 && r.code != 1 {
		t.Fatalf("A's sync after the attack: %s", r)
	}
	if r := w.b.ctx(t, "pull"); r.code != 0 && r.code != 1 {
		t.Fatalf("B's last pull: %s", r)
	}
	for _, d := range []*syncDevice{w.a, w.b} {
		syncWantHashes(t, d.name+" after the attack", d.hashes(t), syncHashesOf(w.a1, w.b1, a2, b2)...)
		d.wantVerifies(t)
		for _, p := range branchPaths(t, d.dir, d.env) {
			for _, bad := range paths {
				if p == bad {
					t.Errorf("%s merged %s", d.name, p)
				}
			}
		}
	}
}

// tstCostPullBigBlob: d's pull of the big blob stays within the RSS bound
// over its idle pull, exits 1, and rejects the key, chain segment, timeline
// and package paths too_large (paths[2], the checkpoint file, is an orphan
// and never read).
func tstCostPullBigBlob(t *testing.T, d *syncDevice, idle int64, paths []string) {
	t.Helper()
	res, rss, took := costRun(t, d, "pull", "--json")
	bound := max(idle, costSelfRSS()) + costMaxExtraRSS
	t.Logf("%s's pull of a %d MiB blob: exit %d in %s, max RSS %d MiB (idle %d MiB, bound %d MiB)",
		d.name, costBlobSize>>20, res.code, took.Round(time.Millisecond), rss>>20, idle>>20, bound>>20)
	if rss == 0 || rss > bound {
		t.Errorf("%s's pull: max RSS %d MiB, bound %d MiB", d.name, rss>>20, bound>>20)
	}
	wantCode(t, d.name+"'s pull of the big blob", res, 1)
	var pj costPullJSON
	if err := json.Unmarshal([]byte(res.stdout), &pj); err != nil {
		t.Fatalf("decode pull --json: %v\n%s", err, res)
	}
	tooLarge := map[string]bool{}
	for _, r := range pj.Rejected {
		if r.Reason == "too_large" {
			tooLarge[r.Record] = true
		}
	}
	for _, p := range paths[:2] { // key and chain segment: read before anything else
		if !tooLarge[p] {
			t.Errorf("%s's pull did not reject %s too_large:\n%s", d.name, p, res.stdout)
		}
	}
	for _, p := range paths[3:] { // snapshot timeline and package files
		if !tooLarge[p] {
			t.Errorf("%s's pull did not reject %s too_large:\n%s", d.name, p, res.stdout)
		}
	}
}

// tstCostReviewBigBlob: review of the attacker's commit itself (the default
// range, what a push would send, holds only the merge) stays within the
// same bound and says too_large.
func tstCostReviewBigBlob(t *testing.T, d *syncDevice, idle int64) {
	t.Helper()
	rev, rss, _ := costRun(t, d, "review", "--json", "refs/remotes/origin/ghyll/memory")
	bound := max(idle, costSelfRSS()) + costMaxExtraRSS
	t.Logf("%s's review: exit %d, max RSS %d MiB", d.name, rev.code, rss>>20)
	wantCode(t, d.name+"'s review", rev, 0)
	if rss == 0 || rss > bound {
		t.Errorf("%s's review: max RSS %d MiB, bound %d MiB", d.name, rss>>20, bound>>20)
	}
	if !strings.Contains(rev.stdout, "too_large") {
		t.Errorf("%s's review does not say too_large:\n%.4000s", d.name, rev.stdout)
	}
}
