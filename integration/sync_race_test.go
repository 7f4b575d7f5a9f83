package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSyncRace: three devices, each 30 rounds of {checkpoint; sync}, all at
// once against one bare repository. No round may fail or report a fork,
// the remote's branch only ever fast-forwards, and afterwards every device
// and the remote hold all 90 verified checkpoints.
func TestSyncRace(t *testing.T) {
	t.Parallel()
	const rounds = 30
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	setup := s.env("setup")
	// A forced update would be refused; the reflog keeps every update.
	gitOut(t, rem.bare, setup, "config", "receive.denyNonFastForwards", "true")
	gitOut(t, rem.bare, setup, "config", "core.logAllRefUpdates", "always")

	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.must(t, "push")
	devs := []*syncDevice{a, syncCloneDevice(t, s, rem, "B"), syncCloneDevice(t, s, rem, "C")}
	for _, d := range devs[1:] {
		d.must(t, "pull")
		d.must(t, "init")
	}
	// What is tested is that every round ends well, not how fast: a device
	// that keeps losing the race on a loaded machine (the test suite runs
	// packages side by side) may need longer than the default two minutes.
	const syncLimit = 8 * time.Minute
	for _, d := range devs {
		d.git(t, "config", "ctx.timeout", fmt.Sprint(int(syncLimit.Seconds())))
	}

	race := &tstRace{codes: map[int]int{}, written: map[string]string{}, syncLimit: syncLimit}
	var wg sync.WaitGroup
	start := make(chan struct{})
	began := time.Now()
	for _, d := range devs {
		wg.Add(1)
		go func(d *syncDevice) {
			defer wg.Done()
			<-start
			for i := 0; i < rounds; i++ {
				race.round(d, i)
			}
		}(d)
	}
	close(start)
	wg.Wait()
	// Failed rounds are reported, and the end state is still checked: the
	// checkpoints of a failed round stay local until the final syncs.
	for _, f := range race.failures {
		t.Error(f)
	}
	t.Logf("%d rounds on 3 devices in %v; sync exit codes: %v", 3*rounds, time.Since(began).Round(time.Millisecond), race.codes)
	if race.codes[0] != 3*rounds {
		t.Errorf("%d of %d concurrent syncs failed (exit codes %v); every round should exit 0", 3*rounds-race.codes[0], 3*rounds, race.codes)
	}
	if len(race.written) != 3*rounds {
		t.Fatalf("%d distinct checkpoints written, want %d", len(race.written), 3*rounds)
	}
	var all []string
	for h := range race.written {
		all = append(all, h)
	}

	for _, d := range devs {
		r := d.ctx(t, "sync")
		if r.code != 0 || strings.Contains(strings.ToLower(r.stdout+r.stderr), "fork") {
			t.Fatalf("final sync of %s: %s", d.name, r)
		}
	}
	remoteTip := syncBareTip(t, s, rem.bare)
	tstRaceAllVerified(t, devs, all, rounds)
	// The last final sync brought nothing new to anyone: every device now
	// has the remote's tip, or a tip whose tree equals it.
	remoteTree := gitOut(t, rem.bare, setup, "rev-parse", memRef+"^{tree}")
	for _, d := range devs {
		if tree := d.git(t, "rev-parse", memRef+"^{tree}"); tree != remoteTree {
			t.Errorf("%s's tree %s differs from the remote's %s (tip %s)", d.name, tree, remoteTree, remoteTip)
		}
	}

	// The remote itself holds all 90 records and verifies: a fresh device
	// pulls it whole.
	fresh := syncCloneDevice(t, s, rem, "fresh")
	fresh.must(t, "pull")
	syncWantHashes(t, "log of a fresh clone", fresh.hashes(t), all...)
	fresh.wantVerifies(t)

	tstRaceFastForwards(t, rem.bare, setup, remoteTip)
}

// tstRace is what the devices of TestSyncRace report, under mu.
type tstRace struct {
	mu        sync.Mutex
	failures  []string
	codes     map[int]int       // sync exit code → rounds
	written   map[string]string // hash → summary
	syncLimit time.Duration     // how long one sync may take
}

// fail records a failed round.
func (r *tstRace) fail(format string, args ...any) {
	r.mu.Lock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// round is d's round i: a checkpoint, then a sync that must exit 0 and
// report no fork.
func (r *tstRace) round(d *syncDevice, i int) {
	summary := fmt.Sprintf("%s round %02d", d.name, i)
	res, err := syncExec(d.dir, d.env, "git", "ctx", "checkpoint", "--json", "-m", summary)
	if err != nil {
		r.fail("%s round %d: checkpoint: %v", d.name, i, err)
		return
	}
	if res.code != 0 {
		r.fail("%s round %d: checkpoint: %s", d.name, i, res)
		return
	}
	var rec record
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil || !hexHash.MatchString(rec.Hash) {
		r.fail("%s round %d: checkpoint --json: %v: %q", d.name, i, err, res.stdout)
		return
	}
	r.mu.Lock()
	r.written[rec.Hash] = summary
	r.mu.Unlock()
	t0 := time.Now()
	res, err = syncExecWithin(r.syncLimit+time.Minute, d.dir, d.env, "git", "ctx", "sync")
	if err != nil {
		r.fail("%s round %d: sync after %v: %v", d.name, i, time.Since(t0).Round(time.Millisecond), err)
		return
	}
	r.mu.Lock()
	r.codes[res.code]++
	r.mu.Unlock()
	if res.code != 0 {
		r.fail("%s round %d: sync took %v: %s", d.name, i, time.Since(t0).Round(time.Millisecond), res)
	}
	if strings.Contains(strings.ToLower(res.stdout+res.stderr), "fork") {
		r.fail("%s round %d: sync reports a fork: %s", d.name, i, res)
	}
}

// tstRaceAllVerified: every device holds all checkpoints, verified, on
// three chains of rounds records each, and quarantined nothing.
func tstRaceAllVerified(t *testing.T, devs []*syncDevice, all []string, rounds int) {
	t.Helper()
	for _, d := range devs {
		syncWantHashes(t, "log of "+d.name, d.hashes(t), all...)
		rep := d.wantVerifies(t)
		if len(rep.Chains) != 3 {
			t.Fatalf("%s: verify reports %d chains, want 3:\n%s", d.name, len(rep.Chains), rep.Raw)
		}
		for _, c := range rep.Chains {
			if c.Entries != rounds || c.Verified != rounds {
				t.Fatalf("%s: chain of %s has %d entries, %d verified, want %d", d.name, c.Device, c.Entries, c.Verified, rounds)
			}
		}
		if q := syncUnverified(t, d); len(q) != 0 {
			t.Fatalf("%s quarantined records of honest devices: %+v", d.name, q)
		}
	}
}

// tstRaceFastForwards: every update of the remote's branch was a
// fast-forward, ending at remoteTip.
func tstRaceFastForwards(t *testing.T, bare string, setup []string, remoteTip string) {
	t.Helper()
	logPath := filepath.Join(bare, "logs", "refs", "heads", "ghyll", "memory")
	lines := strings.Split(strings.TrimSpace(string(readFile(t, logPath))), "\n")
	if len(lines) < 3 {
		t.Fatalf("remote reflog has only %d entries", len(lines))
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("reflog line %q", l)
		}
		if f[0] == strings.Repeat("0", 40) {
			continue // creation
		}
		if _, _, code := run(t, bare, setup, "git", "merge-base", "--is-ancestor", f[0], f[1]); code != 0 {
			t.Fatalf("remote ghyll/memory moved %s → %s, not a fast-forward", f[0], f[1])
		}
	}
	if last := strings.Fields(lines[len(lines)-1])[1]; last != remoteTip {
		t.Fatalf("reflog ends at %s, remote tip is %s", last, remoteTip)
	}
}
