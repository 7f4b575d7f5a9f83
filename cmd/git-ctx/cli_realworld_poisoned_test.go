package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// unhSummaries maps each summary `log --json` lists to its entry's
// verified flag.
func unhSummaries(t *testing.T, d *testrepo.Device) map[string]bool {
	t.Helper()
	out := d.Must(t, "log", "--json")
	var list []struct {
		Summary  string `json:"summary"`
		Verified bool   `json:"verified"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decode log --json: %v\n%s", err, out)
	}
	m := map[string]bool{}
	for _, e := range list {
		m[e.Summary] = e.Verified
	}
	return m
}

// unhWantSummary fails unless d lists a verified record whose summary
// contains want.
func unhWantSummary(t *testing.T, d *testrepo.Device, want string) {
	t.Helper()
	testrepo.WantVerifiedSummary(t, d.Name, unhSummaries(t, d), want)
}

// unhAppendPoisoned appends to d's chain, with plumbing, a record as older
// versions wrote one from text holding a Latin-1 byte: the hash computed
// over the raw byte (which JSON encodes as \ufffd), the file read back
// holding U+FFFD, so the record fails its own hash.
func unhAppendPoisoned(t *testing.T, d *testrepo.Device, repoID, summary string) string {
	t.Helper()
	file := d.AppendOwn(t, repoID, "ctx: checkpoint (an older version)", ckpt.RuleSeedV1, &ckpt.Checkpoint{Version: 1,
		AuthorID: "test@example.org", Turn: 2, Summary: summary})
	back, err := ckpt.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.MatchRule(); err == nil {
		t.Fatal("setup: the poisoned record verifies")
	}
	return back.Hash
}

// unhDoctor runs doctor --json and returns the finding of check.
func unhDoctor(t *testing.T, d *testrepo.Device, check string) (int, map[string]string) {
	t.Helper()
	r := d.Ctx(t, "doctor", "--json")
	var rep struct {
		Findings []map[string]string `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("decode doctor --json: %v\n%s", err, r)
	}
	for _, f := range rep.Findings {
		if f["check"] == check {
			return r.Code, f
		}
	}
	t.Fatalf("doctor has no %q finding:\n%s", check, r)
	return 0, nil
}

// TestPoisonedChainRecovery: a device whose chain holds a record that fails
// its own hash (written by an older version) is told so by doctor and the
// UNVERIFIED warnings, which name the way forward: a new chain under a new
// device id. After it, the device's new records verify on a teammate, and
// the records that verified before stay verified.
func TestPoisonedChainRecovery(t *testing.T) {
	s, rem, a := newTeam(t)
	a.Checkpoint(t, "a1 verified before")
	repoID := inproc.Status(t, a.Dir, a.Env).RepoID
	bad := unhAppendPoisoned(t, a, repoID, "caf\xe9 from an older version")
	a.Checkpoint(t, "a2 links to the poisoned record")
	a.Must(t, "push")
	oldID := a.ID(t)

	b := inproc.CloneDevice(t, s, "B", rem)
	if r := b.Ctx(t, "pull"); r.Code != 1 || !strings.Contains(r.Stdout, "hash_mismatch") {
		t.Fatalf("B's pull should quarantine the poisoned record: %s", r)
	}
	unhWantSummary(t, b, "a1 verified before")

	// A is told, and told what to do.
	newIDPattern := regexp.MustCompile(`git config ctx\.device ([a-z0-9-]+) && git ctx init`)
	r := a.Ctx(t, "reindex")
	if !newIDPattern.MatchString(r.Stderr) {
		t.Fatalf("the UNVERIFIED notice on A's own chain does not name the way forward: %s", r)
	}
	if r := a.Ctx(t, "log"); r.Code != 0 || !strings.Contains(r.Stdout, "UNVERIFIED") || !newIDPattern.MatchString(r.Stderr) {
		t.Fatalf("log on A does not name the way forward for its UNVERIFIED records: %s", r)
	}
	if out := a.Must(t, "show", bad[:16]); !strings.Contains(out, "UNVERIFIED") || !newIDPattern.MatchString(out) {
		t.Fatalf("show of the poisoned record does not name the way forward:\n%s", out)
	}
	code, f := unhDoctor(t, a, "own chain")
	m := newIDPattern.FindStringSubmatch(f["fix"])
	if code != 1 || f["level"] != "FAIL" || m == nil || !strings.Contains(f["detail"], "hash_mismatch") {
		t.Fatalf("doctor's own chain finding (exit %d): %v", code, f)
	}
	if _, f := unhDoctor(t, b, "own chain"); f["level"] != "OK" {
		t.Fatalf("doctor on B: %v", f)
	}

	// The way forward, as doctor names it.
	a.Git(t, "config", "ctx.device", m[1])
	a.Must(t, "init")
	a3 := a.Checkpoint(t, "a3 on the new chain")
	if a3.Device != m[1] || a3.Device == oldID {
		t.Fatalf("a3 written by %s, want the new id %s", a3.Device, m[1])
	}
	if _, f := unhDoctor(t, a, "own chain"); f["level"] != "OK" {
		t.Fatalf("doctor after the new chain: %v", f)
	}
	if r := a.Ctx(t, "sync"); r.Code != 0 {
		t.Fatalf("A's sync: %s", r)
	}
	r = b.Ctx(t, "pull")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("B's pull: %s", r)
	}
	testrepo.WantLine(t, "B's pull after the new chain", r.Stdout, testrepo.Pulled(m[1], 1))
	for _, d := range []*testrepo.Device{a, b} {
		unhWantSummary(t, d, "a3 on the new chain")
		unhWantSummary(t, d, "a1 verified before")
	}
	b.WantVerifies(t)
}
