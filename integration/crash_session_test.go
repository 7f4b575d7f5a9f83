package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestCrashSessionRestore is the "session restore" line of the crash
// tests: `git ctx session pull` replacing an older copy of a session on
// machine B is killed with SIGKILL at seeded random moments. After every
// kill the session file is either the old copy or the new one, byte for
// byte (never a mix or a prefix), no other transcript appeared beside it,
// and running the pull again restores the new copy.
func TestCrashSessionRestore(t *testing.T) {
	t.Parallel()
	start := time.Now()
	w := newSessWorld(t)
	a := w.machine(t, "alice", "code")
	b := w.machine(t, "bob", "elsewhere")
	passFile := filepath.Join(w.s.root, "passphrase")
	if err := os.WriteFile(passFile, []byte(sessPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const id = "5e55f00d-1234-4abc-8def-0123456789ab"
	src := claudeFile(a.home, a.repo, id)
	// A transcript of a few megabytes, so that a restore lasts long enough
	// to be interrupted at many different points.
	var sb strings.Builder
	for i := 0; sb.Len() < 3<<20; i++ {
		fmt.Fprintf(&sb, `{"type":"assistant","cwd":"%s","n":%d,"text":"%s"}`+"\n", a.repo, i, strings.Repeat("lorem ipsum ", 20))
	}
	v1 := sb.String()
	writeSession(t, src, v1, time.Now().Add(-time.Hour))
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	mustSess(t, b, "pull", "--store", w.store)
	dest := claudeFile(b.home, b.repo, id)
	oldCopy := mapped(v1, a, b)
	if got := string(readFile(t, dest)); got != oldCopy {
		t.Fatal("first restore on B differs from the pushed session")
	}
	v2 := v1 + `{"type":"user","cwd":"` + a.repo + `","text":"one more turn"}` + "\n"
	writeSession(t, src, v2, time.Time{})
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	newCopy := mapped(v2, a, b)

	// B's pristine state: its HOME (the transcripts) and its git dir (the
	// per-session state under .git/ctx/sessions), restored before each trial.
	pristine := filepath.Join(w.s.root, "pristine")
	syncCopy(t, b.home, filepath.Join(pristine, "home"))
	syncCopy(t, filepath.Join(b.repo, ".git"), filepath.Join(pristine, "git"))
	reset := func() {
		t.Helper()
		for _, p := range [][2]string{{b.home, "home"}, {filepath.Join(b.repo, ".git"), "git"}} {
			if err := os.RemoveAll(p[0]); err != nil {
				t.Fatal(err)
			}
			syncCopy(t, filepath.Join(pristine, p[1]), p[0])
		}
	}
	args := []string{"session", "pull", "--store", w.store, "--passphrase-file", passFile}
	projectDir := filepath.Dir(dest)
	transcripts := func() []string {
		matches, _ := filepath.Glob(filepath.Join(projectDir, "*.jsonl"))
		sort.Strings(matches)
		return matches
	}

	var ds []time.Duration
	for i := 0; i < 3; i++ {
		reset()
		t0 := time.Now()
		if r := execute(t, b.repo, b.env, nil, append([]string{"git-ctx"}, args...)...); r.code != 0 {
			t.Fatalf("uninterrupted session pull: %s", r)
		}
		ds = append(ds, time.Since(t0))
		if string(readFile(t, dest)) != newCopy {
			t.Fatal("uninterrupted session pull did not restore the new copy")
		}
	}
	// The kill delays follow the duration of recent uninterrupted runs (the
	// re-run after each kill is one): other tests running beside this one
	// change how long a pull takes, and delays drawn from a quiet moment's
	// duration would all land before the rename on a busy one.
	recentMedian := func() time.Duration {
		last := append([]time.Duration(nil), ds[max(0, len(ds)-5):]...)
		sort.Slice(last, func(i, j int) bool { return last[i] < last[j] })
		return last[len(last)/2]
	}
	median := recentMedian()

	rng := rand.New(rand.NewPCG(crashSeed, 99))
	var mid, after, sawOld, sawNew int
	for trial := 0; trial < crashTrials; trial++ {
		reset()
		delay := time.Duration(rng.Float64() * 1.2 * float64(recentMedian()))
		killed, res, err := crashRun(b.repo, b.env, delay, args...)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !killed && res.code != 0 {
			t.Fatalf("trial %d: session pull exited %d without being killed: %s", trial, res.code, res)
		}
		if killed {
			mid++
		} else {
			after++
		}
		switch got := string(readFile(t, dest)); got {
		case oldCopy:
			sawOld++
		case newCopy:
			sawNew++
		default:
			t.Fatalf("trial %d (killed after %v): the session file is neither the old nor the new copy (%d bytes)", trial, delay.Round(time.Millisecond), len(got))
		}
		if list := transcripts(); len(list) != 1 || list[0] != dest {
			t.Fatalf("trial %d: transcripts beside the session after the kill: %q", trial, list)
		}
		t0 := time.Now()
		r := execute(t, b.repo, b.env, nil, append([]string{"git-ctx"}, args...)...)
		if r.code != 0 {
			t.Fatalf("trial %d: re-running the pull after the kill: %s", trial, r)
		}
		ds = append(ds, time.Since(t0))
		if string(readFile(t, dest)) != newCopy {
			t.Fatalf("trial %d: the re-run did not restore the new copy", trial)
		}
		if list := transcripts(); len(list) != 1 {
			t.Fatalf("trial %d: transcripts after the re-run: %q", trial, list)
		}
	}
	t.Logf("session restore: %d trials in %v (uninterrupted run: median %v); killed mid-operation %d, finished before the kill %d; file found old %d, new %d",
		crashTrials, time.Since(start).Round(time.Millisecond), median.Round(time.Millisecond), mid, after, sawOld, sawNew)
	if mid < crashTrials/3 {
		t.Errorf("only %d of %d kills landed mid-operation", mid, crashTrials)
	}
	if sawOld == 0 || sawNew == 0 {
		t.Errorf("the kills never caught one side of the rename (old %d, new %d): the delays miss the interesting moments", sawOld, sawNew)
	}
}
