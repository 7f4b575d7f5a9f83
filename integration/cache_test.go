package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// The cache's command behaviour is tested in process in cmd/git-ctx
// (cli_cache_test.go); what needs several processes at once stays here.

// ---- comparing the log with the branch ----

// cacheLogEntries runs `git ctx log --json ARGS` and returns each element
// raw, compacted.
func cacheLogEntries(t *testing.T, dir string, env []string, args ...string) []string {
	t.Helper()
	r := gitCtx(t, dir, env, append([]string{"log", "--json"}, args...)...)
	wantCode(t, "log --json", r, 0)
	return testrepo.LogEntries(t, r.stdout)
}

// cacheWantLogEqualsBranch: `git ctx log --json` lists exactly the
// checkpoint files of this repository on the branch, each element being the
// file's JSON plus "verified" (true unless listed in unverified).
func cacheWantLogEqualsBranch(t *testing.T, dir string, env []string, unverified map[string]bool) int {
	t.Helper()
	st := status(t, dir, env)
	return testrepo.WantLogEqualsBranch(t, dir, env, st, cacheLogEntries(t, dir, env), unverified)
}

// TestCacheTwoProcesses30s: for 30 seconds one process after another
// appends checkpoints while, concurrently, other processes run log, search,
// similar, status and now and then reindex. Every command succeeds without
// a word on stderr, and at the end the log equals the branch.
func TestCacheTwoProcesses30s(t *testing.T) {
	t.Parallel()
	const runFor = 30 * time.Second
	s, repo, env := cltInitRepo(t, "dev")
	emb := filepath.Join(s.root, "emb.json")
	writeFile(t, emb, "[1, 0.5, 0]")
	mustCtx(t, repo, env, "checkpoint", "-m", "steady start", "--emb-file", emb)
	mustCtx(t, repo, env, "log") // the cache exists before the race starts

	deadline := time.Now().Add(runFor)
	// Each side runs to the deadline and at least minRounds times: a slow
	// machine changes how long the test takes, not what it checks.
	const minRounds = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	appended := 1
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < minRounds || time.Now().Before(deadline); i++ {
			r := execute(t, repo, env, nil, "git", "ctx", "checkpoint", "-m", fmt.Sprintf("steady append %d", i),
				"--file", fmt.Sprintf("f%d.go", i%5), "--emb-file", emb)
			if r.code != 0 || r.stderr != "" {
				fail("checkpoint %d: %s", i, r)
				return
			}
			appended++
		}
	}()
	reads := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < minRounds || time.Now().Before(deadline); i++ {
			argvs := [][]string{
				{"log", "-n", "5", "--json"},
				{"search", "steady", "--json", "-n", "3"},
				{"similar", "--emb-file", emb, "-k", "2", "--json"},
				{"status", "--json"},
			}
			if i%5 == 4 {
				argvs = append(argvs, []string{"reindex"})
			}
			for _, argv := range argvs {
				r := gitCtx(t, repo, env, argv...)
				if r.code != 0 || r.stderr != "" {
					fail("%q: %s", argv, r)
					return
				}
				if argv[0] != "reindex" && !json.Valid([]byte(r.stdout)) {
					fail("%q: invalid JSON %q", argv, r.stdout)
					return
				}
				if argv[0] == "log" || argv[0] == "search" || argv[0] == "similar" {
					var list []json.RawMessage
					if json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) == 0 {
						fail("%q: no results: %q", argv, r.stdout)
						return
					}
				}
			}
			reads++
		}
	}()
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d checkpoints appended, %d read rounds", appended, reads)
	if n := cacheWantLogEqualsBranch(t, repo, env, nil); n != appended {
		t.Fatalf("branch holds %d checkpoints, %d were appended", n, appended)
	}
	if rep := verifyJSON(t, repo, env); !rep.OK {
		t.Fatalf("verify:\n%s", rep.Raw)
	}
}
