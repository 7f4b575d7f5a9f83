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

// renameGrace is how long after renaming queue a drain reads the
// renamed file once more before dropping it: a hook's open and
// one-line append are microseconds apart, so a line can only be lost
// by a hook stalled this long between the two.
const renameGrace = 250 * time.Millisecond

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
	var out []spoolEntry
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // not finished (or cut short): never an entry
		}
		line := string(data[:i])
		data = data[i+1:]
		if line == "" {
			continue
		}
		out = append(out, parseSpoolLine(line))
	}
	return out
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
// so that taking it creates nothing), waiting until ctx is done. ok is
// false when there is no spool directory.
func lockSpool(ctx context.Context, dir string) (unlock func(), ok bool, err error) {
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

// HasSpool reports cheaply whether r may have pending spool entries.
func HasSpool(r *gitrepo.Repo) bool {
	dir := SpoolDir(r)
	for _, n := range []string{spoolQueue, spoolDraining} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// Drain records every spooled entry of m's repository, oldest first, each
// exactly once, under the drain lock (and the memory lock of each append).
// An entry that cannot be recorded for a reason that may pass (a key
// problem, a timeout) stops the drain and stays pending; the error is kept
// in the spool's "failed" file and returned.
func Drain(ctx context.Context, m *workspace.Workspace) (DrainResult, error) {
	var res DrainResult
	dir := SpoolDir(m.Repo)
	if !HasSpool(m.Repo) {
		return res, nil
	}
	unlock, ok, err := lockSpool(ctx, dir)
	if err != nil || !ok {
		return res, err
	}
	defer unlock()
	if tip, err := m.Store.Tip(); err != nil {
		return res, err
	} else if tip.IsZero() {
		return res, gitstore.ErrNotInitialized
	}
	kill := drainFailpoint()
	for n := 0; ; {
		draining := filepath.Join(dir, spoolDraining)
		resumed := true
		// A hook that opened queue just before the rename may still write
		// its line into the renamed file: it is read again once renameGrace
		// has passed since the rename, before the file is dropped.
		renamed := time.Time{}
		if _, err := os.Stat(draining); errors.Is(err, fs.ErrNotExist) {
			resumed = false
			if err := os.Rename(filepath.Join(dir, spoolQueue), draining); errors.Is(err, fs.ErrNotExist) {
				break
			} else if err != nil {
				return res, err
			}
			renamed = time.Now()
		}
		done := readDone(dir)
		for {
			data, err := os.ReadFile(draining)
			if err != nil {
				return res, err
			}
			entries := parseSpool(data)
			if done >= len(entries) {
				if wait := renameGrace - time.Since(renamed); wait > 0 {
					time.Sleep(wait)
					renamed = time.Time{}
					continue // read it once more
				}
				break
			}
			for ; done < len(entries); done++ {
				e := entries[done]
				if e.Kind != "" {
					n++
				}
				start := time.Now()
				recorded, err := recordEntry(ctx, m, dir, e, resumed)
				if e.Kind != "" {
					Log(m.Repo, e.logName(), time.Since(start), err)
				}
				if err != nil {
					os.WriteFile(filepath.Join(dir, spoolFailed), []byte(oneLine(err.Error())+"\n"), 0o644)
					return res, err
				}
				if recorded {
					res.Recorded++
				} else {
					res.Skipped++
				}
				resumed = false
				kill("after-record", n)
				if err := atomicfile.WriteFile(filepath.Join(dir, spoolDone), []byte(strconv.Itoa(done+1)+"\n"),
					atomicfile.Options{Perm: 0o644, Replace: true}); err != nil {
					return res, err
				}
				kill("after-done", n)
			}
		}
		// Every entry of the taken-over queue is recorded: drop it.
		data, _ := os.ReadFile(draining)
		for _, e := range parseSpool(data) {
			if e.Kind == kindTurn {
				os.Remove(filepath.Join(dir, e.Arg))
			}
		}
		if err := os.Remove(filepath.Join(dir, spoolDone)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, err
		}
		if err := os.Remove(draining); err != nil {
			return res, err
		}
	}
	os.Remove(filepath.Join(dir, spoolFailed))
	return res, nil
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
