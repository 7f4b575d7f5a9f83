package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// snapEntry is one element of `git ctx snapshot list --json`.
type snapEntry struct {
	SnapshotID  string  `json:"snapshot_id"`
	ParentID    *string `json:"parent_id"`
	CreatedAt   string  `json:"created_at"`
	GitCommit   *string `json:"git_commit"`
	GitBranch   *string `json:"git_branch"`
	TokensSaved uint64  `json:"tokens_saved"`
	Signed      bool    `json:"signed"`
	Device      string  `json:"device"`
}

type snapFileResult = testrepo.FileResult

func snapCreate(t *testing.T, d *syncDevice) snapEntry {
	t.Helper()
	var e snapEntry
	out := d.must(t, "snapshot", "create", "--sign", "--json")
	if err := json.Unmarshal([]byte(out), &e); err != nil || !hexHash.MatchString(e.SnapshotID) {
		t.Fatalf("snapshot create --json: %v\n%s", err, out)
	}
	return e
}

func snapList(t *testing.T, d *syncDevice, args ...string) []snapEntry {
	t.Helper()
	var l []snapEntry
	out := d.must(t, append([]string{"snapshot", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("snapshot list --json: %v\n%s", err, out)
	}
	return l
}

func snapVerifyFile(t *testing.T, d *syncDevice, file string) (snapFileResult, result) {
	t.Helper()
	r := d.ctx(t, "verify", file, "--json")
	return testrepo.DecodeVerifyFile(t, file, r.toRepo()), r
}

// TestSnapshotFlow: create, list, show, verify, publish and restore on one
// clone; import and verify of the published file on another; tampering with
// a float, a string or a list element of a published file is caught by
// import and by verify FILE; pull merges another device's snapshots and
// timeline; restore --git refuses a dirty tree and checks out on a clean one.
func TestSnapshotFlow(t *testing.T) {
	s := newSandbox(t)
	f := &snapFlow{s: s, rem: syncNewRemote(t, s, "file")}
	f.a = syncFirstDevice(t, s, f.rem, "A")
	f.a.must(t, "init")
	cliCheckpoint(t, f.a.dir, f.a.env, "-m", "a1: chose sqlite\n\nbecause", "--session", "s1", "--file", "db.go", "--tool", "edit")
	cliCheckpoint(t, f.a.dir, f.a.env, "-m", "a2: wrote the schema", "--session", "s1", "--file", "schema.sql", "--file", "db.go")
	f.head = f.a.git(t, "rev-parse", "HEAD")

	snapFlowCreate(t, f)
	snapFlowVerifyID(t, f)
	snapFlowPublish(t, f)
	snapFlowRestore(t, f)
	f.a.must(t, "push")
	snapFlowImport(t, f)
	snapFlowTampered(t, f)
	snapFlowPull(t, f)
	snapFlowRestoreGit(t, f)
}

// snapFlow is the state TestSnapshotFlow's steps share: device A with two
// checkpoints at head, its snapshots e1 and e2, e2 published as the file
// shared (bytes data), and the clone B.
type snapFlow struct {
	s            *sandbox
	rem          *syncRemote
	a, b         *syncDevice
	head         string
	e1, e2       snapEntry
	shared, data string
}

// snapFlowCreate: create (signed, anchored at HEAD, chained), list (newest
// first, --mine, text) and show --json (the stored file).
func snapFlowCreate(t *testing.T, f *snapFlow) {
	t.Helper()
	a, head := f.a, f.head
	idA := a.id(t)
	e1 := snapCreate(t, a)
	if !e1.Signed || e1.Device != idA || e1.ParentID != nil || e1.GitCommit == nil || *e1.GitCommit != head ||
		e1.GitBranch == nil || *e1.GitBranch != "main" || !strings.HasSuffix(e1.CreatedAt, "+00:00") {
		t.Fatalf("first snapshot: %+v", e1)
	}
	e2 := snapCreate(t, a)
	if e2.ParentID == nil || *e2.ParentID != e1.SnapshotID {
		t.Fatalf("second snapshot's parent: %+v, want %s", e2, e1.SnapshotID)
	}
	list := snapList(t, a)
	if len(list) != 2 || list[0].SnapshotID != e2.SnapshotID || list[1].SnapshotID != e1.SnapshotID || list[0].Device != idA {
		t.Fatalf("list (newest first): %+v", list)
	}
	if mine := snapList(t, a, "--mine"); len(mine) != 2 {
		t.Fatalf("list --mine: %+v", mine)
	}
	if out := a.must(t, "snapshot", "list"); !strings.HasPrefix(out, "2 snapshot(s):\n") || !strings.Contains(out, e2.SnapshotID[:12]) {
		t.Fatalf("list text:\n%s", out)
	}
	raw := a.must(t, "snapshot", "show", e1.SnapshotID[:10], "--json")
	stored := branchFile(t, a.dir, a.env, "repos/"+snapRepoID(t, a)+"/snapshots/"+e1.SnapshotID[:2]+"/"+e1.SnapshotID+".json")
	if strings.TrimSuffix(raw, "\n") != strings.TrimSuffix(stored, "\n") {
		t.Fatalf("show --json is not the stored file:\n%s\nvs\n%s", raw, stored)
	}
	snapWantContent(t, raw)
	f.e1, f.e2 = e1, e2
}

// snapWantContent checks the first snapshot's document: the git anchor,
// the project hashes, the session (task, decisions, files) and lineage.
func snapWantContent(t *testing.T, raw string) {
	t.Helper()
	var doc struct {
		Git struct {
			Commit *string `json:"commit"`
			Branch *string `json:"branch"`
			Dirty  bool    `json:"dirty"`
		} `json:"git"`
		Project struct {
			RootHash     *string `json:"root_hash"`
			IdentityHash *string `json:"identity_hash"`
		} `json:"project"`
		Session *struct {
			SessionID    *string  `json:"session_id"`
			Task         *string  `json:"task"`
			Decisions    []string `json:"decisions"`
			FilesTouched []string `json:"files_touched"`
		} `json:"session"`
		Lineage struct {
			Items []struct {
				Path *string `json:"path"`
			} `json:"items"`
		} `json:"lineage"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Git.Dirty || doc.Project.RootHash == nil || len(*doc.Project.RootHash) != 16 || doc.Project.IdentityHash == nil ||
		doc.Session == nil || doc.Session.Task == nil || *doc.Session.Task != "a2: wrote the schema" ||
		strings.Join(doc.Session.Decisions, "|") != "a1: chose sqlite|a2: wrote the schema" ||
		strings.Join(doc.Session.FilesTouched, "|") != "db.go|schema.sql" || *doc.Session.SessionID != "s1" || len(doc.Lineage.Items) != 3 {
		t.Fatalf("snapshot content:\n%s", raw)
	}
}

// snapFlowVerifyID: snapshot verify/show ID with the reference's messages
// and exit codes.
func snapFlowVerifyID(t *testing.T, f *snapFlow) {
	t.Helper()
	a, e1 := f.a, f.e1
	if out := a.must(t, "snapshot", "verify", e1.SnapshotID[:8]); out != "OK: "+e1.SnapshotID[:12]+" verified (signature + integrity)\n" {
		t.Fatalf("verify: %q", out)
	}
	r := a.ctx(t, "snapshot", "verify", "nomatch")
	wantCode(t, "verify of an unknown id", r, 1)
	if r.stderr != "ERROR: no snapshot matches id 'nomatch'\n" {
		t.Fatalf("verify of an unknown id: %q", r.stderr)
	}
	r = a.ctx(t, "snapshot", "show", "nomatch")
	wantCode(t, "show of an unknown id", r, 1)
	if !strings.Contains(r.stderr, "no snapshot matches id 'nomatch'") {
		t.Fatalf("show of an unknown id: %s", r)
	}
	wantOneLine(t, "show of an unknown id", r.stderr)
	wantCode(t, "verify without id", a.ctx(t, "snapshot", "verify"), 2)
}

// snapFlowPublish: publish is pretty, signed, <id12>.ctxsnapshot.json by
// default; --out writes the same bytes, which verify FILE accepts.
func snapFlowPublish(t *testing.T, f *snapFlow) {
	t.Helper()
	s, a, e2 := f.s, f.a, f.e2
	out := a.must(t, "snapshot", "publish", e2.SnapshotID[:9])
	pub := filepath.Join(a.dir, e2.SnapshotID[:12]+".ctxsnapshot.json")
	data := string(readFile(t, pub))
	if !strings.Contains(out, pub[len(a.dir)+1:]) || !strings.HasPrefix(data, "{\n  \"schema_version\": 1,\n") || !strings.Contains(data, `"algorithm": "ed25519"`) {
		t.Fatalf("publish:\n%s\n%s", out, data)
	}
	shared := filepath.Join(s.root, "shared.ctxsnapshot.json")
	a.must(t, "snapshot", "publish", e2.SnapshotID, "--out", shared)
	if string(readFile(t, shared)) != data {
		t.Fatal("publish --out wrote different bytes")
	}
	os.Remove(pub)
	fr, _ := snapVerifyFile(t, a, shared)
	if fr.Format != "ctxsnapshot" || !fr.Valid || fr.ID != e2.SnapshotID || fr.Error != "" {
		t.Fatalf("verify FILE of a published snapshot: %+v", fr)
	}
	f.shared, f.data = shared, data
}

// snapFlowRestore: restore without --git prints and writes the slice.
func snapFlowRestore(t *testing.T, f *snapFlow) {
	t.Helper()
	s, a, e1, head := f.s, f.a, f.e1, f.head
	outFile := filepath.Join(s.root, "restore", "slice.json")
	out := a.must(t, "snapshot", "restore", e1.SnapshotID[:8], "--out", outFile)
	for _, want := range []string{"restored from snapshot " + e1.SnapshotID[:12], "session  task: a2: wrote the schema",
		"session  +2 decision(s), +2 file(s) resumed", "git      not touched — rerun with --git to check out " + head[:7]} {
		if !strings.Contains(out, want) {
			t.Fatalf("restore output lacks %q:\n%s", want, out)
		}
	}
	var slice struct {
		SnapshotID string   `json:"snapshot_id"`
		Task       string   `json:"task"`
		Decisions  []string `json:"decisions"`
	}
	if err := json.Unmarshal(readFile(t, outFile), &slice); err != nil || slice.SnapshotID != e1.SnapshotID || slice.Task != "a2: wrote the schema" || len(slice.Decisions) != 2 {
		t.Fatalf("restore --out: %v %+v", err, slice)
	}
}

// snapFlowImport: another clone imports the published file: idempotent,
// verified, on its own timeline.
func snapFlowImport(t *testing.T, f *snapFlow) {
	t.Helper()
	e2, shared := f.e2, f.shared
	b := syncCloneDevice(t, f.s, f.rem, "B")
	f.b = b
	b.must(t, "pull")
	b.must(t, "init")
	idB := b.id(t)
	out := b.must(t, "snapshot", "import", shared)
	if !strings.Contains(out, "imported snapshot "+e2.SnapshotID[:12]) || !strings.Contains(out, "signature verified") {
		t.Fatalf("import:\n%s", out)
	}
	if out = b.must(t, "snapshot", "import", shared); !strings.Contains(out, "already imported") {
		t.Fatalf("second import:\n%s", out)
	}
	mine := snapList(t, b, "--mine")
	if len(mine) != 1 || mine[0].SnapshotID != e2.SnapshotID || mine[0].Device != idB {
		t.Fatalf("B's timeline after the import: %+v", mine)
	}
	if out := b.must(t, "snapshot", "verify", e2.SnapshotID[:12]); !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("verify on B: %q", out)
	}
	if fr, _ := snapVerifyFile(t, b, shared); !fr.Valid {
		t.Fatalf("verify FILE on B: %+v", fr)
	}
}

// snapFlowTampered: changing a float, a string or a list element of the
// published file is caught by import and verify FILE; an unsigned copy is
// not valid; nothing refused reaches the timeline.
func snapFlowTampered(t *testing.T, f *snapFlow) {
	t.Helper()
	s, b, e2, data := f.s, f.b, f.e2, f.data
	for name, edit := range map[string][2]string{
		"float":  {`"compression_rate": 0.0`, `"compression_rate": 0.5`},
		"string": {`"task": "a2: wrote the schema"`, `"task": "a2: wrote the schemas"`},
		"list":   {`"a1: chose sqlite"`, `"a1: chose postgres"`},
	} {
		if !strings.Contains(data, edit[0]) {
			t.Fatalf("%s: published file lacks %s", name, edit[0])
		}
		bad := filepath.Join(s.root, "bad-"+name+".json")
		writeFile(t, bad, strings.Replace(data, edit[0], edit[1], 1))
		r := b.ctx(t, "snapshot", "import", bad)
		wantCode(t, "import of a file with a changed "+name, r, 1)
		if !strings.Contains(r.stderr, "integrity check failed: snapshot body does not match its id") {
			t.Fatalf("import of a changed %s: %s", name, r)
		}
		fr, vr := snapVerifyFile(t, b, bad)
		wantCode(t, "verify FILE with a changed "+name, vr, 1)
		if fr.Valid || fr.Format != "ctxsnapshot" || fr.ID != e2.SnapshotID || fr.Error == "" {
			t.Fatalf("verify FILE with a changed %s: %+v", name, fr)
		}
	}
	unsigned := strings.Replace(data, data[strings.Index(data, `"signature": {`):strings.LastIndex(data, "}")], "\"signature\": null\n", 1)
	writeFile(t, filepath.Join(s.root, "unsigned.json"), unsigned)
	if fr, _ := snapVerifyFile(t, b, filepath.Join(s.root, "unsigned.json")); fr.Valid || fr.Error != "unsigned" {
		t.Fatalf("verify FILE of an unsigned snapshot: %+v", fr)
	}
	if len(snapList(t, b, "--mine")) != 1 {
		t.Fatal("a refused import changed the timeline")
	}
}

// snapFlowPull: B snapshots too and syncs; A's pull merges B's snapshots
// and timeline, which verify reports.
func snapFlowPull(t *testing.T, f *snapFlow) {
	t.Helper()
	a, b, e2 := f.a, f.b, f.e2
	idB := b.id(t)
	commitFiles(t, b.dir, b.env, "b work", map[string]string{"b.txt": "b\n"})
	b.git(t, "push", "-q", "origin", "main")
	eb := snapCreate(t, b)
	if eb.ParentID == nil || *eb.ParentID != e2.SnapshotID {
		t.Fatalf("B's snapshot's parent: %+v", eb)
	}
	b.must(t, "sync")
	out := a.must(t, "pull")
	all := snapList(t, a)
	if len(all) != 4 || all[0].SnapshotID != eb.SnapshotID || all[0].Device != idB {
		t.Fatalf("A's list after the pull: %+v\n%s", all, out)
	}
	rep := a.wantVerifies(t)
	var full struct {
		Timelines []struct {
			Device   string `json:"device"`
			Verified int    `json:"verified"`
		} `json:"timelines"`
	}
	json.Unmarshal([]byte(rep.Raw), &full)
	if len(full.Timelines) != 2 {
		t.Fatalf("verify reports timelines: %s", rep.Raw)
	}
	if r := a.ctx(t, "verify"); r.code != 0 || !strings.Contains(r.stdout, "OK   device "+idB+": 2 snapshots") {
		t.Fatalf("verify text: %s", r)
	}
}

// snapFlowRestoreGit: restore --git is refused on a dirty tree and checks
// out (detached) on a clean one.
func snapFlowRestoreGit(t *testing.T, f *snapFlow) {
	t.Helper()
	a, e1, head := f.a, f.e1, f.head
	commitFiles(t, a.dir, a.env, "later", map[string]string{"later.txt": "x\n"})
	writeFile(t, filepath.Join(a.dir, "untracked.txt"), "dirty\n")
	r := a.ctx(t, "snapshot", "restore", e1.SnapshotID[:8], "--git")
	wantCode(t, "restore --git on a dirty tree", r, 1)
	if !strings.Contains(r.stdout, "git      SKIPPED — working tree has uncommitted changes (commit or stash first)") {
		t.Fatalf("restore --git on a dirty tree: %s", r)
	}
	wantOneLine(t, "restore --git on a dirty tree", r.stderr)
	if got := a.git(t, "rev-parse", "HEAD"); got == head {
		t.Fatal("a refused restore moved HEAD")
	}
	os.Remove(filepath.Join(a.dir, "untracked.txt"))
	out := a.must(t, "snapshot", "restore", e1.SnapshotID[:8], "--git")
	if !strings.Contains(out, "git      checked out "+head[:7]) || a.git(t, "rev-parse", "HEAD") != head {
		t.Fatalf("restore --git on a clean tree:\n%s", out)
	}
	if br := a.git(t, "rev-parse", "--abbrev-ref", "HEAD"); br != "HEAD" {
		t.Fatalf("restore --git left HEAD on %s, want detached", br)
	}
	// Detached: the anchor's branch is literally HEAD.
	if e := snapCreate(t, a); e.GitBranch == nil || *e.GitBranch != "HEAD" {
		t.Fatalf("detached snapshot branch: %+v", e)
	}
}

// TestSnapshotPullRejectsForgery: a timeline entry whose snapshot was
// changed (a forged entry) is rejected by pull, with a reason, and nothing
// past it is merged; an orphan snapshot file is rejected too.
func TestSnapshotPullRejectsForgery(t *testing.T) {
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.must(t, "push")
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	eb := snapCreate(t, b)
	repo := snapRepoID(t, b)
	path := "repos/" + repo + "/snapshots/" + eb.SnapshotID[:2] + "/" + eb.SnapshotID + ".json"
	body := branchFile(t, b.dir, b.env, path)
	forged := strings.Replace(body, `"tokens_saved": 0`, `"tokens_saved": 7`, 1)
	orphan := "repos/" + repo + "/snapshots/ab/" + strings.Repeat("ab", 32) + ".json"
	rewriteBranch(t, b.dir, b.env, "forge", fileEdit{path: path, content: forged}, fileEdit{path: orphan, content: body})
	b.must(t, "push")
	r := a.ctx(t, "pull", "--json")
	if strings.Contains(r.stdout, `"added": 1`) {
		t.Fatalf("pull took a forged snapshot: %s", r)
	}
	for _, want := range []string{`"reason": "bad_id"`, `"reason": "orphan_file"`} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("pull --json lacks %s: %s", want, r)
		}
	}
	if l := snapList(t, a); len(l) != 0 {
		t.Fatalf("A lists forged snapshots: %+v", l)
	}
	a.wantVerifies(t)
}

// TestSnapshotGhyllLayout: snapshot commands need the ctx-v1 layout.
func TestSnapshotGhyllLayout(t *testing.T) {
	s := newSandbox(t)
	dir := newRepo(t, s, "g")
	env := s.env("G")
	mustCtx(t, dir, env, "init", "--layout", "ghyll-v1")
	for _, args := range [][]string{{"snapshot", "create"}, {"snapshot", "list"}} {
		r := gitCtx(t, dir, env, args...)
		wantCode(t, strings.Join(args, " ")+" on ghyll-v1", r, 3)
		if !strings.Contains(r.stderr, "ctx-v1 layout") {
			t.Fatalf("%v: %s", args, r)
		}
		wantOneLine(t, "ghyll-v1", r.stderr)
	}
}

// snapRepoID is the repository id the device's branch uses.
func snapRepoID(t *testing.T, d *syncDevice) string {
	t.Helper()
	out := gitOut(t, d.dir, d.env, "ls-tree", "--name-only", memRef+":repos")
	ids := strings.Fields(out)
	if len(ids) != 1 {
		t.Fatalf("repos on the branch: %q", out)
	}
	return ids[0]
}
