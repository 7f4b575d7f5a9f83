package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// unhChainPath is a device's first chain segment in the ctx-v1 layout.
func unhChainPath(repoID, device string) string {
	return "repos/" + repoID + "/chains/" + device + "/00000000.jsonl"
}

// unhSummaries maps each summary `log --json` lists to its entry's
// verified flag.
func unhSummaries(t *testing.T, d *syncDevice) map[string]bool {
	t.Helper()
	out := d.must(t, "log", "--json")
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
func unhWantSummary(t *testing.T, d *syncDevice, want string) {
	t.Helper()
	testrepo.WantVerifiedSummary(t, d.name, unhSummaries(t, d), want)
}

// unhAppendPoisoned appends to d's chain, with plumbing, a record as older
// versions wrote one from text holding a Latin-1 byte: the hash computed
// over the raw byte (which JSON encodes as \ufffd), the file read back
// holding U+FFFD, so the record fails its own hash.
func unhAppendPoisoned(t *testing.T, d *syncDevice, repoID, summary string) string {
	t.Helper()
	id, err := identity.Load(d.s.ctxHome(d.name), "")
	if err != nil {
		t.Fatal(err)
	}
	chainPath := unhChainPath(repoID, id.DeviceID)
	lines := branchFile(t, d.dir, d.env, chainPath)
	entries := parseChain(t, lines)
	last := entries[len(entries)-1]
	cp := &ckpt.Checkpoint{Version: 1, ParentHash: last.Hash, DeviceID: id.DeviceID, AuthorID: "test@example.org",
		Timestamp: last.TS + 1000, Turn: 2, Summary: summary}
	if cp.Hash, err = cp.ComputeHash(ckpt.RuleSeedV1); err != nil {
		t.Fatal(err)
	}
	cp.Signature = hex.EncodeToString(ed25519.Sign(id.Private, []byte(cp.Hash)))
	file, err := cp.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ckpt.Parse(file); err != nil {
		t.Fatal(err)
	} else if _, err := back.MatchRule(); err == nil {
		t.Fatal("setup: the poisoned record verifies")
	}
	rewriteBranch(t, d.dir, d.env, "ctx: checkpoint (an older version)",
		fileEdit{path: ctxV1CheckpointPath(repoID, cp.Hash), content: string(file)},
		fileEdit{path: chainPath, content: lines + string(cp.Entry().MarshalLine())})
	return cp.Hash
}

// unhDoctor runs doctor --json and returns the finding of check.
func unhDoctor(t *testing.T, d *syncDevice, check string) (int, map[string]string) {
	t.Helper()
	r := d.ctx(t, "doctor", "--json")
	var rep struct {
		Findings []map[string]string `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode doctor --json: %v\n%s", err, r)
	}
	for _, f := range rep.Findings {
		if f["check"] == check {
			return r.code, f
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
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.cp(t, "a1 verified before")
	repoID := cliStatus(t, a.dir, a.env).RepoID
	bad := unhAppendPoisoned(t, a, repoID, "caf\xe9 from an older version")
	a.cp(t, "a2 links to the poisoned record")
	a.must(t, "push")
	oldID := a.id(t)

	b := syncCloneDevice(t, s, rem, "B")
	if r := b.ctx(t, "pull"); r.code != 1 || !strings.Contains(r.stdout, "hash_mismatch") {
		t.Fatalf("B's pull should quarantine the poisoned record: %s", r)
	}
	unhWantSummary(t, b, "a1 verified before")

	// A is told, and told what to do.
	newIDPattern := regexp.MustCompile(`git config ctx\.device ([a-z0-9-]+) && git ctx init`)
	r := a.ctx(t, "reindex")
	if !newIDPattern.MatchString(r.stderr) {
		t.Fatalf("the UNVERIFIED notice on A's own chain does not name the way forward: %s", r)
	}
	if r := a.ctx(t, "log"); r.code != 0 || !strings.Contains(r.stdout, "UNVERIFIED") || !newIDPattern.MatchString(r.stderr) {
		t.Fatalf("log on A does not name the way forward for its UNVERIFIED records: %s", r)
	}
	if out := a.must(t, "show", bad[:16]); !strings.Contains(out, "UNVERIFIED") || !newIDPattern.MatchString(out) {
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
	a.git(t, "config", "ctx.device", m[1])
	a.must(t, "init")
	a3 := a.cp(t, "a3 on the new chain")
	if a3.Device != m[1] || a3.Device == oldID {
		t.Fatalf("a3 written by %s, want the new id %s", a3.Device, m[1])
	}
	if _, f := unhDoctor(t, a, "own chain"); f["level"] != "OK" {
		t.Fatalf("doctor after the new chain: %v", f)
	}
	if r := a.ctx(t, "sync"); r.code != 0 {
		t.Fatalf("A's sync: %s", r)
	}
	r = b.ctx(t, "pull")
	if r.code != 0 && r.code != 1 {
		t.Fatalf("B's pull: %s", r)
	}
	syncWantLine(t, "B's pull after the new chain", r.stdout, syncPulled(m[1], 1))
	for _, d := range []*syncDevice{a, b} {
		unhWantSummary(t, d, "a3 on the new chain")
		unhWantSummary(t, d, "a1 verified before")
	}
	b.wantVerifies(t)
}
