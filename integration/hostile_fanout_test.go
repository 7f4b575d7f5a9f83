package integration

import (
	"crypto/ed25519"
	"encoding/hex"
	"path"
	"regexp"
	"strings"
	"testing"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Issue 18 item 7: the fan-out depth of ctx-v1 checkpoint paths (FORMAT
// §2.2). A branch made before the LAYOUT fanout field (LAYOUT "ctx-v1")
// keeps one level; `git ctx init` makes two (LAYOUT "ctx-v1 fanout=2").

// fanCheckpointRe matches a checkpoint path at one or two fan-out levels.
var fanCheckpointRe = map[int]*regexp.Regexp{
	1: regexp.MustCompile(`^repos/[0-9a-f]{64}/checkpoints/([0-9a-f]{2})/([0-9a-f]{64})\.json$`),
	2: regexp.MustCompile(`^repos/[0-9a-f]{64}/checkpoints/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{64})\.json$`),
}

// fanOneLevelRoot gives d a memory branch as a git-ctx from before the
// fanout field made it: a root commit holding only LAYOUT "ctx-v1\n".
// `git ctx init` then publishes d's key on it.
func fanOneLevelRoot(t *testing.T, d *syncDevice) {
	t.Helper()
	blob := strings.TrimSpace(binRun(t, d.dir, d.env, []byte("ctx-v1\n"), "git", "hash-object", "-w", "--stdin").Stdout)
	tree := strings.TrimSpace(binRun(t, d.dir, d.env, []byte("100644 blob "+blob+"\tLAYOUT\n"), "git", "mktree").Stdout)
	commit := d.git(t, "commit-tree", tree, "-m", "ctx: init memory branch (ctx-v1) by an older git-ctx")
	d.git(t, "update-ref", memRef, commit, "")
}

// fanWantPaths fails unless every checkpoint file on d's branch sits at
// depth levels with the fan-out directories its hash names, LAYOUT is
// layout, and the branch holds exactly the records want.
func fanWantPaths(t *testing.T, d *syncDevice, layout string, depth int, want ...record) {
	t.Helper()
	if got := branchFile(t, d.dir, d.env, "LAYOUT"); got != layout+"\n" {
		t.Fatalf("device %s: LAYOUT holds %q, want %q", d.name, got, layout)
	}
	held := map[string]bool{}
	for _, p := range branchPaths(t, d.dir, d.env) {
		if !strings.Contains(p, "/checkpoints/") {
			continue
		}
		m := fanCheckpointRe[depth].FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("device %s: checkpoint path %s is not at fan-out depth %d", d.name, p, depth)
		}
		hash := m[len(m)-1]
		if m[1] != hash[:2] || depth == 2 && m[2] != hash[2:4] {
			t.Fatalf("device %s: %s sits under the wrong fan-out directories", d.name, p)
		}
		held[hash] = true
	}
	testrepo.WantHashes(t, "checkpoint files of "+d.name, held, syncHashesOf(want...)...)
}

// TestFanDepthsThroughRemote: an existing one-level branch and a new
// two-level one, each shared by two devices through a real bare remote:
// appends on either device stay at the branch's depth, pull merges them,
// verify passes and the cache (log) lists the same records on both. On the
// one-level branch the second device writes as an older git-ctx does
// (plumbing, one level, plain git push), and the new binary merges it.
func TestFanDepthsThroughRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, layout string
		depth        int
	}{
		{"one level (LAYOUT ctx-v1, an existing branch)", "ctx-v1", 1},
		{"two levels (LAYOUT ctx-v1 fanout=2, a new branch)", "ctx-v1 fanout=2", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			rem := syncNewRemote(t, s, "file")
			a := syncFirstDevice(t, s, rem, "A")
			if tc.depth == 1 {
				fanOneLevelRoot(t, a)
			}
			a.must(t, "init")
			all := []record{a.cp(t, "a1"), a.cp(t, "a2")}
			a.must(t, "push")

			b := syncCloneDevice(t, s, rem, "B")
			b.must(t, "pull")
			b.must(t, "init")
			if tc.depth == 1 {
				// B is an older git-ctx: it writes one level deep and pushes
				// with plain git.
				b.must(t, "checkpoint", "-m", "b0") // the chain's first record, by this binary
				repoID := status(t, b.dir, b.env).RepoID
				fanAppendAt(t, b, repoID, "b1 by an older git-ctx", testrepo.CtxV1OneLevelCheckpointPath)
				b.git(t, "push", "-q", "origin", memRef+":"+memRef)
				all = append(all, logJSON(t, b.dir, b.env)...)
				all = fanUnique(all)
			} else {
				all = append(all, b.cp(t, "b1"))
				b.must(t, "push")
			}
			out := a.must(t, "pull")
			if strings.Contains(out, "rejected") {
				t.Fatalf("A's pull rejected something:\n%s", out)
			}
			all = append(all, a.cp(t, "a3"))
			a.must(t, "push")
			b.must(t, "pull")
			for _, d := range []*syncDevice{a, b} {
				fanWantPaths(t, d, tc.layout, tc.depth, all...)
				d.wantVerifies(t)
				syncWantHashes(t, "log of "+d.name, d.hashes(t), syncHashesOf(all...)...)
			}
		})
	}
}

// fanAppendAt appends a record with summary to d's ctx-v1 chain of repoID
// with plumbing only, signed with d's key and linked to its chain, the file
// placed at pathFor(repoID, hash): what another writer of the format would
// commit. It returns the record's hash.
func fanAppendAt(t *testing.T, d *syncDevice, repoID, summary string, pathFor func(repoID, hash string) string) string {
	t.Helper()
	id, err := identity.Load(d.s.ctxHome(d.name), "")
	if err != nil {
		t.Fatal(err)
	}
	chainPath := testrepo.CtxV1ChainPath(repoID, id.DeviceID)
	lines := branchFile(t, d.dir, d.env, chainPath)
	entries := parseChain(t, lines)
	last := entries[len(entries)-1]
	cp := &ckpt.Checkpoint{Version: ckpt.RuleSeedV1.Version(), AuthorID: "b@example.org", Summary: summary, Turn: len(entries) + 1,
		ParentHash: last.Hash, DeviceID: id.DeviceID, Timestamp: last.TS + 1000}
	if cp.Hash, err = cp.ComputeHash(ckpt.RuleSeedV1); err != nil {
		t.Fatal(err)
	}
	cp.Signature = hex.EncodeToString(ed25519.Sign(id.Private, []byte(cp.Hash)))
	file, err := cp.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	rewriteBranch(t, d.dir, d.env, "ctx: checkpoint "+cp.Hash[:12]+" by "+id.DeviceID,
		fileEdit{path: pathFor(repoID, cp.Hash), content: string(file)},
		fileEdit{path: chainPath, content: lines + string(cp.Entry().MarshalLine())})
	return cp.Hash
}

// fanUnique drops repeated records (by hash), keeping the first.
func fanUnique(rs []record) []record {
	seen := map[string]bool{}
	var out []record
	for _, r := range rs {
		if !seen[r.Hash] {
			seen[r.Hash] = true
			out = append(out, r)
		}
	}
	return out
}

// TestFanUnknownDepthRefused: a branch whose LAYOUT names a fan-out depth
// this binary does not know (as a future git-ctx might write, or as a
// two-level branch looks to a binary from before the field) is refused with
// one clear line naming the LAYOUT and exit 1 by every command that reads
// it — verify, log, an append, a pull of it — and nothing is written: the
// branch is never read at a depth it does not have.
func TestFanUnknownDepthRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.cp(t, "a1")
	a.must(t, "push")
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")

	rewriteBranch(t, a.dir, a.env, "a newer git-ctx's layout", fileEdit{path: "LAYOUT", content: "ctx-v1 fanout=3\n"})
	a.git(t, "push", "-q", "--force", "origin", memRef+":"+memRef)
	wantRefused := func(d *syncDevice, what string, args ...string) {
		t.Helper()
		before := d.tip(t)
		r := d.ctx(t, args...)
		wantCode(t, what, r, 1)
		wantOneLine(t, what, r.stderr)
		if !strings.Contains(r.stderr, `unknown memory branch layout "ctx-v1 fanout=3"`) || !strings.Contains(r.stderr, "upgrade git-ctx") {
			t.Fatalf("%s: the error does not name the LAYOUT and the way out:\n%s", what, r)
		}
		if d.tip(t) != before {
			t.Fatalf("%s moved the memory branch", what)
		}
	}
	wantRefused(a, "verify", "verify")
	wantRefused(a, "log", "log")
	wantRefused(a, "an append", "checkpoint", "-m", "a2")
	wantRefused(b, "B's pull", "pull")
	b.wantVerifies(t)
	c := syncCloneDevice(t, s, rem, "C")
	wantRefused(c, "a new clone's pull", "pull")
	if c.tip(t) != "" {
		t.Fatal("a new clone's refused pull created the memory branch")
	}
}

// TestFanWrongDepthRecordRejected: a record signed by its device and
// named by its chain, but committed (plumbing) at the other depth's path —
// one level deep on a two-level branch, two deep on a one-level branch —
// is a layout problem for verify and is never merged by a pull: the chain
// misses its record there (missing_checkpoint) and the misplaced file is
// an orphan (orphan_file). The puller's branch stays verified.
func TestFanWrongDepthRecordRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		depth  int
		layout string
		wrong  func(repoID, hash string) string
		// what verify names: the file, or the directory where a file
		// belongs (a one-level branch holds files, not directories, under
		// checkpoints/xx/)
		reported func(p string) string
	}{
		{"one-level path on a two-level branch", 2, "ctx-v1 fanout=2", testrepo.CtxV1OneLevelCheckpointPath, func(p string) string { return p }},
		{"two-level path on a one-level branch", 1, "ctx-v1", testrepo.CtxV1CheckpointPath, path.Dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			rem := syncNewRemote(t, s, "file")
			a := syncFirstDevice(t, s, rem, "A")
			if tc.depth == 1 {
				fanOneLevelRoot(t, a)
			}
			a.must(t, "init")
			a1 := a.cp(t, "a1")
			a.must(t, "push")
			b := syncCloneDevice(t, s, rem, "B")
			b.must(t, "pull")

			repoID := status(t, a.dir, a.env).RepoID
			bad := fanAppendAt(t, a, repoID, "a2 at the wrong depth", tc.wrong)
			badPath := tc.wrong(repoID, bad)
			r := a.ctx(t, "verify")
			wantCode(t, "verify", r, 1)
			if !strings.Contains(r.stdout, "FAIL "+tc.reported(badPath)+": not a checkpoint file name of the "+tc.layout+" layout") ||
				!strings.Contains(r.stdout, bad[:12]+" (entry 2): missing_checkpoint") {
				t.Fatalf("verify does not report the misplaced record:\n%s", r)
			}
			a.git(t, "push", "-q", "origin", memRef+":"+memRef)

			pr := b.ctx(t, "pull")
			wantCode(t, "B's pull", pr, 1)
			out := pr.String()
			var missing, orphan bool
			for _, q := range syncUnverified(t, b) {
				missing = missing || q.Reason == "missing_checkpoint" && q.Record == bad
				orphan = orphan || q.Reason == "orphan_file" && q.Record == badPath
			}
			if !missing || !orphan {
				t.Fatalf("the pull did not reject the misplaced record as missing_checkpoint and orphan_file:\n%s\n%+v", out, syncUnverified(t, b))
			}
			for _, p := range branchPaths(t, b.dir, b.env) {
				if strings.HasSuffix(p, "/"+bad+".json") {
					t.Fatalf("the pull merged the misplaced record as %s", p)
				}
			}
			fanWantPaths(t, b, tc.layout, tc.depth, a1)
			b.wantVerifies(t)
		})
	}
}
