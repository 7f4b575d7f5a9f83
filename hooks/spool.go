package hooks

// The hook spool: hooks do not record, they append what happened to a
// durable queue under the git dir and start a detached drainer, so a hooked
// `git commit` costs about what it costs without the hook. The drainer (or
// the next git-ctx command) records each entry exactly once, in order.
//
// <git-common-dir>/ctx/spool/
//   queue           appended to by hooks, one entry a line
//   queue.draining  the queue a drain took over (renamed from queue)
//   queue.done      how many entries of queue.draining are recorded
//   queue.drained.<ns>.<n>.<bytes>
//                   a drained queue, kept for an hour: a hook that opened
//                   queue before the drain renamed it writes its line here,
//                   however late, and the next drain records it
//   failed          the last drain's error (removed by a drain that succeeds)
//   turn-*.json     an agent turn a "turn" entry names
//
// A line is "<kind> <arg> <ref>[\t<tools>\t<session>\t<model>]": kind
// post-commit or post-merge with a commit id, the ref HEAD was on, the
// comma-separated tools detected in the commit's environment and
// $GIT_CTX_SESSION and $GIT_CTX_MODEL there; or kind turn with the name of
// a turn-*.json file and the agent. The stub writes "\n" before each line, so
// a line cut short by a crash never joins the next; lines that do not parse,
// or lack their final newline, are skipped.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/agentturn"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// drainedKeep is how long a drained queue is kept (renamed to
// queue.drained.<ns>.<n>.<bytes>: when it was drained, how many lines and
// bytes it had). A hook opens queue and appends its one line microseconds
// later, but a hook that opened it just before a drain renamed it writes
// into the renamed file: every drain looks at the kept files first and
// records any line that arrived after theirs. Only a hook stalled for
// longer than this between its open and its write would lose its line.
const drainedKeep = time.Hour

// drainedPrefix starts the name of a kept drained queue.
const drainedPrefix = "queue.drained."

// Spool file names (in SpoolDir).
const (
	spoolQueue    = "queue"
	spoolDraining = "queue.draining"
	spoolDone     = "queue.done"
	spoolFailed   = "failed"
	kindTurn      = "turn"
)

// SyncEnv, set non-empty, makes the hooks record synchronously instead of
// spooling (the behaviour before the spool: errors are printed by the commit).
const SyncEnv = "GIT_CTX_HOOK_SYNC"

// DeferEnv, set non-empty, makes the hooks spool without starting a
// drainer: the next git-ctx command that opens the memory records the
// entries (for a burst of commits, a rebase for example).
const DeferEnv = "GIT_CTX_HOOK_DEFER"

// drainFailpointEnv is for tests only: "after-record:N" or "after-done:N"
// makes the drainer kill itself (SIGKILL) right after recording, or right
// after marking done, its N-th entry (counting the entries that parse,
// from 1, in this drain).
const drainFailpointEnv = "GIT_CTX_TEST_DRAIN_KILL"

// StaleSpool is how old a pending entry may get before doctor warns.
const StaleSpool = 10 * time.Minute

// SpoolDir is the spool directory of r.
func SpoolDir(r *gitrepo.Repo) string { return filepath.Join(stateDir(r), "spool") }

// spoolEntry is one parsed line.
type spoolEntry struct {
	Kind, Arg, Ref, Tools, Session, Model string
}

var (
	// compiled on first use, not at start (TestNoCompileAtInit)
	hexRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })
	turnFileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^turn-[0-9a-z-]{1,64}\.json$`) })
)

// parseSpool returns the complete lines of data that are entries, in order;
// a line that does not parse yields a zero entry (Kind ""), so that the
// index of an entry never changes as the file grows.
func parseSpool(data []byte) []spoolEntry {
	out, _ := spoolLines(data)
	return out
}

// spoolLines is parseSpool with, for each entry, the offset in data just
// past its newline.
func spoolLines(data []byte) (entries []spoolEntry, ends []int) {
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break // not finished (or cut short): never an entry
		}
		line := string(data[off : off+i])
		off += i + 1
		if line == "" {
			continue
		}
		entries = append(entries, parseSpoolLine(line))
		ends = append(ends, off)
	}
	return entries, ends
}

func parseSpoolLine(line string) spoolEntry {
	tabs := strings.Split(line, "\t")
	f := strings.Split(tabs[0], " ")
	if len(f) < 2 || len(f) > 3 || len(tabs) > 4 {
		return spoolEntry{}
	}
	e := spoolEntry{Kind: f[0], Arg: f[1]}
	if len(f) > 2 {
		e.Ref = f[2]
	}
	for i, p := range []*string{&e.Tools, &e.Session, &e.Model} {
		if i+1 < len(tabs) {
			*p = tabs[i+1]
		}
	}
	switch {
	case (e.Kind == PostCommit || e.Kind == PostMerge) && hexRE().MatchString(e.Arg):
	case e.Kind == kindTurn && turnFileRE().MatchString(e.Arg):
	default:
		return spoolEntry{}
	}
	return e
}

// logName is the hook name hooks.log shows for the entry.
func (e spoolEntry) logName() string {
	if e.Kind != kindTurn {
		return e.Kind
	}
	if e.Ref == "codex" {
		return "codex-notify"
	}
	return "claude-stop"
}

func countValid(es []spoolEntry) int {
	n := 0
	for _, e := range es {
		if e.Kind != "" {
			n++
		}
	}
	return n
}

// SpoolState is what is waiting in a repository's spool.
type SpoolState struct {
	Pending int       // entries not recorded yet
	Oldest  time.Time // when the oldest pending file was last written (zero with none)
	Failed  string    // the last drain's error, "" if it succeeded
}

// Pending reads r's spool without changing it.
func Pending(r *gitrepo.Repo) SpoolState {
	dir := SpoolDir(r)
	var st SpoolState
	note := func(name string) []spoolEntry {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		if fi, err := os.Stat(path); err == nil && (st.Oldest.IsZero() || fi.ModTime().Before(st.Oldest)) {
			st.Oldest = fi.ModTime()
		}
		return parseSpool(data)
	}
	if es := note(spoolDraining); es != nil {
		done := readDone(dir)
		for i, e := range es {
			if i >= done && e.Kind != "" {
				st.Pending++
			}
		}
	}
	st.Pending += countValid(note(spoolQueue))
	kept, _ := keptDrained(dir)
	for _, d := range kept {
		if d.size > d.bytes {
			if es := note(d.name); len(es) > d.entries {
				st.Pending += countValid(es[d.entries:])
			}
		}
	}
	if st.Pending == 0 {
		st.Oldest = time.Time{}
	}
	if b, err := os.ReadFile(filepath.Join(dir, spoolFailed)); err == nil {
		st.Failed = strings.TrimSpace(string(b))
	}
	return st
}

func readDone(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, spoolDone))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// appendSpool appends one entry line to r's queue.
func appendSpool(r *gitrepo.Repo, line string) error {
	dir := SpoolDir(r)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, spoolQueue), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open the hook spool: %w", err)
	}
	if _, err := f.WriteString("\n" + line + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("append to the hook spool: %w", err)
	}
	return f.Close()
}

// SpoolCommit appends HEAD of dir (hook post-commit or post-merge) to the
// spool and starts a drainer: what `git-ctx hook post-commit` does when a
// hook manager or an old stub calls it.
func SpoolCommit(ctx context.Context, dir, hook string) (Outcome, error) {
	r, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return Outcome{}, err
	}
	ci, err := r.Commit(ctx, "HEAD", 1) // only its id and parents are needed
	if err != nil {
		return Outcome{}, err
	}
	if hook == PostMerge && len(ci.Parents) < 2 {
		return Outcome{}, nil // a fast-forward: nothing to record
	}
	ref := "HEAD"
	if b := r.CurrentBranch(); b != "" {
		ref = "refs/heads/" + b
	}
	line := hook + " " + ci.Hash + " " + ref + "\t" + strings.Join(envTools(), ",") + "\t" +
		oneField(os.Getenv("GIT_CTX_SESSION")) + "\t" + oneField(os.Getenv("GIT_CTX_MODEL"))
	if err := appendSpool(r, line); err != nil {
		return Outcome{}, err
	}
	StartDrainer(dir)
	return Outcome{Spooled: true}, nil
}

// oneField keeps s within one field of a spool line.
func oneField(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// spooledTurn is a turn-*.json file.
type spooledTurn struct {
	Turn  agentturn.Turn `json:"turn"`
	Agent string         `json:"agent"`
}

// spoolTurn writes turn to the spool of the repository at turn.Cwd and
// starts a drainer. Outside a git repository it does nothing.
func spoolTurn(ctx context.Context, turn agentturn.Turn, agent string) (Outcome, error) {
	dir := turn.Cwd
	if dir == "" {
		dir = "."
	}
	r, err := gitrepo.Open(ctx, dir)
	if errors.Is(err, gitrepo.ErrNotARepo) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	data, err := json.Marshal(spooledTurn{Turn: turn, Agent: agent})
	if err != nil {
		return Outcome{}, err
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return Outcome{}, err
	}
	name := fmt.Sprintf("turn-%d-%s.json", time.Now().UnixNano(), hex.EncodeToString(rnd[:]))
	if err := atomicfile.WriteFile(filepath.Join(SpoolDir(r), name), data, atomicfile.Options{Perm: 0o600, MkdirPerm: 0o755}); err != nil {
		return Outcome{}, fmt.Errorf("spool the agent turn: %w", err)
	}
	if err := appendSpool(r, kindTurn+" "+name+" "+agent); err != nil {
		os.Remove(filepath.Join(SpoolDir(r), name))
		return Outcome{}, err
	}
	StartDrainer(dir)
	return Outcome{Spooled: true}, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// StartDrainer starts `git-ctx hook drain` in dir, detached (own session,
// stdio on /dev/null), and does not wait for it; with $GIT_CTX_HOOK_DEFER
// set it does nothing. Failing to start it is not
// an error: the next git-ctx command drains.
func StartDrainer(dir string) {
	if os.Getenv(DeferEnv) != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "hook", "drain")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
}

// DrainResult says what a drain did.
type DrainResult struct {
	Recorded int // new checkpoints
	Skipped  int // entries already recorded, or that record nothing
}

// lockSpool takes the drain lock (an flock on the spool directory itself,
// so that taking it creates nothing), waiting until ctx is done, or with
// wait false not at all. ok is false when there is no spool directory, or
// the lock is held and wait is false.
func lockSpool(ctx context.Context, dir string, wait bool) (unlock func(), ok bool, err error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for delay := time.Millisecond; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, true, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, false, fmt.Errorf("lock the hook spool: %w", err)
		}
		if !wait {
			f.Close()
			return nil, false, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, fmt.Errorf("wait for the hook spool: %w", ctx.Err())
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// HasSpool reports cheaply whether r may have pending spool entries: a
// queue, a queue being drained, or a kept drained queue that grew.
func HasSpool(r *gitrepo.Repo) bool {
	dir := SpoolDir(r)
	for _, n := range []string{spoolQueue, spoolDraining} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	kept, _ := keptDrained(dir)
	for _, d := range kept {
		if d.size > d.bytes {
			return true
		}
	}
	return false
}

// drainedFile is a kept drained queue (see drainedKeep).
type drainedFile struct {
	name    string
	at      int64 // when it was drained, Unix nanoseconds
	entries int   // its lines then (parseSpool's count)
	bytes   int64 // its size then
	size    int64 // its size now
	mod     time.Time
}

func drainedName(at int64, entries int, bytes int64) string {
	return drainedPrefix + strconv.FormatInt(at, 10) + "." + strconv.Itoa(entries) + "." + strconv.FormatInt(bytes, 10)
}

func parseDrainedName(name string) (drainedFile, bool) {
	rest, ok := strings.CutPrefix(name, drainedPrefix)
	if !ok {
		return drainedFile{}, false
	}
	f := strings.Split(rest, ".")
	if len(f) != 3 {
		return drainedFile{}, false
	}
	at, err1 := strconv.ParseInt(f[0], 10, 64)
	n, err2 := strconv.Atoi(f[1])
	b, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || n < 0 || b < 0 {
		return drainedFile{}, false
	}
	return drainedFile{name: name, at: at, entries: n, bytes: b}, true
}

// keptDrained lists the kept drained queues in dir, oldest first.
func keptDrained(dir string) ([]drainedFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []drainedFile
	for _, e := range ents {
		d, ok := parseDrainedName(e.Name())
		if !ok {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue // removed meanwhile, or not ours
		}
		d.size, d.mod = fi.Size(), fi.ModTime()
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out, nil
}

// Drain records every spooled entry of m's repository, oldest first, each
// exactly once, under the drain lock (and the memory lock of each append),
// waiting for a drain that holds the lock. An entry that cannot be
// recorded for a reason that may pass (a key problem, a timeout) stops the
// drain and stays pending; the error is kept in the spool's "failed" file
// and returned.
func Drain(ctx context.Context, m *workspace.Workspace) (DrainResult, error) {
	return drain(ctx, m, true)
}

// DrainDetached is Drain for the detached `git-ctx hook drain` a hook
// starts: when another drain holds the lock it returns at once. That drain
// looks at the spool again after it lets the lock go and records what
// arrived meanwhile, so a burst of hooked commits (a rebase) starts as
// many drainers and none of them waits.
func DrainDetached(ctx context.Context, m *workspace.Workspace) (DrainResult, error) {
	return drain(ctx, m, false)
}

// drain takes the lock (waiting for it if wait), drains, lets the lock go,
// and goes again, never waiting, while anything is pending: a hook whose
// drainer found the lock held relies on that last look.
func drain(ctx context.Context, m *workspace.Workspace, wait bool) (DrainResult, error) {
	var res DrainResult
	dir := SpoolDir(m.Repo)
	for HasSpool(m.Repo) {
		unlock, ok, err := lockSpool(ctx, dir, wait)
		if err != nil || !ok {
			return res, err
		}
		err = drainLocked(ctx, m, dir, &res)
		unlock()
		if err != nil {
			return res, err
		}
		wait = false
	}
	return res, nil
}

// drainLocked is one drain under the lock.
func drainLocked(ctx context.Context, m *workspace.Workspace, dir string, res *DrainResult) error {
	if tip, err := m.Store.Tip(); err != nil {
		return err
	} else if tip.IsZero() {
		return gitstore.ErrNotInitialized
	}
	d := &drainer{ctx: ctx, m: m, dir: dir, kill: drainFailpoint(), res: res}
	// Lines that reached a drained queue after its drain are older than
	// anything in queue: they go first.
	if err := d.late(); err != nil {
		return err
	}
	for {
		more, err := d.queue()
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	os.Remove(filepath.Join(dir, spoolFailed))
	return nil
}

// drainer is one drain's state, under the drain lock.
type drainer struct {
	ctx  context.Context
	m    *workspace.Workspace
	dir  string
	kill func(at string, n int)
	n    int // entries that parse, recorded or skipped so far
	res  *DrainResult
}

// record records one entry, counting and logging it; an error is kept in
// the spool's "failed" file.
func (d *drainer) record(e spoolEntry, resumed bool) error {
	if e.Kind != "" {
		d.n++
	}
	start := time.Now()
	recorded, err := recordEntry(d.ctx, d.m, d.dir, e, resumed)
	if e.Kind != "" {
		Log(d.m.Repo, e.logName(), time.Since(start), err)
	}
	if err != nil {
		os.WriteFile(filepath.Join(d.dir, spoolFailed), []byte(oneLine(err.Error())+"\n"), 0o644)
		return err
	}
	if recorded {
		d.res.Recorded++
	} else {
		d.res.Skipped++
	}
	d.kill("after-record", d.n)
	return nil
}

// queue drains queue.draining (resumed from queue.done) or else takes
// queue over by renaming it; more is false when there was nothing to take.
// The drained file is kept (see drainedKeep), renamed to say how much of
// it was drained.
func (d *drainer) queue() (more bool, err error) {
	draining := filepath.Join(d.dir, spoolDraining)
	resumed := true
	if _, err := os.Stat(draining); errors.Is(err, fs.ErrNotExist) {
		resumed = false
		if err := os.Rename(filepath.Join(d.dir, spoolQueue), draining); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	done := readDone(d.dir)
	var entries []spoolEntry
	var data []byte
	for {
		if data, err = os.ReadFile(draining); err != nil {
			return false, err
		}
		if entries = parseSpool(data); done >= len(entries) {
			break
		}
		for ; done < len(entries); done++ {
			if err := d.record(entries[done], resumed); err != nil {
				return false, err
			}
			resumed = false
			if err := atomicfile.WriteFile(filepath.Join(d.dir, spoolDone), []byte(strconv.Itoa(done+1)+"\n"),
				atomicfile.Options{Perm: 0o644, Replace: true}); err != nil {
				return false, err
			}
			d.kill("after-done", d.n)
		}
	}
	// Every entry of the taken-over queue is recorded.
	for _, e := range entries {
		if e.Kind == kindTurn {
			os.Remove(filepath.Join(d.dir, e.Arg))
		}
	}
	if err := os.Remove(filepath.Join(d.dir, spoolDone)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	kept := drainedName(time.Now().UnixNano(), len(entries), int64(len(data)))
	if err := os.Rename(draining, filepath.Join(d.dir, kept)); err != nil {
		return false, err
	}
	return true, nil
}

// late records the lines that hooks wrote into kept drained queues after
// their drain, each exactly once (the file's name is advanced past each
// one), and removes kept queues older than drainedKeep.
func (d *drainer) late() error {
	kept, err := keptDrained(d.dir)
	if err != nil {
		return err
	}
	for _, f := range kept {
		path := filepath.Join(d.dir, f.name)
		if f.size <= f.bytes {
			if time.Since(time.Unix(0, f.at)) > drainedKeep && time.Since(f.mod) > drainedKeep {
				os.Remove(path)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		entries, ends := spoolLines(data)
		for i := f.entries; i < len(entries); i++ {
			if err := d.record(entries[i], true); err != nil {
				return err
			}
			if entries[i].Kind == kindTurn {
				os.Remove(filepath.Join(d.dir, entries[i].Arg))
			}
			next := filepath.Join(d.dir, drainedName(f.at, i+1, int64(ends[i])))
			if err := os.Rename(path, next); err != nil {
				return err
			}
			path = next
			d.kill("after-done", d.n)
		}
		// A fragment left at the end (a write cut short) is not waited for.
		if last := filepath.Join(d.dir, drainedName(f.at, max(len(entries), f.entries), int64(len(data)))); last != path {
			if err := os.Rename(path, last); err != nil {
				return err
			}
		}
	}
	return nil
}

// drainFailpoint returns the test-only kill switch (a no-op unless
// GIT_CTX_TEST_DRAIN_KILL is set).
func drainFailpoint() func(at string, n int) {
	spec := os.Getenv(drainFailpointEnv)
	at, num, ok := strings.Cut(spec, ":")
	want, err := strconv.Atoi(num)
	if !ok || err != nil {
		return func(string, int) {}
	}
	return func(where string, n int) {
		if where == at && n == want {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Hour)
		}
	}
}

// recordEntry records one entry; recorded is false when it was recorded
// already or records nothing (a fast-forward's post-merge, a line that does
// not parse, a commit git no longer has).
func recordEntry(ctx context.Context, m *workspace.Workspace, dir string, e spoolEntry, resumed bool) (recorded bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, seconds(m.Repo, "ctx.hookTimeout", DefaultHookTimeout))
	defer cancel()
	var in checkpoints.RecordInput
	switch e.Kind {
	case PostCommit, PostMerge:
		ci, err := m.Repo.Commit(ctx, e.Arg, checkpoints.CommitFiles)
		if err != nil {
			if ctx.Err() != nil {
				return false, err
			}
			return false, nil // gone (gc'd after a reset): nothing to record
		}
		if e.Kind == PostMerge && len(ci.Parents) < 2 {
			return false, nil
		}
		in = checkpoints.RecordInput{Commit: ci, OncePerCommit: true,
			Session: firstOf(e.Session, m.Repo.Config("ctx.session")), Model: firstOf(e.Model, m.Repo.Config("ctx.model"))}
		if b, ok := strings.CutPrefix(e.Ref, "refs/heads/"); ok {
			in.Branch = b
		}
		for _, t := range strings.Split(e.Tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				in.Tools = append(in.Tools, t)
			}
		}
	case kindTurn:
		data, err := os.ReadFile(filepath.Join(dir, e.Arg))
		if err != nil {
			return false, nil // removed after it was recorded
		}
		var st spooledTurn
		if json.Unmarshal(data, &st) != nil {
			return false, nil
		}
		top, _ := m.Repo.WorkTree(ctx)
		in = turnInput(st.Turn, st.Agent, top)
		in.OncePerTurn = resumed
	default:
		return false, nil
	}
	_, err = checkpoints.Record(ctx, m, in)
	if errors.Is(err, checkpoints.ErrAlreadyRecorded) {
		return false, nil
	}
	if errors.Is(err, workspace.ErrInput) {
		return false, nil // can never be recorded: do not block the spool
	}
	return err == nil, err
}
