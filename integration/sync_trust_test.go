package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/output"
)

// syncDeviceInfo is one entry of `git ctx devices --json`.
type syncDeviceInfo = output.Device

func syncDevices(t *testing.T, d *syncDevice) map[string]syncDeviceInfo {
	t.Helper()
	out := d.must(t, "devices", "--json")
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("decode devices --json: %v\n%s", err, out)
	}
	for _, e := range raw {
		for _, k := range []string{"id", "fingerprint", "trust", "checkpoints", "last_seen"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("devices --json entry lacks %q:\n%s", k, out)
			}
		}
	}
	var list []syncDeviceInfo
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	m := map[string]syncDeviceInfo{}
	for _, e := range list {
		m[e.ID] = e
	}
	return m
}

// TestSyncTrustAllowlist: with ctx.trust allowlist only trusted devices'
// records merge; untrusting a device blocks it from then on.
func TestSyncTrustAllowlist(t *testing.T) {
	t.Parallel()
	s, rem, a := cltTeam(t, "file", "A")
	a1 := a.cp(t, "a1")
	a.must(t, "push")
	idA := a.id(t)

	c := syncCloneDevice(t, s, rem, "C")
	c.git(t, "config", "ctx.trust", "allowlist")
	out := c.must(t, "devices", "trust", idA)
	if !strings.Contains(out, idA) || !strings.Contains(out, "trusted") {
		t.Fatalf("devices trust: %q", out)
	}
	if got := c.git(t, "config", "--get-all", "ctx.trustedDevice"); got != idA {
		t.Fatalf("ctx.trustedDevice = %q, want %q", got, idA)
	}
	out = c.must(t, "pull")
	syncWantLine(t, "C's first pull", out, syncPulled(idA, 1))

	// D is a new device nobody trusted.
	d := syncCloneDevice(t, s, rem, "D")
	d.must(t, "pull")
	d.must(t, "init")
	d1, d2 := d.cp(t, "d1 from an unknown machine"), d.cp(t, "d2 from an unknown machine")
	d.must(t, "sync")
	idD := d.id(t)
	a2 := a.cp(t, "a2")
	a.must(t, "sync")

	r := c.ctx(t, "pull")
	wantCode(t, "pull with an untrusted device", r, 1)
	syncWantLine(t, "pull with an untrusted device", r.stdout, syncPulled(idA, 1))
	syncWantHashes(t, "C's log", c.hashes(t), a1.Hash, a2.Hash)
	tstTrustUntrustedKept(t, c, idD)
	c.wantVerifies(t)
	tstTrustDevicesList(t, a, c, idA, idD, a2.TS)

	// Untrust A: its next records are blocked too.
	tstTrustUntrust(t, c, idA)
	a3 := a.cp(t, "a3")
	a.must(t, "sync")
	r = c.ctx(t, "pull")
	wantCode(t, "pull after untrusting A", r, 1)
	syncWantHashes(t, "C's log after untrusting A", c.hashes(t), a1.Hash, a2.Hash)
	// Quarantined under A's name, beside D's earlier entries.
	found := false
	q := syncUnverified(t, c)
	for _, e := range q {
		found = found || e.Device == idA && e.Reason == "untrusted"
	}
	if !found {
		t.Errorf("log --unverified has no entry for untrusted A: %+v\npull: %s", q, r)
	}
	c.wantVerifies(t)

	// Trusting both: the next pull brings everything.
	c.must(t, "devices", "trust", idA)
	c.must(t, "devices", "trust", idD)
	r = c.ctx(t, "pull")
	if r.code != 0 {
		t.Fatalf("pull after trusting A and D: %s", r)
	}
	if h := c.hashes(t); len(h) != 5 {
		t.Fatalf("after trusting A and D, pull (of the remote tip it already rejected) merged nothing: log has %d of 5 records\n%s", len(h), r)
	}
	syncWantHashes(t, "C's log after trusting A and D", c.hashes(t), a1.Hash, a2.Hash, a3.Hash, d1.Hash, d2.Hash)
	c.wantVerifies(t)
}

// tstTrustUntrustedKept: c quarantined only the untrusted device idD's
// records, as untrusted, and its branch holds nothing of idD.
func tstTrustUntrustedKept(t *testing.T, c *syncDevice, idD string) {
	t.Helper()
	q := syncUnverified(t, c)
	if len(q) == 0 {
		t.Fatal("nothing quarantined")
	}
	for _, e := range q {
		if e.Device != idD || e.Reason != "untrusted" {
			t.Fatalf("quarantine entry %+v, want only device %s untrusted", e, idD)
		}
	}
	for _, p := range branchPaths(t, c.dir, c.env) {
		if strings.Contains(p, idD) {
			t.Fatalf("C's branch took %s of the untrusted device", p)
		}
	}
}

// tstTrustDevicesList: c's devices --json lists A trusted with its
// fingerprint, two checkpoints and the last one's time aTS, and the
// untrusted device (if at all) neither trusted nor with checkpoints.
func tstTrustDevicesList(t *testing.T, a, c *syncDevice, idA, idD string, aTS int64) {
	t.Helper()
	devs := syncDevices(t, c)
	da, ok := devs[idA]
	if !ok {
		t.Fatalf("devices --json does not list %s: %+v", idA, devs)
	}
	fpA := status(t, a.dir, a.env).Fingerprint
	if da.Trust != "trusted" || da.Fingerprint != fpA || da.Checkpoints != 2 || da.LastSeen != aTS || da.This {
		t.Fatalf("devices --json for A: %+v (want trusted, fingerprint %s, 2 checkpoints, last seen %d)", da, fpA, aTS)
	}
	if dd, ok := devs[idD]; ok && (dd.Trust == "trusted" || dd.Trust == "pinned" || dd.Checkpoints != 0) {
		t.Fatalf("devices --json for the untrusted device: %+v", dd)
	}
	if txt := c.must(t, "devices"); !strings.Contains(txt, idA) || !strings.Contains(txt, "trusted") {
		t.Fatalf("devices:\n%s", txt)
	}
}

// tstTrustUntrust: devices untrust moves A from ctx.trustedDevice to
// ctx.untrustedDevice, and devices --json says so.
func tstTrustUntrust(t *testing.T, c *syncDevice, idA string) {
	t.Helper()
	c.must(t, "devices", "untrust", idA)
	if got := c.git(t, "config", "--get-all", "ctx.untrustedDevice"); got != idA {
		t.Fatalf("ctx.untrustedDevice = %q", got)
	}
	if out, _, code := run(t, c.dir, c.env, "git", "config", "--get-all", "ctx.trustedDevice"); code == 0 {
		t.Fatalf("ctx.trustedDevice still holds %q", out)
	}
	if got := syncDevices(t, c)[idA].Trust; got != "untrusted" {
		t.Fatalf("devices --json: A is %q after untrust", got)
	}
}

// syncReviewCommit is one entry of `git ctx review --json`.
type syncReviewCommit struct {
	Commit  string   `json:"commit"`
	Subject string   `json:"subject"`
	Parents []string `json:"parents"`
	Records []struct {
		Kind    string `json:"kind"`
		Path    string `json:"path"`
		Hash    string `json:"hash"`
		Device  string `json:"device"`
		Summary string `json:"summary"`
		Status  string `json:"status"`
	} `json:"records"`
}

func syncReview(t *testing.T, d *syncDevice, args ...string) []syncReviewCommit {
	t.Helper()
	out := d.must(t, append([]string{"review", "--json"}, args...)...)
	var list []syncReviewCommit
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decode review --json: %v\n%s", err, out)
	}
	return list
}

// syncReviewed maps each checkpoint a review lists to "device status".
func syncReviewed(list []syncReviewCommit) map[string]string {
	m := map[string]string{}
	for _, c := range list {
		for _, r := range c.Records {
			if r.Kind == "checkpoint" {
				m[r.Hash] = r.Device + " " + r.Status
			}
		}
	}
	return m
}

func syncWantReviewed(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: review lists %v, want %v", what, got, want)
	}
	for h, w := range want {
		if got[h] != w {
			t.Fatalf("%s: review lists %v, want %v", what, got, want)
		}
	}
}

// TestSyncReview: review shows, per commit, what a push would send, or
// after a pull what it brought, with device and verification status.
func TestSyncReview(t *testing.T) {
	t.Parallel()
	s, rem, a := cltTeam(t, "file", "A")
	idA := a.id(t)
	a1 := a.cp(t, "a1 first")

	// Before any push: nothing is tracked, so the whole branch.
	syncWantReviewed(t, "A before its first push", syncReviewed(syncReview(t, a)), map[string]string{a1.Hash: idA + " verified"})
	a.must(t, "push")
	a2 := a.cp(t, "a2 unpushed")
	// What a push would send: only a2's commit.
	list := syncReview(t, a)
	if len(list) != 1 || list[0].Commit != a.tip(t) {
		t.Fatalf("A's review of an unpushed checkpoint: %+v", list)
	}
	if !strings.Contains(list[0].Subject, a2.Hash[:12]) {
		t.Fatalf("review subject %q", list[0].Subject)
	}
	syncWantReviewed(t, "A's unpushed checkpoint", syncReviewed(list), map[string]string{a2.Hash: idA + " verified"})
	txt := a.must(t, "review")
	if want := "  + checkpoint " + a2.Hash[:12] + " by " + idA + " (-/2) verified: a2 unpushed"; !strings.Contains(txt, want) {
		t.Fatalf("review text lacks %q:\n%s", want, txt)
	}
	if !strings.HasPrefix(txt, "commit "+a.tip(t)[:12]+" ") {
		t.Fatalf("review text does not start with the commit:\n%s", txt)
	}
	a.must(t, "push")
	if txt := a.must(t, "review", "refs/remotes/origin/ghyll/memory..ghyll/memory"); !strings.Contains(txt, "Nothing to review") {
		t.Fatalf("review of an empty range:\n%s", txt)
	}

	// B pulls, adds its own, syncs; A then reviews what its pull brought.
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	syncWantReviewed(t, "B after its first pull", syncReviewed(syncReview(t, b)),
		map[string]string{a1.Hash: idA + " verified", a2.Hash: idA + " verified"})
	b.must(t, "init")
	idB := b.id(t)
	b1 := b.cp(t, "b1 from B")
	list = syncReview(t, b)
	keys := 0
	for _, c := range list {
		for _, r := range c.Records {
			if r.Kind == "device_key" && r.Device == idB && r.Status == "new key" {
				keys++
			}
		}
	}
	if keys != 1 {
		t.Fatalf("B's review before pushing does not show its new key once: %+v", list)
	}
	syncWantReviewed(t, "B before pushing", syncReviewed(list), map[string]string{b1.Hash: idB + " verified"})
	b.must(t, "sync")

	a3 := a.cp(t, "a3 concurrent")
	a.must(t, "pull")
	a.must(t, "push")
	syncWantReviewed(t, "A after pulling B's work", syncReviewed(syncReview(t, a)), map[string]string{b1.Hash: idB + " verified"})
	txt = a.must(t, "review")
	if want := "  + checkpoint " + b1.Hash[:12] + " by " + idB + " (-/1) verified: b1 from B"; !strings.Contains(txt, want) {
		t.Fatalf("A's review text lacks %q:\n%s", want, txt)
	}
	if strings.Contains(txt, a3.Hash[:12]) {
		t.Fatalf("A's review of what the pull brought lists A's own a3:\n%s", txt)
	}
}
