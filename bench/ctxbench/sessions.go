package main

// The session benchmark (-sessions): CPU of each `git ctx session` verb as
// a whole command (children's rusage of the benchmark process) against its
// floor, the scrypt derivations the verb cannot avoid, run as a command
// runs them: that many derivations at the same work factor through the same
// code, in a fresh process (its memory comes from the kernel as a
// command's does), measured in the same run (-scrypt-child). The number of
// derivations is counted in process through session.ScryptOps.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/sessions"
	"github.com/git-ctx/git-ctx/sessions/agents"
)

var (
	sessBench = flag.Bool("sessions", false, "run only the session benchmark (push, pull, list, status against the scrypt floor)")
	sessSizes = flag.String("session-sizes", "1024,67108864", "session transcript sizes in bytes for -sessions")
	sessWF    = flag.Int("session-wf", session.DefaultWorkFactor, "scrypt work factor (logN) for -sessions")
	sessChild = flag.Int("scrypt-child", 0, "(internal, -sessions' floor) run this many scrypt derivations at -session-wf in this process, print their CPU in nanoseconds and exit")
)

const benchPass = "correct horse battery staple"

// cpuTimes is one measured command: CPU (user+system) and wall time.
type cpuTimes struct{ cpu, wall time.Duration }

func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timedCmd runs the binary in repo and returns its CPU (with everything it
// waited for) and wall time.
func timedCmd(repo string, args ...string) cpuTimes {
	cmd := exec.Command(*binary, args...)
	cmd.Dir = repo
	c0, t0 := childrenCPU(), time.Now()
	out, err := cmd.CombinedOutput()
	ct := cpuTimes{cpu: childrenCPU() - c0, wall: time.Since(t0)}
	if err != nil {
		fatal(fmt.Errorf("git-ctx %v: %v\n%s", args, err, out))
	}
	return ct
}

// scryptDerive runs n derivations at work factor wf through
// session.Encrypt (the code every verb's derivations run) and returns
// their CPU, page faults for the working set included.
func scryptDerive(wf, n int) time.Duration {
	c0 := selfCPU()
	for range n {
		w, err := session.Encrypt(io.Discard, []byte(benchPass), wf, session.AllowWeak())
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			fatal(err)
		}
	}
	return selfCPU() - c0
}

// scryptChildIfAsked is the -scrypt-child process: it prints the CPU of
// its derivations and reports whether it ran.
func scryptChildIfAsked() bool {
	if *sessChild <= 0 {
		return false
	}
	fmt.Println(int64(scryptDerive(*sessWF, *sessChild)))
	return true
}

// scryptFloor is the median CPU of n derivations at work factor wf in a
// fresh process (this benchmark re-executed with -scrypt-child), over
// runs processes.
func scryptFloor(wf, n, runs int) time.Duration {
	ds := make([]time.Duration, runs)
	for i := range ds {
		out, err := exec.Command("/proc/self/exe", "-scrypt-child", fmt.Sprint(n), "-session-wf", fmt.Sprint(wf)).Output()
		if err != nil {
			fatal(fmt.Errorf("scrypt floor: %v", err))
		}
		var ns int64
		if _, err := fmt.Sscan(string(out), &ns); err != nil {
			fatal(fmt.Errorf("scrypt floor: %q: %v", out, err))
		}
		ds[i] = time.Duration(ns)
	}
	return median(ds)
}

// benchSessions prints one table row per verb and size.
func benchSessions(dir string) {
	os.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	os.Setenv("GIT_CTX_QUIET", "1")
	rr := max(3, *runs/5)
	start := measureCmd(rr, dir, "version")
	floors := map[int64]time.Duration{}
	floor := func(ops int64) time.Duration { // the floor of a verb that derives ops times
		if _, ok := floors[ops]; !ok && ops > 0 {
			floors[ops] = scryptFloor(*sessWF, int(ops), rr)
		}
		return floors[ops]
	}
	one := floor(1)
	scryptDerive(*sessWF, 1)         // this process's first: its memory comes from the kernel
	warm := scryptDerive(*sessWF, 1) // the next reuses it, resident
	var load [3]float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(string(b), &load[0], &load[1], &load[2])
	}
	fmt.Printf("\nSessions: scrypt work factor %d; one derivation in a fresh process %s CPU (median of %d; a derivation whose memory is already resident: %s); `git-ctx version` %s CPU; load average %.2f %.2f %.2f\n\n",
		*sessWF, fmtDur(one), rr, fmtDur(warm), fmtDur(start.cpu), load[0], load[1], load[2])
	fmt.Printf("| command | session | scrypt ops | floor (as many derivations in a fresh process) | CPU | CPU / floor | wall | runs |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range sizeList(*sessSizes) {
		benchSessionSize(dir, n, rr, floor, start)
	}
}

func measureCmd(rr int, repo string, args ...string) cpuTimes {
	cs, ws := make([]time.Duration, rr), make([]time.Duration, rr)
	for i := range cs {
		ct := timedCmd(repo, args...)
		cs[i], ws[i] = ct.cpu, ct.wall
	}
	return cpuTimes{median(cs), median(ws)}
}

// sessionFixture is one repository with one Claude Code session of about
// size bytes and a directory store.
type sessionFixture struct {
	repo, transcript, stateDir string
	args                       []string // store and passphrase arguments
	line                       string
}

func newSessionFixture(dir string, size int) *sessionFixture {
	repo := filepath.Join(dir, fmt.Sprintf("sess-%d", size))
	os.RemoveAll(repo)
	run(dir, "git", "init", "-q", repo)
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "init")
	run(repo, "git", "config", "ctx.repoId", fmt.Sprintf("sess-bench-%d", size))
	real, err := filepath.EvalSymlinks(repo)
	if err != nil {
		fatal(err)
	}
	store := filepath.Join(dir, fmt.Sprintf("sess-%d-store", size))
	os.RemoveAll(store)
	pass := filepath.Join(dir, "sess-pass")
	os.WriteFile(pass, []byte(benchPass+"\n"), 0o600)
	f := &sessionFixture{repo: repo, stateDir: filepath.Join(repo, ".git", "ctx", "sessions"),
		args: []string{"--store", "file://" + store, "--passphrase-file", pass}}
	f.transcript = filepath.Join(dir, "claude", "projects", agents.EncodeProjectKey(real), "0b5e2c1a-5f0e-4c7e-9d3a-2f1e0c9b8a7d.jsonl")
	os.MkdirAll(filepath.Dir(f.transcript), 0o700)
	f.line = fmt.Sprintf(`{"type":"user","cwd":%q,"message":{"content":[{"type":"tool_use","input":{"file_path":%q}}]},"text":"%s"}`+"\n",
		real, filepath.Join(real, "a.go"), strings.Repeat("x", 800))
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(f.line)
	}
	if err := os.WriteFile(f.transcript, []byte(b.String()), 0o600); err != nil {
		fatal(err)
	}
	return f
}

// touch appends one line so that the next push has something to push.
func (f *sessionFixture) touch() {
	fh, err := os.OpenFile(f.transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		fatal(err)
	}
	fh.WriteString(f.line)
	fh.Close()
}

// forget removes the local copy and what this machine remembers of it, so
// that a pull downloads and restores it.
func (f *sessionFixture) forget() {
	os.RemoveAll(filepath.Join(f.stateDir, "state"))
	os.Remove(f.transcript)
}

func benchSessionSize(dir string, size, rr int, floor func(ops int64) time.Duration, start cpuTimes) {
	f := newSessionFixture(dir, size)
	wf := fmt.Sprint(*sessWF)
	timedCmd(f.repo, append([]string{"session", "push", "--work-factor", wf}, f.args...)...) // makes the profile
	ops := countSessionOps(f)
	verbs := []struct {
		name    string
		prepare func()
		args    []string
	}{
		{"session push", f.touch, append([]string{"session", "push", "--work-factor", wf}, f.args...)},
		{"session pull", f.forget, append([]string{"session", "pull"}, f.args...)},
		{"session list", nil, append([]string{"session", "list"}, f.args...)},
		{"session status", nil, append([]string{"session", "status"}, f.args...)},
	}
	for _, v := range verbs {
		n := ops[v.name]
		// A verb that derives nothing costs a few milliseconds over the
		// process start, which three runs cannot tell from noise: it gets
		// the harness's full run count, each run beside one of `version`
		// (its floor), alternating which goes first.
		vr, base := rr, start
		if n == 0 {
			vr = max(rr, *runs)
		}
		cs, ws, vs := make([]time.Duration, vr), make([]time.Duration, vr), make([]time.Duration, vr)
		for i := range cs {
			if v.prepare != nil {
				v.prepare()
			}
			if n == 0 && i%2 == 0 {
				vs[i] = timedCmd(f.repo, "version").cpu
			}
			ct := timedCmd(f.repo, v.args...)
			cs[i], ws[i] = ct.cpu, ct.wall
			if n == 0 && i%2 == 1 {
				vs[i] = timedCmd(f.repo, "version").cpu
			}
		}
		if n == 0 {
			base = cpuTimes{cpu: median(vs)}
		}
		fl := floor(n)
		ratio := "—"
		if n > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(median(cs))/float64(fl))
		} else if base.cpu > 0 {
			ratio = fmt.Sprintf("%.2f× `version` (%s, interleaved)", float64(median(cs))/float64(base.cpu), fmtDur(base.cpu))
		}
		fmt.Printf("| %s | %s | %d | %s | %s | %s | %s | %d |\n", v.name, sizeLabel(size), n, fmtDur(fl), fmtDur(median(cs)), ratio, fmtDur(median(ws)), vr)
		id := "6." + strings.ReplaceAll(v.name, " ", "-") + "@" + sizeLabel(size)
		if n > 0 {
			brRecord(id, median(cs).Seconds(), fl.Seconds(), fmt.Sprintf("%d scrypt ops", n))
		} else {
			brRecord(id, median(cs).Seconds(), base.cpu.Seconds(), fmt.Sprintf("no scrypt op; median of %d, interleaved with `version`", vr))
		}
	}
}

func sizeLabel(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", max(1, n>>10))
}

// countSessionOps runs each verb once in process through the sessions
// package (the same code the command runs) and counts its derivations.
func countSessionOps(f *sessionFixture) map[string]int64 {
	ctx := context.Background()
	open := func() *sessions.Client {
		s, err := sessions.Open(ctx, f.repo, sessions.SetupOptions{Store: f.args[1]})
		if err != nil {
			fatal(err)
		}
		c := s.Client
		c.Passphrase, c.WorkFactor, c.AllowWeak = []byte(benchPass), *sessWF, *sessWF < session.DefaultWorkFactor
		return c
	}
	count := func(f func(c *sessions.Client) error) int64 {
		c := open()
		before := session.ScryptOps()
		if err := f(c); err != nil {
			fatal(err)
		}
		return session.ScryptOps() - before
	}
	ops := map[string]int64{}
	f.touch()
	ops["session push"] = count(func(c *sessions.Client) error { _, err := c.Push(ctx, "", ""); return err })
	f.forget()
	ops["session pull"] = count(func(c *sessions.Client) error { _, err := c.Pull(ctx, sessions.PullOptions{}); return err })
	ops["session list"] = count(func(c *sessions.Client) error { _, err := c.List(ctx); return err })
	ops["session status"] = count(func(c *sessions.Client) error { _, err := c.Status(ctx); return err })
	return ops
}
