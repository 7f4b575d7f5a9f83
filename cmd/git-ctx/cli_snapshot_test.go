package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

type snapFileResult = testrepo.FileResult

func snapCreate(t *testing.T, d *testrepo.Device) output.Snapshot {
	t.Helper()
	var e output.Snapshot
	out := d.Must(t, "snapshot", "create", "--sign", "--json")
	if err := json.Unmarshal([]byte(out), &e); err != nil || !testrepo.HexHash.MatchString(e.SnapshotID) {
		t.Fatalf("snapshot create --json: %v\n%s", err, out)
	}
	return e
}

func snapList(t *testing.T, d *testrepo.Device, args ...string) []output.Snapshot {
	t.Helper()
	var l []output.Snapshot
	out := d.Must(t, append([]string{"snapshot", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("snapshot list --json: %v\n%s", err, out)
	}
	return l
}

func snapVerifyFile(t *testing.T, d *testrepo.Device, file string) (snapFileResult, testrepo.Result) {
	t.Helper()
	r := d.Ctx(t, "verify", file, "--json")
	return testrepo.DecodeVerifyFile(t, file, r), r
}

// TestSnapshotFlow: create, list, show, verify, publish and restore on one
// clone; import and verify of the published file on another; tampering with
// a float, a string or a list element of a published file is caught by
// import and by verify FILE; pull merges another device's snapshots and
// timeline; restore --git refuses a dirty tree and checks out on a clean one.
func TestSnapshotFlow(t *testing.T) {
	s := newSandbox(t)
	f := &snapFlow{s: s, rem: testrepo.NewBareRemote(t, s, "remote")}
	f.a = inproc.OriginDevice(t, s, "A", f.rem)
	f.a.Must(t, "init")
	inproc.Checkpoint(t, f.a.Dir, f.a.Env, "-m", "a1: chose sqlite\n\nbecause", "--session", "s1", "--file", "db.go", "--tool", "edit")
	inproc.Checkpoint(t, f.a.Dir, f.a.Env, "-m", "a2: wrote the schema", "--session", "s1", "--file", "schema.sql", "--file", "db.go")
	f.head = f.a.Git(t, "rev-parse", "HEAD")

	snapFlowCreate(t, f)
	snapFlowVerifyID(t, f)
	snapFlowPublish(t, f)
	snapFlowRestore(t, f)
	f.a.Must(t, "push")
	snapFlowImport(t, f)
	snapFlowTampered(t, f)
	snapFlowPull(t, f)
	snapFlowRestoreGit(t, f)
}

// snapFlow is the state TestSnapshotFlow's steps share: device A with two
// checkpoints at head, its snapshots e1 and e2, e2 published as the file
// shared (bytes data), and the clone B.
type snapFlow struct {
	s            *testrepo.Sandbox
	rem          string
	a, b         *testrepo.Device
	head         string
	e1, e2       output.Snapshot
	shared, data string
}

// snapFlowCreate: create (signed, anchored at HEAD, chained), list (newest
// first, --mine, text) and show --json (the stored file).
func snapFlowCreate(t *testing.T, f *snapFlow) {
	t.Helper()
	a, head := f.a, f.head
	idA := a.ID(t)
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
	if out := a.Must(t, "snapshot", "list"); !strings.HasPrefix(out, "2 snapshot(s):\n") || !strings.Contains(out, e2.SnapshotID[:12]) {
		t.Fatalf("list text:\n%s", out)
	}
	raw := a.Must(t, "snapshot", "show", e1.SnapshotID[:10], "--json")
	stored := testrepo.BranchFile(t, a.Dir, a.Env, "repos/"+snapRepoID(t, a)+"/snapshots/"+e1.SnapshotID[:2]+"/"+e1.SnapshotID+".json")
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
	if out := a.Must(t, "snapshot", "verify", e1.SnapshotID[:8]); out != "OK: "+e1.SnapshotID[:12]+" verified (signature + integrity)\n" {
		t.Fatalf("verify: %q", out)
	}
	r := a.Ctx(t, "snapshot", "verify", "nomatch")
	testrepo.WantCode(t, "verify of an unknown id", r, 1)
	if r.Stderr != "ERROR: no snapshot matches id 'nomatch'\n" {
		t.Fatalf("verify of an unknown id: %q", r.Stderr)
	}
	r = a.Ctx(t, "snapshot", "show", "nomatch")
	testrepo.WantCode(t, "show of an unknown id", r, 1)
	if !strings.Contains(r.Stderr, "no snapshot matches id 'nomatch'") {
		t.Fatalf("show of an unknown id: %s", r)
	}
	testrepo.WantOneLine(t, "show of an unknown id", r.Stderr)
	testrepo.WantCode(t, "verify without id", a.Ctx(t, "snapshot", "verify"), 2)
}

// snapFlowPublish: publish is pretty, signed, <id12>.ctxsnapshot.json by
// default; --out writes the same bytes, which verify FILE accepts.
func snapFlowPublish(t *testing.T, f *snapFlow) {
	t.Helper()
	s, a, e2 := f.s, f.a, f.e2
	out := a.Must(t, "snapshot", "publish", e2.SnapshotID[:9])
	pub := filepath.Join(a.Dir, e2.SnapshotID[:12]+".ctxsnapshot.json")
	data := string(testrepo.ReadFile(t, pub))
	if !strings.Contains(out, pub[len(a.Dir)+1:]) || !strings.HasPrefix(data, "{\n  \"schema_version\": 1,\n") || !strings.Contains(data, `"algorithm": "ed25519"`) {
		t.Fatalf("publish:\n%s\n%s", out, data)
	}
	shared := filepath.Join(s.Root, "shared.ctxsnapshot.json")
	a.Must(t, "snapshot", "publish", e2.SnapshotID, "--out", shared)
	if string(testrepo.ReadFile(t, shared)) != data {
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
	outFile := filepath.Join(s.Root, "restore", "slice.json")
	out := a.Must(t, "snapshot", "restore", e1.SnapshotID[:8], "--out", outFile)
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
	if err := json.Unmarshal(testrepo.ReadFile(t, outFile), &slice); err != nil || slice.SnapshotID != e1.SnapshotID || slice.Task != "a2: wrote the schema" || len(slice.Decisions) != 2 {
		t.Fatalf("restore --out: %v %+v", err, slice)
	}
}

// snapFlowImport: another clone imports the published file: idempotent,
// verified, on its own timeline.
func snapFlowImport(t *testing.T, f *snapFlow) {
	t.Helper()
	e2, shared := f.e2, f.shared
	b := inproc.CloneDevice(t, f.s, "B", f.rem)
	f.b = b
	b.Must(t, "pull")
	b.Must(t, "init")
	idB := b.ID(t)
	out := b.Must(t, "snapshot", "import", shared)
	if !strings.Contains(out, "imported snapshot "+e2.SnapshotID[:12]) || !strings.Contains(out, "signature verified") {
		t.Fatalf("import:\n%s", out)
	}
	if out = b.Must(t, "snapshot", "import", shared); !strings.Contains(out, "already imported") {
		t.Fatalf("second import:\n%s", out)
	}
	mine := snapList(t, b, "--mine")
	if len(mine) != 1 || mine[0].SnapshotID != e2.SnapshotID || mine[0].Device != idB {
		t.Fatalf("B's timeline after the import: %+v", mine)
	}
	if out := b.Must(t, "snapshot", "verify", e2.SnapshotID[:12]); !strings.HasPrefix(out, "OK: ") {
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
		bad := filepath.Join(s.Root, "bad-"+name+".json")
		testrepo.WriteFile(t, bad, strings.Replace(data, edit[0], edit[1], 1))
		r := b.Ctx(t, "snapshot", "import", bad)
		testrepo.WantCode(t, "import of a file with a changed "+name, r, 1)
		if !strings.Contains(r.Stderr, "integrity check failed: snapshot body does not match its id") {
			t.Fatalf("import of a changed %s: %s", name, r)
		}
		fr, vr := snapVerifyFile(t, b, bad)
		testrepo.WantCode(t, "verify FILE with a changed "+name, vr, 1)
		if fr.Valid || fr.Format != "ctxsnapshot" || fr.ID != e2.SnapshotID || fr.Error == "" {
			t.Fatalf("verify FILE with a changed %s: %+v", name, fr)
		}
	}
	unsigned := strings.Replace(data, data[strings.Index(data, `"signature": {`):strings.LastIndex(data, "}")], "\"signature\": null\n", 1)
	testrepo.WriteFile(t, filepath.Join(s.Root, "unsigned.json"), unsigned)
	if fr, _ := snapVerifyFile(t, b, filepath.Join(s.Root, "unsigned.json")); fr.Valid || fr.Error != "unsigned" {
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
	idB := b.ID(t)
	testrepo.CommitFiles(t, b.Dir, b.Env, "b work", map[string]string{"b.txt": "b\n"})
	b.Git(t, "push", "-q", "origin", "main")
	eb := snapCreate(t, b)
	if eb.ParentID == nil || *eb.ParentID != e2.SnapshotID {
		t.Fatalf("B's snapshot's parent: %+v", eb)
	}
	b.Must(t, "sync")
	out := a.Must(t, "pull")
	all := snapList(t, a)
	if len(all) != 4 || all[0].SnapshotID != eb.SnapshotID || all[0].Device != idB {
		t.Fatalf("A's list after the pull: %+v\n%s", all, out)
	}
	rep := a.WantVerifies(t)
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
	if r := a.Ctx(t, "verify"); r.Code != 0 || !strings.Contains(r.Stdout, "OK   device "+idB+": 2 snapshots") {
		t.Fatalf("verify text: %s", r)
	}
}

// snapFlowRestoreGit: restore --git is refused on a dirty tree and checks
// out (detached) on a clean one.
func snapFlowRestoreGit(t *testing.T, f *snapFlow) {
	t.Helper()
	a, e1, head := f.a, f.e1, f.head
	testrepo.CommitFiles(t, a.Dir, a.Env, "later", map[string]string{"later.txt": "x\n"})
	testrepo.WriteFile(t, filepath.Join(a.Dir, "untracked.txt"), "dirty\n")
	r := a.Ctx(t, "snapshot", "restore", e1.SnapshotID[:8], "--git")
	testrepo.WantCode(t, "restore --git on a dirty tree", r, 1)
	if !strings.Contains(r.Stdout, "git      SKIPPED — working tree has uncommitted changes (commit or stash first)") {
		t.Fatalf("restore --git on a dirty tree: %s", r)
	}
	testrepo.WantOneLine(t, "restore --git on a dirty tree", r.Stderr)
	if got := a.Git(t, "rev-parse", "HEAD"); got == head {
		t.Fatal("a refused restore moved HEAD")
	}
	os.Remove(filepath.Join(a.Dir, "untracked.txt"))
	out := a.Must(t, "snapshot", "restore", e1.SnapshotID[:8], "--git")
	if !strings.Contains(out, "git      checked out "+head[:7]) || a.Git(t, "rev-parse", "HEAD") != head {
		t.Fatalf("restore --git on a clean tree:\n%s", out)
	}
	if br := a.Git(t, "rev-parse", "--abbrev-ref", "HEAD"); br != "HEAD" {
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
	s, rem, a := newTeam(t)
	a.Must(t, "push")
	b := inproc.CloneDevice(t, s, "B", rem)
	b.Must(t, "pull")
	b.Must(t, "init")
	eb := snapCreate(t, b)
	repo := snapRepoID(t, b)
	path := "repos/" + repo + "/snapshots/" + eb.SnapshotID[:2] + "/" + eb.SnapshotID + ".json"
	body := testrepo.BranchFile(t, b.Dir, b.Env, path)
	forged := strings.Replace(body, `"tokens_saved": 0`, `"tokens_saved": 7`, 1)
	orphan := "repos/" + repo + "/snapshots/ab/" + strings.Repeat("ab", 32) + ".json"
	testrepo.RewriteBranch(t, b.Dir, b.Env, "forge", testrepo.FileEdit{Path: path, Content: forged}, testrepo.FileEdit{Path: orphan, Content: body})
	b.Must(t, "push")
	r := a.Ctx(t, "pull", "--json")
	if strings.Contains(r.Stdout, `"added": 1`) {
		t.Fatalf("pull took a forged snapshot: %s", r)
	}
	for _, want := range []string{`"reason": "bad_id"`, `"reason": "orphan_file"`} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("pull --json lacks %s: %s", want, r)
		}
	}
	if l := snapList(t, a); len(l) != 0 {
		t.Fatalf("A lists forged snapshots: %+v", l)
	}
	a.WantVerifies(t)
}

// TestSnapshotGhyllLayout: snapshot commands need the ctx-v1 layout.
func TestSnapshotGhyllLayout(t *testing.T) {
	s := newSandbox(t)
	dir := testrepo.NewRepo(t, s, "g")
	env := s.Env("G")
	inproc.MustCtx(t, dir, env, "init", "--layout", "ghyll-v1")
	for _, args := range [][]string{{"snapshot", "create"}, {"snapshot", "list"}} {
		r := inproc.Ctx(t, dir, env, args...)
		testrepo.WantCode(t, strings.Join(args, " ")+" on ghyll-v1", r, 3)
		if !strings.Contains(r.Stderr, "ctx-v1 layout") {
			t.Fatalf("%v: %s", args, r)
		}
		testrepo.WantOneLine(t, "ghyll-v1", r.Stderr)
	}
}

// snapRepoID is the repository id the device's branch uses.
func snapRepoID(t *testing.T, d *testrepo.Device) string {
	t.Helper()
	out := inproc.GitOut(t, d.Dir, d.Env, "ls-tree", "--name-only", testrepo.MemRef+":repos")
	ids := strings.Fields(out)
	if len(ids) != 1 {
		t.Fatalf("repos on the branch: %q", out)
	}
	return ids[0]
}
