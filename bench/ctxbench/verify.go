package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
)

var verifySizes = flag.String("verify", "", "only the verify/reindex benchmark, at these branch sizes (e.g. 10000,100000); the branches are kept in -work and reused")

// benchVerify measures `git ctx verify` and `git ctx reindex` as whole
// commands (wall time and the child's max RSS) and a fresh clone's first
// cache build, beside two floors measured in the same run: ed25519
// verification of the same number of signatures alone on every core, and
// the max RSS of `git ctx version`. It reports whether it ran.
func benchVerify(dir string) bool {
	if *verifySizes == "" {
		return false
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at start: %s\n", strings.TrimSpace(string(load)))
	fmt.Printf("| operation | checkpoints | median | rate | max RSS | runs |\n|---|---:|---:|---:|---:|---:|\n")
	rr := max(3, *runs/5)
	sizes := sizeList(*verifySizes)
	built := false
	for _, n := range sizes {
		built = reuseBuild(dir, n) || built
	}
	if built && *work != "" { // (a temporary -work dir would be built again)
		// A child's max RSS can include its parent's at the fork: measure
		// from a fresh, small harness process.
		if err := syscall.Exec("/proc/self/exe", os.Args, os.Environ()); err != nil {
			fatal(err)
		}
	}
	for _, n := range sizes {
		repo := filepath.Join(dir, fmt.Sprintf("%s-%d", gitstore.LayoutCtxV1, n))
		var floorCPU []time.Duration
		floor := measure(rr, func() {
			c0 := selfCPU()
			ed25519Floor(n)
			floorCPU = append(floorCPU, selfCPU()-c0)
		})
		fcpu := median(floorCPU)
		fmt.Printf("| floor: ed25519 verify of %d signatures alone, %d goroutines | %d | %s (CPU %s) | %.0f /s | | %d |\n",
			n, runtime.GOMAXPROCS(0), n, fmtDur(floor), fmtDur(fcpu), float64(n)/floor.Seconds(), rr)
		idle := childRun(rr, repo, "version")
		fmt.Printf("| floor: `git ctx version` | %d | %s | | %.1f MiB | %d |\n", n, fmtDur(idle.wall), idle.rssMiB, rr)
		v := childRun(rr, repo, "verify")
		fmt.Printf("| `git ctx verify` (whole branch) | %d | %s (CPU %s) | %.0f checkpoints/s (%.2f× the floor's time, %.2f× its CPU) | %.1f MiB | %d |\n",
			n, fmtDur(v.wall), fmtDur(v.cpu), float64(n)/v.wall.Seconds(), v.wall.Seconds()/floor.Seconds(), v.cpu.Seconds()/fcpu.Seconds(), v.rssMiB, rr)
		r := childRun(rr, repo, "reindex")
		fmt.Printf("| `git ctx reindex` (full cache rebuild) | %d | %s (CPU %s) | %.0f checkpoints/s | %.1f MiB | %d |\n",
			n, fmtDur(r.wall), fmtDur(r.cpu), float64(n)/r.wall.Seconds(), r.rssMiB, rr)
		cacheDir := filepath.Join(repo, ".git", "ctx")
		first := childRunPrepared(rr, repo, func() { os.RemoveAll(cacheDir) }, "log", "-n", "1")
		fmt.Printf("| first cache build (`git ctx log -n 1`, no cache) | %d | %s (CPU %s) | %.0f checkpoints/s | %.1f MiB | %d |\n",
			n, fmtDur(first.wall), fmtDur(first.cpu), float64(n)/first.wall.Seconds(), first.rssMiB, rr)
		inst := "@" + brSize(n)
		brRecord("4.verify"+inst, float64(n)/v.wall.Seconds(), float64(n)/floor.Seconds(),
			fmt.Sprintf("CPU %.2f× the floor's", v.cpu.Seconds()/fcpu.Seconds()))
		brRecord("4.reindex"+inst, r.wall.Seconds(), floor.Seconds(), "CPU "+fmtDur(r.cpu))
		brRecord("4.rss-verify"+inst, v.rssMiB, idle.rssMiB, "")
		brRecord("4.rss-reindex"+inst, r.rssMiB, idle.rssMiB, "")
		brRecord("4.rss-first"+inst, first.rssMiB, idle.rssMiB, "wall "+fmtDur(first.wall))
		load, _ = os.ReadFile("/proc/loadavg")
		fmt.Printf("| load average after %d | | %s | | | |\n", n, strings.TrimSpace(string(load)))
	}
	return true
}

// reuseBuild makes the ctx-v1 branch of n checkpoints in dir (build)
// unless it was made by an earlier run (marked done), and reports whether
// it built it.
func reuseBuild(dir string, n int) bool {
	done := filepath.Join(dir, fmt.Sprintf("built-%d", n))
	if _, err := os.Stat(done); err == nil {
		return false
	}
	t0 := time.Now()
	build(dir, gitstore.LayoutCtxV1, n)
	fmt.Fprintf(os.Stderr, "built %d checkpoints in %s\n", n, time.Since(t0).Round(time.Millisecond))
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		fatal(err)
	}
	return true
}

// ed25519Floor verifies n signatures over 64-byte messages (the size of a
// record's signed hash) on GOMAXPROCS goroutines: what signature checking
// alone costs.
func ed25519Floor(n int) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	pub := key.Public().(ed25519.PublicKey)
	msg := make([]byte, 64)
	sig := ed25519.Sign(key, msg)
	workers := runtime.GOMAXPROCS(0)
	var wg gosync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := make([]byte, 64)
			copy(m, msg)
			for i := w; i < n; i += workers {
				m[0] = byte(i)
				_ = sha256.Sum256(m) // a record's hashing of its signed input
				if !ed25519.Verify(pub, msg, sig) {
					fatal(fmt.Errorf("floor: signature does not verify"))
				}
			}
		}()
	}
	wg.Wait()
}

type childStats struct {
	wall   time.Duration
	cpu    time.Duration // median user+system time of the child
	rssMiB float64       // the largest max RSS of the runs
}

func childRun(runs int, repo string, args ...string) childStats {
	return childRunPrepared(runs, repo, nil, args...)
}

// childRunPrepared runs `git-ctx args` runs times (prepare before each, not
// timed): the median wall time and the largest max RSS of the child.
func childRunPrepared(runs int, repo string, prepare func(), args ...string) childStats {
	ds := make([]time.Duration, runs)
	cpus := make([]time.Duration, runs)
	var rss int64
	for i := range ds {
		if prepare != nil {
			prepare()
		}
		cmd := exec.Command(*binary, args...)
		cmd.Dir = repo
		t := time.Now()
		out, err := cmd.CombinedOutput()
		ds[i] = time.Since(t)
		if err != nil {
			fatal(fmt.Errorf("git-ctx %v: %v\n%s", args, err, out))
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, ru.Maxrss) // KiB on Linux
			cpus[i] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return childStats{wall: median(ds), cpu: median(cpus), rssMiB: float64(rss) / 1024}
}
