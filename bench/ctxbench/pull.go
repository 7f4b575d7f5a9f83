package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

var (
	pfSize    = flag.Int("pullfetch", 0, "only the pull-against-fetch benchmark: a pull of this many new checkpoints from -devices devices, timed against a plain `git fetch` of the same ref in the same run (0: skip)")
	pfRounds  = flag.Int("pullfetch-rounds", 7, "rounds of the pull-against-fetch benchmark (each: one fetch and one pull, alternating which goes first)")
	pfProfile = flag.String("pullfetch-cpuprofile", "", "write a CPU profile of one in-process pull (sync.Pull) to this file")
	pfBase    = flag.String("pullfetch-base", "", "also time `git ctx pull` of this (baseline) git-ctx binary in every round")
)

// pfRun is one timed child process: wall time and CPU (user+system of the
// process and every child it waited for: git's fetch inside `git ctx pull`).
type pfRun struct{ wall, cpu time.Duration }

// benchPullFetch measures item 5 of issue 18: `git ctx pull` of n new
// checkpoints from -devices devices (a clone that has no memory branch yet,
// over a file remote) against its floor, a plain `git fetch` of the same ref
// with the arguments sync.Fetch passes, measured in the same run. The
// remote is built once; each round copies a clean clone twice and times the
// fetch in one and the pull in the other, alternating which goes first, so
// the load of the machine falls on both alike. It reports pairwise ratios
// (pull ÷ fetch of the same round), their median, the medians of both, the
// phases of in-process pulls (sync.Pull's Durations) and the load average.
// It reports whether it ran.
func benchPullFetch(dir string) bool {
	if *pfSize <= 0 {
		return false
	}
	n := *pfSize
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at start: %s\n", strings.TrimSpace(string(load)))
	t0 := time.Now()
	base, bare := pfRemote(dir, n)
	fmt.Fprintf(os.Stderr, "pullfetch: built %d checkpoints from %d devices in %s\n", n, *devices, time.Since(t0).Round(time.Millisecond))

	rounds := max(1, *pfRounds)
	var fetches, pulls, basePulls, floors []pfRun
	var ratios, cpuRatios, baseRatios, baseCPURatios []float64
	for r := 0; r < rounds; r++ {
		// The order rotates from round to round: fetch, pull, baseline
		// pull, the ed25519 floor.
		var f, p, b pfRun
		steps := []func(){
			func() { f = pfInCopy(dir, base, "f", r, pfFetch) },
			func() { p = pfInCopy(dir, base, "p", r, func(d string) pfRun { return pfPull(*binary, d, n) }) },
			func() {
				if *pfBase != "" {
					b = pfInCopy(dir, base, "b", r, func(d string) pfRun { return pfPull(*pfBase, d, n) })
				}
			},
			func() {
				c0, t := selfCPU(), time.Now()
				ed25519Floor(n)
				floors = append(floors, pfRun{wall: time.Since(t), cpu: selfCPU() - c0})
			},
		}
		for i := range steps {
			steps[(i+r)%len(steps)]()
		}
		fetches, pulls = append(fetches, f), append(pulls, p)
		ratios = append(ratios, p.wall.Seconds()/f.wall.Seconds())
		cpuRatios = append(cpuRatios, p.cpu.Seconds()/f.cpu.Seconds())
		if *pfBase != "" {
			basePulls = append(basePulls, b)
			baseRatios = append(baseRatios, b.wall.Seconds()/f.wall.Seconds())
			baseCPURatios = append(baseCPURatios, b.cpu.Seconds()/f.cpu.Seconds())
		}
		fmt.Fprintf(os.Stderr, "pullfetch round %d: fetch %s (CPU %s), pull %s (CPU %s), ratio %.3f; baseline pull %s (CPU %s)\n",
			r+1, fmtDur(f.wall), fmtDur(f.cpu), fmtDur(p.wall), fmtDur(p.cpu), ratios[r], fmtDur(b.wall), fmtDur(b.cpu))
	}
	op := fmt.Sprintf("%d new checkpoints from %d devices, file remote, a clone without the branch", n, *devices)
	fmt.Printf("| operation | median wall | median CPU | rounds |\n|---|---:|---:|---:|\n")
	fw, fc := pfMedians(fetches)
	pw, pc := pfMedians(pulls)
	fmt.Printf("| floor: `git fetch` of ghyll/memory (%s) | %s | %s | %d |\n", op, fmtDur(fw), fmtDur(fc), rounds)
	fmt.Printf("| `git ctx pull -q` (%s) | %s | %s | %d |\n", op, fmtDur(pw), fmtDur(pc), rounds)
	fmt.Printf("| pull ÷ fetch, pairwise median (wall) | %.3f× (rounds: %s) | | %d |\n", pfMedian(ratios), pfList(ratios), rounds)
	fmt.Printf("| pull ÷ fetch, pairwise median (CPU) | %.3f× | | %d |\n", pfMedian(cpuRatios), rounds)
	fmt.Printf("| added by git-ctx (difference of medians) | %s | %s | %d |\n", fmtDur(pw-fw), fmtDur(pc-fc), rounds)
	if *pfBase != "" {
		bw, bc := pfMedians(basePulls)
		fmt.Printf("| baseline binary: `git ctx pull -q` | %s | %s | %d |\n", fmtDur(bw), fmtDur(bc), rounds)
		fmt.Printf("| baseline pull ÷ fetch, pairwise median (wall) | %.3f× (rounds: %s) | | %d |\n", pfMedian(baseRatios), pfList(baseRatios), rounds)
		fmt.Printf("| baseline pull ÷ fetch, pairwise median (CPU) | %.3f× | | %d |\n", pfMedian(baseCPURatios), rounds)
	}
	ew, ec := pfMedians(floors)
	fmt.Printf("| floor: ed25519 verify of %d signatures alone, %d goroutines (in this process) | %s | %s | %d |\n", n, runtime.GOMAXPROCS(0), fmtDur(ew), fmtDur(ec), rounds)

	// The phases, from in-process pulls (one of them profiled if asked).
	ctx := context.Background()
	rr := max(3, rounds/2)
	p := timePulls(ctx, rr, func(i int) string {
		clone := pfCopy(dir, base, "i", i)
		if i == 0 && *pfProfile != "" {
			pfStartProfile()
		}
		return clone
	}, func(res *ctxsync.PullResult) error {
		if *pfProfile != "" {
			pprof.StopCPUProfile() // (after the first pull; a no-op after the others)
		}
		if res.Added != n || len(res.Rejected) != 0 {
			return fmt.Errorf("pull added %d of %d, rejected %d", res.Added, n, len(res.Rejected))
		}
		return nil
	})
	fmt.Printf("| in process (sync.Pull): total | %s | | %d |\n", fmtDur(median(p.total)), rr)
	fmt.Printf("| in process: fetch (git fetch) | %s | | %d |\n", fmtDur(median(p.fetch)), rr)
	fmt.Printf("| in process: verify (plan) | %s | | %d |\n", fmtDur(median(p.verify)), rr)
	fmt.Printf("| in process: merge commit | %s | | %d |\n", fmtDur(median(p.merge)), rr)
	fmt.Printf("| in process: cache (index + quarantine) | %s | | %d |\n", fmtDur(median(p.cache)), rr)
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at the end: %s\n", strings.TrimSpace(string(load)))
	if *work == "" {
		os.RemoveAll(bare)
		os.RemoveAll(base)
	}
	return true
}

// pfRemote builds n checkpoints over -devices devices (build), a bare
// remote holding the code branch and the memory branch, and a clone of the
// code branch alone (no memory branch, nothing of it fetched). It returns
// the clone and
// the remote; with -work, both are kept and reused by the next run.
func pfRemote(dir string, n int) (base, bare string) {
	bare = filepath.Join(dir, fmt.Sprintf("pf-remote-%d-%d.git", n, *devices))
	base = filepath.Join(dir, fmt.Sprintf("pf-base-%d-%d", n, *devices))
	done := filepath.Join(dir, fmt.Sprintf("pf-built-%d-%d", n, *devices))
	if _, err := os.Stat(done); err == nil {
		return base, bare
	}
	src, _ := build(dir, gitstore.LayoutCtxV1, n)
	os.RemoveAll(bare)
	run(dir, "git", "clone", "-q", "--bare", "--no-local", src, bare)
	run(bare, "git", "fetch", "-q", src, "+refs/heads/ghyll/memory:refs/heads/ghyll/memory")
	run(bare, "git", "repack", "-adq")
	os.RemoveAll(src)
	os.RemoveAll(base)
	run(dir, "git", "clone", "-q", "--no-local", "--single-branch", "-b", "main", bare, base)
	if out := output(base, "git", "for-each-ref", "refs/remotes/origin/ghyll"); out != "" {
		fatal(fmt.Errorf("pullfetch: the base clone already tracks the memory branch: %s", out))
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		fatal(err)
	}
	return base, bare
}

// pfInCopy runs measure in a fresh copy of the clean clone, then removes it.
func pfInCopy(dir, base, what string, i int, measure func(repo string) pfRun) pfRun {
	d := pfCopy(dir, base, what, i)
	defer os.RemoveAll(d)
	return measure(d)
}

// pfCopy copies the clean clone for one measurement.
func pfCopy(dir, base, what string, i int) string {
	d := filepath.Join(dir, fmt.Sprintf("pf-%s-%d", what, i))
	os.RemoveAll(d)
	run(dir, "cp", "-a", base, d)
	return d
}

// pfFetch times the floor: git fetch of the memory branch into its
// tracking ref, with the arguments sync.Fetch uses.
func pfFetch(repo string) pfRun {
	return pfTime(repo, "git", "-c", "core.bigFileThreshold="+strconv.Itoa(gitstore.MaxBlob), "fetch", "--no-tags", "--no-write-fetch-head",
		"--no-recurse-submodules", "--quiet", "origin", "+"+gitstore.BranchRef+":"+ctxsync.TrackingRef("origin"))
}

// pfPull times `git ctx pull -q` (of the git-ctx binary bin) and checks it
// merged all n checkpoints.
func pfPull(bin, repo string, n int) pfRun {
	r := pfTime(repo, bin, "pull", "-q") // exit 0: nothing rejected
	files := strings.Count(output(repo, "git", "ls-tree", "-r", "--name-only", gitstore.BranchRef), "/checkpoints/")
	if files != n {
		fatal(fmt.Errorf("pullfetch: after the pull of %d checkpoints the branch holds %d checkpoint files", n, files))
	}
	return r
}

// pfTime runs one command in repo: its wall time and CPU.
func pfTime(repo, name string, args ...string) pfRun {
	cmd := exec.Command(name, args...)
	cmd.Dir = repo
	t := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t)
	if err != nil {
		fatal(fmt.Errorf("%s %v: %v\n%s", name, args, err, out))
	}
	var cpu time.Duration
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return pfRun{wall: wall, cpu: cpu}
}

func pfStartProfile() {
	f, err := os.Create(*pfProfile)
	if err != nil {
		fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fatal(err)
	}
}

func pfMedians(rs []pfRun) (wall, cpu time.Duration) {
	var ws, cs []time.Duration
	for _, r := range rs {
		ws, cs = append(ws, r.wall), append(cs, r.cpu)
	}
	return median(ws), median(cs)
}

func pfMedian(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func pfList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}
