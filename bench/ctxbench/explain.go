package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-ctx/git-ctx/gitstore"
)

var explSize = flag.Int("explain", 0, "only the explain benchmark, on a branch of this many checkpoints (e.g. 100000)")

// benchExplainIfAsked measures `git ctx explain HEAD` and `git ctx log
// --commit HEAD` as whole commands on a branch of -explain checkpoints
// (cache built), beside the floor `git ctx version` in the same run. HEAD
// is a code commit with two turns and its post-commit record on top of
// the branch; `log -n 1` is the read path without explain. The branch is
// kept in -work and reused by a later run. It reports whether it ran.
func benchExplainIfAsked(dir string) bool {
	n := *explSize
	if n <= 0 {
		return false
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at start: %s\n", strings.TrimSpace(string(load)))
	repo := filepath.Join(dir, fmt.Sprintf("explain-%d", n))
	done := filepath.Join(dir, fmt.Sprintf("explain-built-%d", n))
	if _, err := os.Stat(done); err != nil { // built by an earlier run with the same -work: reused
		explBuild(dir, repo, n)
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			fatal(err)
		}
	}
	cmd := exec.Command(*binary, "explain", "HEAD")
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "\n  turn ") != 2 || !strings.Contains(string(out), "\n  commit ") {
		fatal(fmt.Errorf("explain HEAD does not show two turns and the commit record: %v\n%s", err, out))
	}
	rr := max(5, *runs)
	fmt.Printf("| operation | checkpoints | median | CPU | ratio to the floor | runs |\n|---|---:|---:|---:|---:|---:|\n")
	idle := childRun(rr, repo, "version")
	fmt.Printf("| floor: `git ctx version` | %d | %s | %s | 1.00× | %d |\n", n, fmtDur(idle.wall), fmtDur(idle.cpu), rr)
	for _, args := range [][]string{{"log", "-n", "1"}, {"explain", "HEAD"}, {"log", "--commit", "HEAD"}, {"explain", "HEAD", "--json"}} {
		s := childRun(rr, repo, args...)
		fmt.Printf("| `git ctx %s` | %d | %s | %s | %.2f× | %d |\n", strings.Join(args, " "), n, fmtDur(s.wall), fmtDur(s.cpu),
			s.wall.Seconds()/idle.wall.Seconds(), rr)
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at end: %s\n", strings.TrimSpace(string(load)))
	return true
}

// explBuild makes the branch of n checkpoints (build) as repo, then a
// code commit on top: two turns, the commit, its record, and the cache.
func explBuild(dir, repo string, n int) {
	built, _ := build(dir, gitstore.LayoutCtxV1, n)
	os.RemoveAll(repo)
	if err := os.Rename(built, repo); err != nil {
		fatal(err)
	}
	gitctx(repo, "checkpoint", "-m", "turn 1: planned the change", "--session", "bench-s", "--file", "a.go", "--tool", "Edit")
	gitctx(repo, "checkpoint", "-m", "turn 2: wrote it", "--session", "bench-s", "--file", "a.go", "--tool", "Edit")
	if err := os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n"), 0o644); err != nil {
		fatal(err)
	}
	run(repo, "git", "add", "a.go")
	run(repo, "git", "commit", "-q", "-m", "a: the change")
	gitctx(repo, "checkpoint", "--from-commit", "HEAD")
	gitctx(repo, "log", "-n", "1") // the cache, built once
}
