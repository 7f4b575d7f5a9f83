package integration

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Hostile snapshot timelines: an attacker with push access (clone M, raw
// git plumbing, force-push) rewrites device timelines with lines naming
// authentic, signed snapshots. Timeline lines are signed by the timeline's
// owner for their position (docs/FORMAT.md §2.3), so none of it may reach
// an honest clone, while honest snapshots and checkpoints pushed before and
// after keep merging on both clones.

// tlWorld is the bare remote, honest clones A and B, and the attacker M.
type tlWorld struct {
	s      *sandbox
	a, b   *syncDevice
	mDir   string
	mEnv   []string
	repoID string
	idA    string
	idB    string
}

func (w *tlWorld) tlTimelinePath(device string) string {
	return "repos/" + w.repoID + "/timelines/" + device + "/00000000.jsonl"
}

// tlFile is path on d's memory branch ("" when it does not exist).
func tlFile(t *testing.T, dir string, env []string, path string) string {
	t.Helper()
	out, _, code := run(t, dir, env, "git", "show", memRef+":"+path)
	if code != 0 {
		return ""
	}
	return out
}

// tlLines splits a timeline into its lines (each with its "\n").
func tlLines(data string) []string {
	l := strings.SplitAfter(data, "\n")
	return l[:len(l)-1]
}

var tlLineSigRE = regexp.MustCompile(`,"seq":[0-9]+,"prev":"[0-9a-f]{64}","line_sig":"[0-9a-f]{128}"`)

// tlLegacy is line in the unsigned form (the bare lean-ctx entry).
func tlLegacy(line string) string { return tlLineSigRE.ReplaceAllString(line, "") }

// tlSnapshot creates a signed snapshot on d and returns its id.
func tlSnapshot(t *testing.T, d *syncDevice) string {
	t.Helper()
	var v struct {
		ID string `json:"snapshot_id"`
	}
	out := d.must(t, "snapshot", "create", "--sign", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.ID) != 64 {
		t.Fatalf("snapshot create --json on %s: %v\n%s", d.name, err, out)
	}
	return v.ID
}

// tlPublish makes M's branch the remote's current one with edits applied
// (raw plumbing) and force-pushes it.
func (w *tlWorld) tlPublish(t *testing.T, edits ...fileEdit) {
	t.Helper()
	gitOut(t, w.mDir, w.mEnv, "fetch", "-q", "origin", "+"+memRef+":refs/remotes/origin/ghyll/memory")
	gitOut(t, w.mDir, w.mEnv, "update-ref", memRef, "refs/remotes/origin/ghyll/memory")
	rewriteBranch(t, w.mDir, w.mEnv, "ctx: snapshot 000000000000 by someone", edits...)
	gitOut(t, w.mDir, w.mEnv, "push", "-q", "--force", "origin", memRef+":"+memRef)
}

// tlWantRefused pulls on d: the pull must report a rejection (a non-zero
// exit and a new quarantine entry about device), leave every timeline of
// the branch as it was, and the branch must still verify. The quarantine
// must name device with a timeline reason (bad_timeline_signature,
// unsigned_timeline_entry, misplaced_timeline_entry or fork).
func (w *tlWorld) tlWantRefused(t *testing.T, what string, d *syncDevice, device string) {
	t.Helper()
	before := map[string]string{}
	for _, id := range []string{w.idA, w.idB} {
		before[id] = tlFile(t, d.dir, d.env, w.tlTimelinePath(id))
	}
	r := d.ctx(t, "pull")
	if r.code == 0 {
		t.Errorf("%s: %s's pull exited 0 (the forged timeline was accepted):\n%s", what, d.name, r)
	}
	for id, old := range before {
		if got := tlFile(t, d.dir, d.env, w.tlTimelinePath(id)); got != old {
			t.Errorf("%s: %s's branch now holds a different timeline for %s:\n%s\nwas:\n%s", what, d.name, id, got, old)
		}
	}
	q := syncUnverified(t, d)
	found := false
	for _, e := range q {
		switch e.Reason {
		case "bad_timeline_signature", "unsigned_timeline_entry", "misplaced_timeline_entry", "fork":
			found = found || e.Device == device
		}
	}
	if !found {
		t.Errorf("%s: %s's pull quarantined nothing about %s: %+v\n%s", what, d.name, device, q, r)
	}
	d.wantVerifies(t)
}

// TestHostileTimelineEntries: with push access, M (1) adds to A's timeline
// an entry naming B's authentic signed snapshot (B's own signed line, and
// the same entry as an unsigned line), (2) publishes a whole timeline for
// A built from B's snapshot lines (signed and unsigned forms) while A has
// none, (3) replays A's own signed lines at another position of A's
// timeline and in B's timeline. Both honest clones refuse every one; the
// honest records and snapshots pushed before and after (including A's real
// import of one of B's snapshots) merge on both.
func TestHostileTimelineEntries(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	w := &tlWorld{s: s}
	w.a = syncFirstDevice(t, s, rem, "A")
	a := w.a
	a.must(t, "init")
	cps := []record{a.cp(t, "a: chose sqlite")}
	a.must(t, "push")
	w.b = syncCloneDevice(t, s, rem, "B")
	b := w.b
	b.must(t, "pull")
	cps = append(cps, b.cp(t, "b: read the schema"))
	b1 := tlSnapshot(t, b)
	b.must(t, "sync")
	a.must(t, "pull")
	w.idA, w.idB, w.repoID = a.id(t), b.id(t), status(t, a.dir, a.env).RepoID
	w.mDir, w.mEnv = filepath.Join(s.root, "M"), s.env("M")
	mustRun(t, s.root, w.mEnv, "git", "clone", "-q", rem.url, w.mDir)

	bLines := tlLines(tlFile(t, b.dir, b.env, w.tlTimelinePath(w.idB)))
	if len(bLines) != 1 || !strings.Contains(bLines[0], b1) {
		t.Fatalf("setup: B's timeline %q", bLines)
	}
	if tlFile(t, a.dir, a.env, w.tlTimelinePath(w.idA)) != "" {
		t.Fatal("setup: A already has a timeline")
	}

	// (2) A whole timeline for A, built from B's snapshot, while A has none.
	for _, form := range []struct{ name, line string }{{"B's signed line", bLines[0]}, {"unsigned line", tlLegacy(bLines[0])}} {
		what := "timeline for A built from " + form.name
		w.tlPublish(t, fileEdit{path: w.tlTimelinePath(w.idA), content: form.line})
		w.tlWantRefused(t, what, b, w.idA)
		w.tlWantRefused(t, what, a, w.idA)
	}
	a.must(t, "sync") // the honest tree replaces M's on the remote

	// Honest news between the attacks: A's first snapshot and a checkpoint.
	cps = append(cps, a.cp(t, "a: schema"))
	a1 := tlSnapshot(t, a)
	a.must(t, "sync")
	b.must(t, "pull")
	aLines := tlLines(tlFile(t, b.dir, b.env, w.tlTimelinePath(w.idA)))
	if len(aLines) != 1 || !strings.Contains(aLines[0], a1) {
		t.Fatalf("B did not merge A's honest snapshot: %q", aLines)
	}

	// (1) An entry naming B's authentic snapshot appended to A's timeline.
	for _, form := range []struct{ name, line string }{{"B's signed line", bLines[0]}, {"unsigned line", tlLegacy(bLines[0])}} {
		what := "B's snapshot added to A's timeline as " + form.name
		w.tlPublish(t, fileEdit{path: w.tlTimelinePath(w.idA), content: aLines[0] + form.line})
		w.tlWantRefused(t, what, b, w.idA)
		w.tlWantRefused(t, what, a, w.idA)
	}
	a.must(t, "sync")
	b.must(t, "sync")

	// A publishes two more snapshots that B has not pulled yet.
	a2, a3 := tlSnapshot(t, a), tlSnapshot(t, a)
	a.must(t, "sync")
	honestA := tlFile(t, a.dir, a.env, w.tlTimelinePath(w.idA))
	full := tlLines(honestA)
	if len(full) != 3 || !strings.Contains(full[1], a2) || !strings.Contains(full[2], a3) {
		t.Fatalf("A's timeline: %q", full)
	}

	// (3a) A's own third line replayed at position 2 (a2 dropped).
	w.tlPublish(t, fileEdit{path: w.tlTimelinePath(w.idA), content: full[0] + full[2]})
	w.tlWantRefused(t, "A's line replayed at another position", b, w.idA)
	w.tlWantRefused(t, "A's line replayed at another position", a, w.idA)
	a.must(t, "sync")
	b.must(t, "pull")
	if got := tlFile(t, b.dir, b.env, w.tlTimelinePath(w.idA)); got != honestA {
		t.Fatalf("B did not merge A's honest timeline after the replay: %q", got)
	}
	// (3b) A's own line replayed in B's timeline (A's timeline honest).
	w.tlPublish(t, fileEdit{path: w.tlTimelinePath(w.idA), content: honestA},
		fileEdit{path: w.tlTimelinePath(w.idB), content: bLines[0] + full[1]})
	w.tlWantRefused(t, "A's line replayed in B's timeline", b, w.idB)
	w.tlWantRefused(t, "A's line replayed in B's timeline", a, w.idB)

	// Honest records after the attacks, and a real import: B publishes a
	// snapshot, A imports it onto its own timeline.
	a.must(t, "sync")
	b.must(t, "sync")
	cps = append(cps, b.cp(t, "b: api"))
	b2 := tlSnapshot(t, b)
	file := filepath.Join(s.root, "b2.ctxsnapshot.json")
	b.must(t, "snapshot", "publish", b2, "--out", file)
	b.must(t, "sync")
	a.must(t, "pull")
	a.must(t, "snapshot", "import", file)
	cps = append(cps, a.cp(t, "a: migration"))
	a.must(t, "sync")
	b.must(t, "sync")

	want := map[string]bool{}
	for _, c := range cps {
		want[c.Hash] = true
	}
	for _, d := range []*syncDevice{a, b} {
		tstTimelineHonest(t, w, d, want, b2)
	}
	if ta, tb, tr := a.git(t, "rev-parse", memRef+"^{tree}"), b.git(t, "rev-parse", memRef+"^{tree}"),
		gitOut(t, rem.bare, s.env("M"), "rev-parse", memRef+"^{tree}"); ta != tb || ta != tr {
		t.Errorf("trees differ after the last sync: A %s, B %s, remote %s", ta, tb, tr)
	}
}

// tstTimelineHonest: after the attacks of TestHostileTimelineEntries, d
// verifies, holds every honest checkpoint in want, has both timelines with
// the import of B's snapshot b2, and lists six line-signed snapshots.
func tstTimelineHonest(t *testing.T, w *tlWorld, d *syncDevice, want map[string]bool, b2 string) {
	t.Helper()
	d.wantVerifies(t)
	got := d.hashes(t)
	for h := range want {
		if !got[h] {
			t.Errorf("%s lacks honest checkpoint %s", d.name, h[:12])
		}
	}
	tlA := tlLines(tlFile(t, d.dir, d.env, w.tlTimelinePath(w.idA)))
	tlB := tlLines(tlFile(t, d.dir, d.env, w.tlTimelinePath(w.idB)))
	if len(tlA) != 4 || !strings.Contains(tlA[3], b2) || len(tlB) != 2 || !strings.Contains(tlB[1], b2) {
		t.Errorf("%s's timelines after the honest news: A %q, B %q", d.name, tlA, tlB)
	}
	var list []struct {
		ID         string `json:"snapshot_id"`
		Device     string `json:"device"`
		LineSigned bool   `json:"line_signed"`
	}
	if err := json.Unmarshal([]byte(d.must(t, "snapshot", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Errorf("%s lists %d snapshots, want 6: %+v", d.name, len(list), list)
	}
	for _, e := range list {
		if !e.LineSigned {
			t.Errorf("%s: snapshot %s on %s's timeline is not labelled line-signed", d.name, e.ID[:12], e.Device)
		}
	}
}
