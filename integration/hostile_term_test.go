package integration

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	cpformat "github.com/git-ctx/git-ctx/formats/checkpoint"
)

// termUnsafe reports whether a terminal could act on r instead of showing
// it (tab and newline are the layout's own and allowed here).
func termUnsafe(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// termWantSafe fails when out holds a raw control character, a C1
// control, a bidirectional override or isolate, or invalid UTF-8.
func termWantSafe(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		if r == utf8.RuneError && size == 1 {
			t.Errorf("%s: invalid UTF-8 byte %#x at %d:\n%q", what, out[i], i, out)
			return
		}
		if termUnsafe(r) {
			t.Errorf("%s: raw %U at byte %d reaches the terminal:\n%q", what, r, i, out)
			return
		}
		i += size
	}
}

// termCtx runs git ctx as device d, wants one of the exit codes and checks
// that neither stdout nor stderr could act on a terminal.
func termCtx(t *testing.T, d *syncDevice, codes []int, args ...string) result {
	t.Helper()
	r := d.ctx(t, args...)
	ok := false
	for _, c := range codes {
		ok = ok || r.code == c
	}
	if !ok {
		t.Fatalf("%s: git ctx %q: want exit %v, got %s", d.name, args, codes, r)
	}
	what := fmt.Sprintf("%s: git ctx %s", d.name, strings.Join(args, " "))
	termWantSafe(t, what+" (stdout)", r.stdout)
	termWantSafe(t, what+" (stderr)", r.stderr)
	return r
}

// termLines is out's lines without the trailing empty one.
func termLines(out string) []string {
	out = strings.TrimSuffix(out, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// termForger signs checkpoints as one device with its own key, the way a
// device of the attacker's would: they verify, so a trust-on-first-use
// pull merges them.
type termForger struct {
	id   string
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	cps  []*cpformat.Checkpoint
}

func termNewForger(t *testing.T, id string) *termForger {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &termForger{id: id, priv: priv, pub: pub}
}

// sign appends a sealed record to the forger's chain.
func (f *termForger) sign(t *testing.T, repoURL, session, model, summary string, files, tools []string) *cpformat.Checkpoint {
	t.Helper()
	parent := cpformat.ZeroHash
	if n := len(f.cps); n > 0 {
		parent = f.cps[n-1].Hash
	}
	cp := &cpformat.Checkpoint{
		ParentHash: parent, DeviceID: f.id, AuthorID: "mallory@example.org",
		Timestamp: time.Now().UnixNano() + int64(len(f.cps)), RepoRemote: repoURL, Branch: "main",
		SessionID: session, Turn: len(f.cps) + 1, ActiveModel: model, Summary: summary,
		Embedding: []float32{}, FilesTouched: files, ToolsUsed: tools,
	}
	if err := cp.Seal(f.priv); err != nil {
		t.Fatal(err)
	}
	f.cps = append(f.cps, cp)
	return cp
}

// edits are the tree entries publishing the forger's key, chain and records.
func (f *termForger) edits(t *testing.T, repoID string) []fileEdit {
	t.Helper()
	var chain strings.Builder
	out := []fileEdit{{path: "devices/" + f.id + ".pub", content: string(cpformat.EncodePublicKey(f.pub))}}
	for _, cp := range f.cps {
		data, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fileEdit{path: ctxV1CheckpointPath(repoID, cp.Hash), content: string(data)})
		chain.Write(cp.Entry().MarshalLine())
	}
	return append(out, fileEdit{path: "repos/" + repoID + "/chains/" + f.id + "/00000000.jsonl", content: chain.String()})
}

// TestHostileTerminalText: an attacker's clone M pushes, with git plumbing,
// validly signed records of two new devices (one of them with control
// characters in its very id) whose summaries, files, tools, sessions and
// models carry carriage returns, ESC sequences (clear screen, cursor up,
// window title), C1 controls, bidirectional overrides and isolates and a
// forged copy of an honest log line; commits whose subjects carry the
// same; and paths with control characters in their names that every pull
// rejects. The honest clones A and B pull and run every human-readable
// command: no output byte could act on a terminal, log and search print
// one line per record, the forged line never stands on a line of its own,
// --json keeps every value exact, the merge commits git-ctx writes are
// clean, and honest records made before and after the attack still merge
// on both clones.
func TestHostileTerminalText(t *testing.T) {
	t.Parallel()
	s, rem, a := cltTeam(t, "file", "A")
	a1 := a.cp(t, "a1 honest zebra before the attack")
	a.must(t, "push")
	b, b1 := cltJoin(t, s, rem, a, "b1 honest zebra before the attack")
	repoID := status(t, a.dir, a.env).RepoID
	honestLine := tstTermHonestLine(t, a, a1)

	// The attacker: a clone of the remote with its own devices.
	m := syncCloneDevice(t, s, rem, "M")
	m.git(t, "update-ref", memRef, "refs/remotes/origin/ghyll/memory")
	mal := termNewForger(t, "mallory-laptop-0badc0de")
	evil := termNewForger(t, "evil\x1b[2J\x1b]0;pwned\x07\r\u202eved-\u009b1A")
	forged := []*cpformat.Checkpoint{
		mal.sign(t, repoID, "s\x1b[2J", "m\u202egpt",
			"fix zebra login\r"+honestLine,
			[]string{"a\x1b]0;title\x07.go", "b\u009b31m.go", "c\r\n\x1b[1A.go"}, []string{"edit\rX", "\u2066run\u2069"}),
		mal.sign(t, repoID, "s2", "gpt",
			"refactor zebra\n\x1b[1A"+honestLine+"\n\u2066hidden\u2069 \u202eevil \u2028ls",
			[]string{"ok.go"}, []string{"edit"}),
		mal.sign(t, repoID, "s2", "gpt",
			"zebra \x1b[31mred\x1b[0m \u009b2J c1 \x7f del", []string{"ok.go"}, []string{"edit"}),
		evil.sign(t, repoID, "s\x1b]0;x\x07", "gpt", "zebra from a device named with escapes", []string{"x.go"}, []string{"edit"}),
	}
	badPath := "notes\x1b]0;pwned\x07\r\u202eevil\n\x1b[1Aline.txt"
	orphan := "repos/" + repoID + "/checkpoints/zz/\x1b[2J\rforged.json"
	subject := "ctx: checkpoint \x1b[2J\x1b]0;pwned\x07\rforged \u202eevil \u009b1A"
	rewriteBranch(t, m.dir, m.env, subject, append(mal.edits(t, repoID), evil.edits(t, repoID)...)...)
	rewriteBranch(t, m.dir, m.env, "ctx: odd files\r\x1b[1A", fileEdit{path: badPath, content: "x\n"}, fileEdit{path: orphan, content: "{}\n"})
	m.git(t, "push", "-q", "origin", memRef+":"+memRef)

	// The honest clones pull: the new devices' records verify and merge,
	// the odd paths are rejected (exit 1).
	for _, d := range []*syncDevice{a, b} {
		tstTermPulled(t, d, mal.id, forged, badPath, orphan)
	}

	// Honest records made after the attack still merge on both clones.
	a2 := a.cp(t, "a2 honest zebra after the attack")
	termCtx(t, a, []int{0}, "push")
	termCtx(t, b, []int{0, 1}, "pull")
	b2 := b.cp(t, "b2 honest zebra after the attack")
	termCtx(t, b, []int{0}, "push")
	termCtx(t, a, []int{0, 1}, "pull")
	for _, d := range []*syncDevice{a, b} {
		verified := termVerified(t, d)
		for _, r := range append([]record{a1, a2, b1, b2}, termRecords(mal.cps)...) {
			if !verified[r.Hash] {
				t.Errorf("%s: record %s (%q) is not merged and verified", d.name, r.Hash[:12], r.Summary)
			}
		}
	}

	for _, d := range []*syncDevice{a, b} {
		tstTermDisplayed(t, d, a1, forged, mal.id)
		tstTermJSONExact(t, d, mal.id, subject)
	}
}

// tstTermHonestLine is the line A's log prints for a1.
func tstTermHonestLine(t *testing.T, a *syncDevice, a1 record) string {
	t.Helper()
	var honestLine string
	for _, l := range termLines(a.must(t, "log")) {
		if strings.HasPrefix(l, a1.Hash[:12]+" ") {
			honestLine = l
		}
	}
	if honestLine == "" {
		t.Fatal("setup: A's log has no line for a1")
	}
	return honestLine
}

// tstTermPulled: d's pull exits 1, merges the forged device malID's three
// records, keeps every merged record exact in log --json and show --json,
// and quarantines the odd paths by their exact names.
func tstTermPulled(t *testing.T, d *syncDevice, malID string, forged []*cpformat.Checkpoint, badPath, orphan string) {
	t.Helper()
	out := termCtx(t, d, []int{1}, "pull").stdout
	syncWantLine(t, d.name+" pull", out, syncPulled(malID, 3))
	got := map[string]record{}
	for _, r := range logJSON(t, d.dir, d.env) {
		got[r.Hash] = r
	}
	for _, cp := range forged {
		tstTermForgedKept(t, d, got, cp, malID)
	}
	q := syncUnverified(t, d)
	for _, p := range []string{badPath, orphan} {
		found := false
		for _, r := range q {
			found = found || r.Record == p
		}
		if !found {
			t.Errorf("%s: log --unverified --json lacks the exact path %q: %+v", d.name, p, q)
		}
	}
}

// tstTermForgedKept: a forged record d merged (malID's must be) reads back
// exactly through log --json (got) and show --json.
func tstTermForgedKept(t *testing.T, d *syncDevice, got map[string]record, cp *cpformat.Checkpoint, malID string) {
	t.Helper()
	r, ok := got[cp.Hash]
	switch {
	case !ok && cp.DeviceID == malID:
		t.Fatalf("%s: the forged device's record %s was not merged", d.name, cp.Hash[:12])
	case !ok:
		return // a device id with control characters may be refused; it must still display safely
	}
	if r.Summary != cp.Summary || r.Session != cp.SessionID || r.Model != cp.ActiveModel || r.Device != cp.DeviceID ||
		strings.Join(r.Files, "\x00") != strings.Join(cp.FilesTouched, "\x00") || strings.Join(r.Tools, "\x00") != strings.Join(cp.ToolsUsed, "\x00") {
		t.Errorf("%s: log --json changed record %s:\n got %+v\nwant %+v", d.name, cp.Hash[:12], r, cp)
	}
	// show --json prints the stored file byte for byte.
	data, _ := cp.MarshalFile()
	if out := d.must(t, "show", cp.Hash, "--json"); out != string(data)+"\n" {
		t.Errorf("%s: show --json %s:\n got %q\nwant %q", d.name, cp.Hash[:12], out, data)
	}
}

// tstTermDisplayed: d's log, search and show print one line per entry (a
// forged copy of a1's line never stands as a line of its own), and every
// command's output, text or JSON, is safe on a terminal.
func tstTermDisplayed(t *testing.T, d *syncDevice, a1 record, forged []*cpformat.Checkpoint, malID string) {
	t.Helper()
	n := len(logJSON(t, d.dir, d.env))
	lines := termLines(termCtx(t, d, []int{0}, "log").stdout)
	if len(lines) != n {
		t.Errorf("%s: log prints %d lines for %d records:\n%s", d.name, len(lines), n, strings.Join(lines, "\n"))
	}
	honest := 0
	for _, l := range lines {
		// Printed escaped after a visible \r, the copy is text inside
		// the forger's line; it must not start a line of its own.
		if strings.HasPrefix(l, a1.Hash[:12]+" ") {
			honest++
		}
	}
	if honest != 1 {
		t.Errorf("%s: log shows a1's line %d times (a forged copy stands as a line):\n%s", d.name, honest, strings.Join(lines, "\n"))
	}
	termCtx(t, d, []int{0}, "log", "--unverified")
	termCtx(t, d, []int{0}, "log", "--device", malID)
	var hits []json.RawMessage
	if err := json.Unmarshal([]byte(d.must(t, "search", "zebra", "-n", "100", "--json")), &hits); err != nil {
		t.Fatal(err)
	}
	if sl := termLines(termCtx(t, d, []int{0}, "search", "zebra", "-n", "100").stdout); len(sl) != len(hits) || len(hits) < 7 {
		t.Errorf("%s: search prints %d lines for %d hits:\n%s", d.name, len(sl), len(hits), strings.Join(sl, "\n"))
	}
	for _, cp := range forged {
		if r := d.ctx(t, "show", cp.Hash); r.code == 0 {
			out := termCtx(t, d, []int{0}, "show", cp.Hash).stdout
			_, body, _ := strings.Cut(out, "\n\n")
			for _, l := range termLines(body) {
				if !strings.HasPrefix(l, "    ") {
					t.Errorf("%s: show %s: summary line %q is not indented", d.name, cp.Hash[:12], l)
				}
			}
		}
	}
	termCtx(t, d, []int{0}, "review", memRef)
	termCtx(t, d, []int{0}, "review")
	termCtx(t, d, []int{0}, "devices")
	termCtx(t, d, []int{0}, "status")
	termCtx(t, d, []int{0, 1}, "doctor")
	termCtx(t, d, []int{0, 1}, "verify")
	// JSON keeps exact values and never puts a raw control on the screen.
	for _, args := range [][]string{{"log", "--json"}, {"log", "--unverified", "--json"}, {"devices", "--json"},
		{"review", memRef, "--json"}, {"search", "zebra", "--json"}} {
		termCtx(t, d, []int{0}, args...)
	}
}

// tstTermJSONExact: d's devices --json lists malID, review --json keeps the
// attacker's commit subject exactly, and the merge commits git-ctx wrote
// name the devices and rejections safely.
func tstTermJSONExact(t *testing.T, d *syncDevice, malID, subject string) {
	t.Helper()
	if !tstJSONListHas(t, d.must(t, "devices", "--json"), "id", malID) {
		t.Errorf("%s: devices --json lacks %s", d.name, malID)
	}
	if !tstJSONListHas(t, d.must(t, "review", memRef, "--json"), "subject", subject) {
		t.Errorf("%s: review --json does not keep the commit subject %q exactly", d.name, subject)
	}
	// The merge commits git-ctx wrote name the devices and rejections safely.
	for _, c := range strings.Split(d.git(t, "rev-list", "--merges", "--author=Test User", memRef), "\n") {
		if c != "" {
			termWantSafe(t, d.name+": merge message of "+c, d.git(t, "log", "-1", "--format=%B", c))
		}
	}
}

// termVerified is the set of hashes log --json marks verified.
func termVerified(t *testing.T, d *syncDevice) map[string]bool {
	t.Helper()
	var list []struct {
		Hash     string `json:"hash"`
		Verified bool   `json:"verified"`
	}
	if err := json.Unmarshal([]byte(d.must(t, "log", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range list {
		out[e.Hash] = e.Verified
	}
	return out
}

// termRecords is cps as records (hash and summary).
func termRecords(cps []*cpformat.Checkpoint) []record {
	var out []record
	for _, cp := range cps {
		out = append(out, record{Hash: cp.Hash, Summary: cp.Summary})
	}
	return out
}
