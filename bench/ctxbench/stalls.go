package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
)

var (
	stallsN    = flag.Int("stalls", 0, "consecutive appends per mode in the stall benchmark, crossing ctx.packEvery (default 256) several times (0: skip)")
	stallsSize = flag.Int("stallsize", 10000, "checkpoints on the branch in the stall benchmark")
)

// benchStallsIfAsked runs benchStalls when -stalls is set.
func benchStallsIfAsked(dir string) {
	if *stallsN > 0 {
		benchStalls(dir, *stallsSize, *stallsN)
	}
}

// dist is the distribution of one series of timings.
type dist struct {
	median, p99, max time.Duration
	over250          int
}

func distOf(ds []time.Duration) dist {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	d := dist{median: s[len(s)/2], p99: s[(len(s)*99+99)/100-1], max: s[len(s)-1]}
	for _, v := range s {
		if v > 250*time.Millisecond {
			d.over250++
		}
	}
	return d
}

func stallRow(op string, n, runs int, d dist) {
	fmt.Printf("| %s | ctx-v1 | %d | median %s, p99 %s (%.2f× median), max %s, %d over 250 ms | %d |\n",
		op, n, fmtDur(d.median), fmtDur(d.p99), float64(d.p99)/float64(d.median), fmtDur(d.max), d.over250, runs)
}

// waitRepackIdle waits until no background repack holds repo's repack lock
// (so one series' repacks do not run into the next series).
func waitRepackIdle(repo string) {
	f, err := os.OpenFile(filepath.Join(repo, ".git", "ctx", "repack.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// series times f n times.
func series(n int, f func(i int)) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t := time.Now()
		f(i)
		ds[i] = time.Since(t)
	}
	return ds
}

// benchStalls: n consecutive single appends on a branch of size
// checkpoints with the default ctx.packEvery, in process, as `git ctx
// checkpoint` commands and as `git commit`s with the post-commit hook; the
// distribution (median, p99, max) shows whether the appends that complete a
// batch stall. Floors in the same run: `git-ctx version` and `git commit`
// without the hook.
func benchStalls(dir string, size, n int) {
	ctx := context.Background()
	repo, m := build(dir, gitstore.LayoutCtxV1, size)
	os.Setenv("PATH", filepath.Dir(*binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	loadavg, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stderr, "stalls: %d appends per series at %d checkpoints, load %s", n, size, loadavg)

	inproc := series(n, func(i int) {
		if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: fmt.Sprintf("stall check append %d", i)}); err != nil {
			fatal(err)
		}
	})
	waitRepackIdle(repo)
	stallRow("single append in process (every append, packing included)", size, n, distOf(inproc))

	version := series(min(n, 200), func(int) { gitctx(repo, "version") })
	stallRow("floor: `git-ctx version`", size, len(version), distOf(version))
	cmds := series(n, func(i int) { gitctx(repo, "checkpoint", "-m", fmt.Sprintf("stall check command %d", i)) })
	waitRepackIdle(repo)
	stallRow("`git ctx checkpoint` (whole command)", size, n, distOf(cmds))

	commit := func(i int) {
		os.WriteFile(filepath.Join(repo, "f.txt"), []byte(fmt.Sprint(i)), 0o644)
		run(repo, "git", "add", "f.txt")
		run(repo, "git", "commit", "-q", "-m", fmt.Sprintf("change %d", i))
	}
	plain := series(min(n, 200), commit)
	stallRow("floor: `git commit` without hooks", size, len(plain), distOf(plain))
	gitctx(repo, "hooks", "install")
	beside := make([]commitSurroundings, n)
	hooked := series(n, func(i int) {
		io0 := iowaitTicks()
		commit(n + i)
		beside[i] = commitSurroundings{repack: repackRunning(), iowait: iowaitTicks() - io0}
	})
	waitRepackIdle(repo)
	stallRow("`git commit` with the post-commit hook", size, n, distOf(hooked))
	slowest := slowestCommits(hooked, beside, 3)
	fmt.Printf("\nThe slowest hooked commits: %s.\n\n", slowest)
	hd, pd := distOf(hooked), distOf(plain)
	inst := "@" + brSize(size)
	brRecord("2.stall-p99"+inst, float64(hd.p99)/float64(hd.median), float64(pd.p99)/float64(pd.median),
		fmt.Sprintf("%d commits, median %s", n, fmtDur(hd.median)))
	brRecord("2.stall-max"+inst, hd.max.Seconds(), pd.max.Seconds(), fmt.Sprintf("%d commits, %d over 250 ms; the slowest: %s", n, hd.over250, slowest))
	loadavg, _ = os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stderr, "stalls: done, load %s", loadavg)
}

// commitSurroundings is what ran beside one timed commit: whether a
// `git repack` was running when the commit ended, and the machine's I/O
// wait (all CPUs, in clock ticks) during it.
type commitSurroundings struct {
	repack bool
	iowait int64
}

// repackRunning reports whether a `git repack` process runs now. It reads
// /proc rather than trying the repack lock, which would race with the
// drainer taking it.
func repackRunning() bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, args, _ := strings.Cut(string(cmdline), "\x00")
		if strings.HasPrefix(filepath.Base(argv0), "git") && strings.Contains(args, "repack\x00") {
			return true
		}
	}
	return false
}

// iowaitTicks is the machine's I/O wait so far, all CPUs, in clock ticks
// (/proc/stat; 0 where it cannot be read).
func iowaitTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	var user, nice, system, idle, iowait int64
	if _, err := fmt.Sscanf(string(b), "cpu %d %d %d %d %d", &user, &nice, &system, &idle, &iowait); err != nil {
		return 0
	}
	return iowait
}

// slowestCommits describes the k slowest of ds with what ran beside each:
// "566.4 ms (commit 712, beside a repack, I/O wait 3 ticks), …".
func slowestCommits(ds []time.Duration, beside []commitSurroundings, k int) string {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ds[idx[a]] > ds[idx[b]] })
	var parts []string
	for _, i := range idx[:min(k, len(idx))] {
		where := "no repack beside it"
		if beside[i].repack {
			where = "beside a repack"
		}
		parts = append(parts, fmt.Sprintf("%s (commit %d, %s, I/O wait %d ticks)", fmtDur(ds[i]), i+1, where, beside[i].iowait))
	}
	return strings.Join(parts, ", ")
}
