package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
)

// -hookspool: the branch sizes of the spooled commit-hook benchmark
// (issue 18, "invisible hook").
var hookSpoolSizes = flag.String("hookspool", "", "comma-separated branch sizes for the spooled commit-hook benchmark: git commit without the hook, with the spooling hook and with the synchronous one, interleaved (empty: skip)")

// hookSample is one timed `git commit`.
type hookSample struct{ wall, cpu time.Duration }

// benchHookSpools runs benchHookSpool for each size of -hookspool.
func benchHookSpools(dir string) {
	for _, n := range sizeList(*hookSpoolSizes) {
		benchHookSpool(dir, n)
	}
}

// benchHookSpool: on a branch of n checkpoints, `git commit` with no hook
// (core.hooksPath at an empty directory: the floor), with the post-commit
// stub (spools, starts the drainer detached) and with GIT_CTX_HOOK_SYNC=1
// (the stub runs git-ctx and waits: what the hook cost before the spool),
// and with GIT_CTX_HOOK_DEFER=1 (the stub spools but starts no drainer:
// what the stub itself costs; that commit is drained after, untimed),
// interleaved (with a post-commit that only exits: the cost of git running
// any hook) so load changes hit all four alike. Wall time and the CPU of
// git and every process it waited for (rusage from wait4: the detached
// drainer is not among them, and is reported as the time until the
// checkpoint is on the branch). Each hooked commit waits for its drain
// before the next sample.
func benchHookSpool(dir string, n int) {
	repo, _ := build(dir, gitstore.LayoutCtxV1, n)
	os.Setenv("PATH", filepath.Dir(*binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	empty := filepath.Join(dir, "no-hooks")
	os.MkdirAll(empty, 0o755)
	gitctx(repo, "hooks", "install")
	i := 0
	commit := func(env []string, args ...string) hookSample {
		i++
		os.WriteFile(filepath.Join(repo, "f.txt"), []byte(fmt.Sprint(i)), 0o644)
		run(repo, "git", "add", "f.txt")
		cmd := exec.Command("git", append(args, "commit", "-q", "-m", fmt.Sprintf("change %d", i))...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), env...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			fatal(fmt.Errorf("git commit: %v\n%s", err, out))
		}
		wall := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return hookSample{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	}
	memTip := func() string { return output(repo, "git", "rev-parse", "refs/heads/ghyll/memory") }
	spool := filepath.Join(repo, ".git", "ctx", "spool")
	drained := func() bool {
		for _, f := range []string{"queue", "queue.draining"} {
			if _, err := os.Stat(filepath.Join(spool, f)); err == nil {
				return false
			}
		}
		return true
	}
	// waitDrained: the time from start until the checkpoint is on the
	// branch (the tip moved) and the spool is empty.
	waitDrained := func(start time.Time, before string) time.Duration {
		deadline := start.Add(60 * time.Second)
		for memTip() == before {
			if time.Now().After(deadline) {
				fatal(fmt.Errorf("the spooled commit was not drained within 60 s"))
			}
			time.Sleep(2 * time.Millisecond)
		}
		onBranch := time.Since(start)
		for !drained() && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // the drainer exits
		return onBranch
	}
	none := []string{"-c", "core.hooksPath=" + empty}
	// The floor of any hook: git running a post-commit that does nothing.
	trivial := filepath.Join(dir, "trivial-hooks")
	os.MkdirAll(trivial, 0o755)
	os.WriteFile(filepath.Join(trivial, "post-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	noop := []string{"-c", "core.hooksPath=" + trivial}
	commit(nil, none...) // warm up
	before, start := memTip(), time.Now()
	commit(nil)
	waitDrained(start, before)
	var floor, empty1, spooled, deferred, sync []hookSample
	var toBranch []time.Duration
	for r := 0; r < *runs; r++ {
		floor = append(floor, commit(nil, none...))
		empty1 = append(empty1, commit(nil, noop...))
		before, start := memTip(), time.Now()
		spooled = append(spooled, commit(nil))
		toBranch = append(toBranch, waitDrained(start, before))
		// The stub without starting the drainer (what the stub itself
		// costs); its commit is then drained here, outside the timing.
		before = memTip()
		deferred = append(deferred, commit([]string{"GIT_CTX_HOOK_DEFER=1"}))
		gitctx(repo, "hook", "drain")
		waitDrained(time.Now(), before)
		sync = append(sync, commit([]string{"GIT_CTX_HOOK_SYNC=1"}))
	}
	load, _ := os.ReadFile("/proc/loadavg")
	med := func(s []hookSample, cpu bool) time.Duration {
		ds := make([]time.Duration, len(s))
		for i, x := range s {
			ds[i] = x.wall
			if cpu {
				ds[i] = x.cpu
			}
		}
		return median(ds)
	}
	l := gitstore.LayoutCtxV1
	for _, v := range []struct {
		name string
		s    []hookSample
	}{{"no hook (floor)", floor}, {"a post-commit hook that only exits (`#!/bin/sh`, `exit 0`)", empty1}, {"spooling post-commit hook", spooled}, {"spooling post-commit hook, the drainer not started (GIT_CTX_HOOK_DEFER=1)", deferred}, {"synchronous hook (GIT_CTX_HOOK_SYNC=1, the pre-spool cost)", sync}} {
		fw, fc := med(floor, false), med(floor, true)
		w, c := med(v.s, false), med(v.s, true)
		rowText("`git commit`, "+v.name+": wall / CPU (ratio to floor)", l, n,
			fmt.Sprintf("%s / %s (%.2f× / %.2f×)", fmtDur(w), fmtDur(c), w.Seconds()/fw.Seconds(), c.Seconds()/fc.Seconds()), *runs)
	}
	inst := "@" + brSize(n)
	brRecord("1.hook-wall"+inst, med(spooled, false).Seconds(), med(floor, false).Seconds(),
		fmt.Sprintf("a hook that only exits: %.2f×; the stub without starting the drainer: %.2f×",
			med(empty1, false).Seconds()/med(floor, false).Seconds(), med(deferred, false).Seconds()/med(floor, false).Seconds()))
	brRecord("1.hook-cpu"+inst, med(spooled, true).Seconds(), med(floor, true).Seconds(),
		fmt.Sprintf("a hook that only exits: %.2f×; the stub without starting the drainer: %.2f×",
			med(empty1, true).Seconds()/med(floor, true).Seconds(), med(deferred, true).Seconds()/med(floor, true).Seconds()))
	row("spooled commit: start of `git commit` until its checkpoint is on the branch", l, n, median(toBranch), *runs)
	rowText("load average during the hook benchmark", l, n, strings.TrimSpace(string(load)), *runs)
}
