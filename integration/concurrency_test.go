package integration

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestConcurrentCheckpoints: 8 processes × 25 checkpoints, all started at
// once on one repository and one device, give one linear chain of 200.
// The repository then goes on to 260 checkpoints to check the ctx-v1
// layout across a chain segment boundary (see checkCtxV1PastASegment).
func TestConcurrentCheckpoints(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 25
	_, repo, env := tstNewRepo(t)
	mustCtx(t, repo, env, "init")
	initTip := gitOut(t, repo, env, "rev-parse", memRef)

	tstConcurrentWorkers(t, repo, env, workers, each)
	byHash := tstConcurrentLog(t, repo, env, workers, each)
	// One device, one chain, one linear history of commits.
	tstConcurrentChain(t, repo, env, byHash, workers*each)
	if n := gitOut(t, repo, env, "rev-list", "--count", memRef); n != strconv.Itoa(workers*each+1) {
		t.Fatalf("memory branch has %s commits, want %d", n, workers*each+1)
	}
	if m := gitOut(t, repo, env, "rev-list", "--merges", memRef); m != "" {
		t.Fatalf("memory branch has merges: %s", m)
	}
	if root := gitOut(t, repo, env, "rev-list", "--max-parents=0", memRef); root != initTip {
		t.Fatalf("memory branch root %s, want the init commit %s", root, initTip)
	}

	out := mustCtx(t, repo, env, "verify")
	if !strings.Contains(out, fmt.Sprintf("verified %d checkpoints in 1 chains", workers*each)) {
		t.Fatalf("verify: %q", out)
	}
	wantFsckClean(t, repo, env)

	// Carry on past two 128-line segments and check the ctx-v1 layout.
	checkCtxV1PastASegment(t, repo, env, byHash, 260)
}

// tstConcurrentWorkers starts workers processes at once, each making each
// checkpoints "w<worker>-<nn>" (half through git ctx, half calling git-ctx
// directly); every one must succeed.
func tstConcurrentWorkers(t *testing.T, repo string, env []string, workers, each int) {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, workers*each)
	ddWorkers(&wg, start, workers, each, func(w, i int) {
		argv := []string{"git", "ctx", "checkpoint", "-m", fmt.Sprintf("w%d-%02d", w, i)}
		if w%2 == 1 { // half the workers call the binary directly
			argv = argv[1:]
			argv[0] = "git-ctx"
		}
		if r := execute(t, repo, env, nil, argv...); r.code != 0 {
			errs <- fmt.Sprintf("worker %d checkpoint %d: %s", w, i, r)
		}
	})
	close(start)
	wg.Wait()
	close(errs)
	tstDrainErrors(t, errs)
}

// tstConcurrentLog: the log holds every worker's checkpoints once; returns
// them by hash.
func tstConcurrentLog(t *testing.T, repo string, env []string, workers, each int) map[string]record {
	t.Helper()
	log := logJSON(t, repo, env)
	if len(log) != workers*each {
		t.Fatalf("log has %d entries, want %d", len(log), workers*each)
	}
	byHash := map[string]record{}
	summaries := map[string]bool{}
	for _, r := range log {
		if _, dup := byHash[r.Hash]; dup {
			t.Fatalf("hash %s twice in the log", r.Hash)
		}
		byHash[r.Hash] = r
		summaries[r.Summary] = true
	}
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			if !summaries[fmt.Sprintf("w%d-%02d", w, i)] {
				t.Fatalf("checkpoint w%d-%02d is missing", w, i)
			}
		}
	}

	return byHash
}

// tstConcurrentChain: status counts total checkpoints on one device, and
// its chain links them all, turns counting up, times rising, each worker's
// checkpoints in the order it made them.
func tstConcurrentChain(t *testing.T, repo string, env []string, byHash map[string]record, total int) {
	t.Helper()
	st := status(t, repo, env)
	if st.Checkpoints != total || st.DeviceCheckpoints != total || st.Devices != 1 {
		t.Fatalf("status: %+v", st)
	}
	segDir := "repos/" + st.RepoID + "/chains/" + st.Device + "/"
	chain := parseChain(t, branchFile(t, repo, env, segDir+"00000000.jsonl")+branchFile(t, repo, env, segDir+"00000001.jsonl"))
	if len(chain) != total {
		t.Fatalf("chain has %d lines, want %d", len(chain), total)
	}
	prev := zeroHash
	lastOfWorker := map[string]int{}
	for i, e := range chain {
		if e.Parent != prev {
			t.Fatalf("chain line %d: parent %s, want %s", i+1, e.Parent, prev)
		}
		prev = e.Hash
		r, ok := byHash[e.Hash]
		if !ok {
			t.Fatalf("chain line %d names %s, not in the log", i+1, e.Hash)
		}
		// Default session "": turns count 1, 2, … along the chain.
		if r.Turn != i+1 || r.Session != "" {
			t.Fatalf("chain line %d: session %q turn %d, want turn %d", i+1, r.Session, r.Turn, i+1)
		}
		if i > 0 && r.TS <= chain[i-1].TS {
			t.Fatalf("chain line %d: ts %d not after %d", i+1, r.TS, chain[i-1].TS)
		}
		// Each worker's checkpoints appear in the order it made them.
		w, n, _ := strings.Cut(r.Summary, "-")
		num, _ := strconv.Atoi(n)
		if last, seen := lastOfWorker[w]; seen && num != last+1 {
			t.Fatalf("worker %s: checkpoint %d follows %d on the chain", w, num, last)
		}
		lastOfWorker[w] = num
	}
}

// wantFsckClean fails unless git fsck --strict finds nothing but dangling
// objects.
func wantFsckClean(t *testing.T, dir string, env []string) {
	t.Helper()
	testrepo.WantFsckClean(t, dir, env)
}

// TestConcurrentWithPlainGit: while git-ctx appends checkpoints, a plain git
// writer moves the same branch with commit-tree and a compare-and-swap
// update-ref. Nothing from either side is lost.
func TestConcurrentWithPlainGit(t *testing.T) {
	t.Parallel()
	const ctxWorkers, each, plainCommits = 2, 15, 20
	_, repo, env := tstNewRepo(t)
	mustCtx(t, repo, env, "init")

	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, ctxWorkers*each+1)
	ddWorkers(&wg, start, ctxWorkers, each, func(w, i int) {
		if r := execute(t, repo, env, nil, "git", "ctx", "checkpoint", "-m", fmt.Sprintf("ctx w%d-%02d", w, i)); r.code != 0 {
			errs <- fmt.Sprintf("git ctx checkpoint w%d-%02d: %s", w, i, r)
		}
	})
	var plain []string // plain commits that landed
	var casLost int
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		plain, casLost = tstPlainWriter(t, repo, env, plainCommits, errs)
	}()
	close(start)
	wg.Wait()
	close(errs)
	tstDrainErrors(t, errs)
	t.Logf("plain git lost the compare-and-swap %d times", casLost)

	tstPlainCtxKept(t, repo, env, ctxWorkers, each)
	tstPlainCommitsKept(t, repo, env, plain, plainCommits)
	tstPlainVerify(t, repo, env, ctxWorkers*each)
	wantFsckClean(t, repo, env)
}

// tstPlainWriter makes want plain commits on the memory branch with
// commit-tree and a compare-and-swap update-ref, starting again from the
// new tip whenever git-ctx moved the branch first. Returns the commits that
// landed and how often the swap was lost; failures go to errs.
func tstPlainWriter(t *testing.T, repo string, env []string, plainCommits int, errs chan<- string) (plain []string, casLost int) {
	for n := 0; len(plain) < plainCommits; n++ {
		if n > 50*plainCommits {
			errs <- "the plain git writer never got its commits in"
			return plain, casLost
		}
		old := strings.TrimSpace(execute(t, repo, env, nil, "git", "rev-parse", memRef).stdout)
		c, ok := plumbingCommit(t, repo, env, old, fmt.Sprintf("plain %d", len(plain)),
			fileEdit{path: fmt.Sprintf("plain/%02d.txt", len(plain)), content: fmt.Sprintf("plain %d\n", len(plain))})
		if !ok {
			errs <- "commit-tree failed"
			return plain, casLost
		}
		if r := execute(t, repo, env, nil, "git", "update-ref", memRef, c, old); r.code != 0 {
			casLost++ // git-ctx moved the branch first: start again from the new tip
			continue
		}
		plain = append(plain, c)
	}
	return plain, casLost
}

// tstPlainCtxKept: every git-ctx checkpoint is on the branch.
func tstPlainCtxKept(t *testing.T, repo string, env []string, ctxWorkers, each int) {
	t.Helper()
	log := logJSON(t, repo, env)
	if len(log) != ctxWorkers*each {
		t.Fatalf("log has %d entries, want %d", len(log), ctxWorkers*each)
	}
	seen := map[string]bool{}
	for _, r := range log {
		seen[r.Summary] = true
	}
	for w := 0; w < ctxWorkers; w++ {
		for i := 0; i < each; i++ {
			if s := fmt.Sprintf("ctx w%d-%02d", w, i); !seen[s] {
				t.Fatalf("checkpoint %q lost", s)
			}
		}
	}
}

// tstPlainCommitsKept: every plain commit is reachable and its file is
// still in the tree; the branch has no merges.
func tstPlainCommitsKept(t *testing.T, repo string, env []string, plain []string, plainCommits int) {
	t.Helper()
	for _, c := range plain {
		if _, _, code := run(t, repo, env, "git", "merge-base", "--is-ancestor", c, memRef); code != 0 {
			t.Fatalf("plain commit %s is no longer reachable from the branch", c)
		}
	}
	paths := branchPaths(t, repo, env)
	for i := 0; i < plainCommits; i++ {
		want := fmt.Sprintf("plain/%02d.txt", i)
		if !containsString(paths, want) {
			t.Fatalf("%s is gone from the branch", want)
		}
	}
	if m := gitOut(t, repo, env, "rev-list", "--merges", memRef); m != "" {
		t.Fatalf("memory branch has merges: %s", m)
	}

}

// tstPlainVerify: verify fails on the foreign directory, and on nothing
// else (n checkpoints verified on the one chain).
func tstPlainVerify(t *testing.T, repo string, env []string, n int) {
	t.Helper()
	rep := verifyJSON(t, repo, env)
	if rep.OK {
		t.Fatalf("verify passed with plain/ on the branch:\n%s", rep.Raw)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Path != "plain" || !strings.Contains(rep.Problems[0].Reason, "not part of the ctx-v1 layout") {
		t.Fatalf("verify problems: %+v", rep.Problems)
	}
	if len(rep.Chains) != 1 || len(rep.Chains[0].Failure) != 0 && string(rep.Chains[0].Failure) != "null" ||
		rep.Chains[0].Verified != n {
		t.Fatalf("verify chains: %+v", rep.Chains)
	}
	r := gitCtx(t, repo, env, "verify")
	wantCode(t, "verify with plain/", r, 1)
	var fails []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "FAIL") {
			fails = append(fails, l)
		}
	}
	if len(fails) != 1 || fails[0] != "FAIL plain: not part of the ctx-v1 layout" {
		t.Fatalf("verify FAIL lines: %q", fails)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
