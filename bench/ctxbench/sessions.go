package main

// The session benchmark (-sessions): CPU of each `git ctx session` verb as
// a whole command (children's rusage of the benchmark process) against its
// floor, the work the verb cannot avoid, run as a command runs it: the
// scrypt derivations (that many at the same work factor through the same
// code, in a fresh process whose memory comes from the kernel as a
// command's does) and, for push and pull, the payload once (read the
// session, hash it once with SHA-256, encrypt or decrypt it through the
// same age stream, write the result), all measured in the same run
// (-scrypt-child, -payload-child-*). The number of derivations is counted
// in process through session.ScryptOps.

import (
	"bufio"
	"context"
	"crypto/sha256"
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

	touchChild     = flag.Int("touch-child", 0, "(internal, -sessions' first-touch floor) map this many bytes, advise them for huge pages, touch each 4 KiB page once, print the CPU, the system CPU in nanoseconds and the page faults, and exit")
	payloadIn      = flag.String("payload-child-in", "", "(internal, -sessions' payload floor) encrypt (or, with -payload-child-decrypt, decrypt) this file once through session.Encrypt at work factor 1 (scrypt of 2 blocks), hashing it once with SHA-256, print the CPU in nanoseconds and exit")
	payloadOut     = flag.String("payload-child-out", "", "(internal, with -payload-child-in) where the payload pass writes its result")
	payloadDecrypt = flag.Bool("payload-child-decrypt", false, "(internal, with -payload-child-in) decrypt the file instead of encrypting it")
	payloadRoot    = flag.String("payload-child-root", "", "(internal, with -payload-child-in) also rewrite the session's paths once on the way (normalise when encrypting, expand when decrypting), with this directory as the project root")
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

// touchChildIfAsked is the -touch-child process: it prints the CPU, the
// system CPU and the page faults of one first touch and reports whether it
// ran.
func touchChildIfAsked() bool {
	if *touchChild <= 0 {
		return false
	}
	cpu, sys, faults, err := firstTouch(*touchChild)
	if err != nil {
		fatal(err)
	}
	fmt.Println(int64(cpu), int64(sys), faults)
	return true
}

// touchSpread is the first touch of a derivation's working set (size
// bytes) in runs fresh processes, each started after idle (none: one
// after the other): the median and the largest CPU, and the largest
// system CPU. Every fresh derivation pays this touch inside the scrypt
// floor and inside the command alike, so its spread is noise both carry,
// not work either does. On a VM whose balloon reports free memory to the
// host (after 2 s, in 2 MiB blocks), a touch after an idle pause meets
// memory the host took back.
func touchSpread(size, runs int, idle time.Duration) (med, most, mostSys time.Duration) {
	cs := make([]time.Duration, runs)
	for i := range cs {
		time.Sleep(idle)
		var cpu, sys, faults int64
		childNumbers("first-touch floor", []*int64{&cpu, &sys, &faults}, "-touch-child", fmt.Sprint(size))
		cs[i] = time.Duration(cpu)
		most, mostSys = max(most, cs[i]), max(mostSys, time.Duration(sys))
	}
	return median(cs), most, mostSys
}

// payloadChildIfAsked is the -payload-child-in process: it prints the CPU
// of its payload pass and reports whether it ran.
func payloadChildIfAsked() bool {
	if *payloadIn == "" {
		return false
	}
	fmt.Println(int64(payloadPass(*payloadIn, *payloadOut, *payloadRoot, *payloadDecrypt)))
	return true
}

// payloadPass is the payload's share of a push's or pull's floor: in
// encrypted to out once through session.Encrypt (decrypted through
// session.Decrypt when decrypt is set), hashed once with SHA-256 on the
// way and, when root is set, its paths rewritten on the way by the
// session's own normaliser (expander when decrypting) for a project at
// root (as session files require), in the passes the format needs in
// bounded memory (framedBody); it returns its CPU. The work factor is 1
// (scrypt of two blocks, a few microseconds), so that no derivation is
// counted twice: they are the floor's other part. A command does more
// (the TAR framing, a second check of the hash while encrypting, the hash
// of the local file for its sync state, its store's temporary file and
// rename), none of it counted here.
func payloadPass(in, out, root string, decrypt bool) time.Duration {
	pm := &session.PathMap{Home: os.Getenv("HOME"), Projects: []session.Root{{ID: "bench", Path: root}}}
	c0 := selfCPU()
	rewrite := func(dst io.Writer, src io.Reader) error {
		if root == "" {
			_, err := io.Copy(dst, src)
			return err
		}
		rw, err := session.NewNormalizer("claude", pm)
		if decrypt {
			rw, err = session.NewExpander("claude", pm)
		}
		if err != nil {
			return err
		}
		return session.TransformRecords(dst, src, rw.Line)
	}
	src, err := os.Open(in)
	if err != nil {
		fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		fatal(err)
	}
	h := sha256.New()
	if decrypt {
		r, err := session.Decrypt(src, []byte(benchPass))
		if err == nil {
			err = rewrite(io.MultiWriter(dst, h), r)
		}
		if err != nil {
			fatal(fmt.Errorf("payload floor: %v", err))
		}
	} else {
		body, err := framedBody(src, filepath.Dir(out), root != "", rewrite, h)
		if err != nil {
			fatal(fmt.Errorf("payload floor: %v", err))
		}
		defer body.Close()
		w, err := session.Encrypt(dst, []byte(benchPass), 1, session.AllowWeak())
		if err == nil {
			_, err = io.Copy(w, body)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			fatal(fmt.Errorf("payload floor: %v", err))
		}
	}
	if err := dst.Close(); err != nil {
		fatal(err)
	}
	h.Sum(nil)
	return selfCPU() - c0
}

// framedBody is what a push's encryption reads: src itself, hashed into h
// on the way, when !twoPass. With twoPass, the session's format in bounded
// memory: the envelope, encrypted ahead of the payload, carries the
// payload's SHA-256 and size, so the rewritten payload goes to a temporary
// file in dir (pass 1) that is read back to hash it (pass 2) and returned
// for the encryption to read (pass 3); closing it removes it.
func framedBody(src io.Reader, dir string, twoPass bool, rewrite func(io.Writer, io.Reader) error, h io.Writer) (io.ReadCloser, error) {
	if !twoPass {
		return io.NopCloser(io.TeeReader(src, h)), nil
	}
	tmp, err := os.CreateTemp(dir, "floor-*.tar")
	if err != nil {
		return nil, err
	}
	t := &removedOnClose{tmp}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	err = rewrite(bw, src)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err == nil {
		_, err = io.Copy(h, tmp)
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// removedOnClose is a temporary file removed when it is closed.
type removedOnClose struct{ *os.File }

func (f *removedOnClose) Close() error {
	err := f.File.Close()
	os.Remove(f.Name())
	return err
}

// payloadFloor is the median CPU of payloadPass with args (its
// -payload-child-* arguments) in a fresh process, over runs processes.
func payloadFloor(runs int, args ...string) time.Duration {
	ds := make([]time.Duration, runs)
	for i := range ds {
		ds[i] = childCPU("payload floor", args...)
	}
	return median(ds)
}

// childCPU runs this benchmark again with args and reads the CPU in
// nanoseconds it prints.
func childCPU(what string, args ...string) time.Duration {
	var ns int64
	childNumbers(what, []*int64{&ns}, args...)
	return time.Duration(ns)
}

// childNumbers runs this benchmark again with args and reads the numbers
// it prints into vs, in order.
func childNumbers(what string, vs []*int64, args ...string) {
	out, err := exec.Command("/proc/self/exe", args...).Output()
	if err != nil {
		fatal(fmt.Errorf("%s: %v", what, err))
	}
	ptrs := make([]any, len(vs))
	for i, v := range vs {
		ptrs[i] = v
	}
	if _, err := fmt.Sscan(string(out), ptrs...); err != nil {
		fatal(fmt.Errorf("%s: %q: %v", what, out, err))
	}
}

// scryptFloor is the median CPU of n derivations at work factor wf in a
// fresh process (this benchmark re-executed with -scrypt-child), over
// runs processes.
func scryptFloor(wf, n, runs int) time.Duration {
	ds := make([]time.Duration, runs)
	for i := range ds {
		ds[i] = childCPU("scrypt floor", "-scrypt-child", fmt.Sprint(n), "-session-wf", fmt.Sprint(wf))
	}
	return median(ds)
}

// benchSessions prints one table row per verb and size.
func benchSessions(dir string) {
	os.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	os.Setenv("GIT_CTX_QUIET", "1")
	rr := max(5, *runs/3) // medians of 5: a derivation's CPU varies by ±10% from process to process
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
	touchRuns, idleRuns, idle := 4*rr, 3, 3*time.Second
	touchMed, touchMax, touchSys := touchSpread(1024<<*sessWF, touchRuns, 0)
	idleMed, _, _ := touchSpread(1024<<*sessWF, idleRuns, idle)
	var load [3]float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(string(b), &load[0], &load[1], &load[2])
	}
	fmt.Printf("\nSessions: scrypt work factor %d; one derivation in a fresh process %s CPU (median of %d; a derivation whose memory is already resident: %s); the first touch of its %d MiB on huge pages alone, in a fresh process: %s CPU (median of %d in a row, the slowest %s, of which %s system; %s, median of %d, each after %s idle); `git-ctx version` %s CPU; load average %.2f %.2f %.2f\n\n",
		*sessWF, fmtDur(one), rr, fmtDur(warm), 1<<(*sessWF-10), fmtDur(touchMed), touchRuns, fmtDur(touchMax), fmtDur(touchSys), fmtDur(idleMed), idleRuns, idle, fmtDur(start.cpu), load[0], load[1], load[2])
	fmt.Printf("| command | session | scrypt ops | floor (as many derivations in a fresh process) | CPU | CPU / floor | floor with the payload (push: the format's passes; pull: one pass) | CPU / that | wall | runs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
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
	root                       string   // repo, symbolic links resolved (the paths in the session)
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
	f := &sessionFixture{repo: repo, root: real, stateDir: filepath.Join(repo, ".git", "ctx", "sessions"),
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

// settle waits until the local copy last changed more than settleAge ago:
// a session at rest, as `session list` usually finds it. Its first run
// then reads the file once and keeps its stat stamp, the later ones trust
// the stamp (a file changed within 2 s of a stamp is read every time, as
// git's index re-reads racy files; the pull just before restored it).
func (f *sessionFixture) settle() {
	fi, err := os.Stat(f.transcript)
	if err != nil {
		fatal(err)
	}
	if wait := time.Until(fi.ModTime().Add(settleAge)); wait > 0 {
		time.Sleep(wait)
	}
}

// settleAge is past the 2 s within which sessions re-read a changed file.
const settleAge = 2500 * time.Millisecond

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
	// The payload passes of the floors: push encrypts the session, pull
	// decrypts it (a ciphertext made once here, by the push's pass).
	floorOut := filepath.Join(dir, fmt.Sprintf("sess-%d-floor", size))
	encrypt := []string{"-payload-child-in", f.transcript, "-payload-child-out", floorOut + ".age", "-payload-child-root", f.root}
	decrypt := []string{"-payload-child-in", floorOut + ".age", "-payload-child-out", floorOut, "-payload-child-decrypt", "-payload-child-root", f.root}
	childCPU("payload floor", encrypt...)
	defer os.Remove(floorOut)
	defer os.Remove(floorOut + ".age")
	verbs := []struct {
		name    string
		prepare func()
		args    []string
		payload []string
	}{
		{"session push", f.touch, append([]string{"session", "push", "--work-factor", wf}, f.args...), encrypt},
		{"session pull", f.forget, append([]string{"session", "pull"}, f.args...), decrypt},
		{"session list", f.settle, append([]string{"session", "list"}, f.args...), nil},
		{"session status", nil, append([]string{"session", "status"}, f.args...), nil},
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
		withPayload, payloadRatio := "—", "—"
		var fp time.Duration
		if n > 0 && v.payload != nil {
			p := payloadFloor(rr, v.payload...)
			fp = fl + p
			withPayload = fmt.Sprintf("%s (payload %s)", fmtDur(fp), fmtDur(p))
			payloadRatio = fmt.Sprintf("%.2f×", float64(median(cs))/float64(fp))
		}
		ratio := "—"
		if n > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(median(cs))/float64(fl))
		} else if base.cpu > 0 {
			ratio = fmt.Sprintf("%.2f× `version` (%s, interleaved)", float64(median(cs))/float64(base.cpu), fmtDur(base.cpu))
		}
		fmt.Printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d |\n", v.name, sizeLabel(size), n, fmtDur(fl), fmtDur(median(cs)), ratio, withPayload, payloadRatio, fmtDur(median(ws)), vr)
		verb := "6." + strings.ReplaceAll(v.name, " ", "-")
		id := verb + "@" + sizeLabel(size)
		switch {
		case n > 0:
			brRecord(id, median(cs).Seconds(), fl.Seconds(), fmt.Sprintf("%d scrypt ops", n))
			if fp > 0 {
				brRecord(verb+"-payload@"+sizeLabel(size), median(cs).Seconds(), fp.Seconds(),
					fmt.Sprintf("%d scrypt ops and the payload: %s of the floor", n, fmtDur(fp-fl)))
			}
		default:
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
