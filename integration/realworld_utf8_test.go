package integration

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
)

// unhSummaries maps each summary `log --json` lists to its entry's
// verified flag.
func unhSummaries(t *testing.T, d *syncDevice) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, e := range unhEntries(t, d) {
		var s string
		var v bool
		json.Unmarshal(e["summary"], &s)
		json.Unmarshal(e["verified"], &v)
		out[s] = v
	}
	return out
}

// unhWantSummary fails unless d lists a verified record whose summary
// contains want.
func unhWantSummary(t *testing.T, d *syncDevice, want string) {
	t.Helper()
	for s, v := range unhSummaries(t, d) {
		if strings.Contains(s, want) {
			if !v {
				t.Fatalf("device %s: the record %q is not verified", d.name, s)
			}
			return
		}
	}
	t.Fatalf("device %s: no record contains %q: %v", d.name, want, unhSummaries(t, d))
}

// TestUTF8RecordsVerify: text that is not valid UTF-8 (a Latin-1 byte in
// -m, invalid bytes in --stdin, commits made under i18n.commitEncoding
// ISO-8859-1 and windows-1252 recorded by the post-commit hook) gives
// records that verify locally and, after push and pull, on a teammate;
// commit messages are decoded by their declared encoding.
func TestUTF8RecordsVerify(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")

	r := a.ctx(t, "checkpoint", "--json", "-m", "caf\xe9 au lait")
	wantCode(t, "checkpoint -m with a Latin-1 byte", r, 0)
	if rec := decodeRecord(t, []byte(r.stdout)); rec.Summary != "caf\uFFFD au lait" {
		t.Fatalf("summary %q, want the Latin-1 byte replaced by U+FFFD", rec.Summary)
	}
	r = execute(t, a.dir, a.env, []byte("{\"message\": \"na\xefve stdin\", \"files\": [\"caf\xe9.txt\"]}"),
		"git", "ctx", "checkpoint", "--json", "--stdin")
	wantCode(t, "checkpoint --stdin with invalid UTF-8", r, 0)
	if rec := decodeRecord(t, []byte(r.stdout)); !utf8.ValidString(rec.Summary) || len(rec.Files) != 1 || !utf8.ValidString(rec.Files[0]) {
		t.Fatalf("--stdin record holds invalid UTF-8: %+v", rec)
	}

	// The post-commit hook, for commits whose messages are stored in a
	// legacy encoding (the commit object names it in its encoding header).
	a.must(t, "hooks", "install")
	for _, c := range []struct{ enc, msg, want string }{
		{"ISO-8859-1", "r\xe9sum\xe9 en latin-1\n\nCorps: d\xe9j\xe0 vu", "résumé en latin-1"},
		{"windows-1252", "\x93quoted\x94 \x80 in cp1252", "“quoted” € in cp1252"},
	} {
		writeFile(t, a.dir+"/f-"+c.enc+".txt", c.enc)
		a.git(t, "add", "--", "f-"+c.enc+".txt")
		r := execute(t, a.dir, a.env, nil, "git", "-c", "i18n.commitEncoding="+c.enc, "commit", "-q", "-m", c.msg)
		if r.code != 0 {
			t.Fatalf("commit under %s: %s", c.enc, r)
		}
		head := a.git(t, "rev-parse", "HEAD")
		if raw := a.git(t, "cat-file", "commit", head); !strings.Contains(raw, "\nencoding "+c.enc+"\n") {
			t.Fatalf("setup: the commit has no encoding header:\n%s", raw)
		}
		unhWantSummary(t, a, c.want)
	}
	if s := unhSummaries(t, a); len(s) != 4 {
		t.Fatalf("A holds %d records, want 4: %v", len(s), s)
	}
	for s := range unhSummaries(t, a) {
		if strings.Contains(s, "Corps") && !strings.Contains(s, "déjà vu") {
			t.Fatalf("the commit body was not decoded: %q", s)
		}
	}
	a.wantVerifies(t)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	out := b.must(t, "pull")
	syncWantLine(t, "B's pull", out, syncPulled(a.id(t), 4))
	b.wantVerifies(t)
	for _, want := range []string{"caf\uFFFD au lait", "na\uFFFDve stdin", "résumé en latin-1", "“quoted” €"} {
		unhWantSummary(t, b, want)
	}
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
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.cp(t, "a1 verified before")
	repoID := status(t, a.dir, a.env).RepoID
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
