package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// repoidRemote makes a bare repository at srv/<name>.git reached by its path.
func repoidRemote(t *testing.T, s *sandbox, name string) *syncRemote {
	t.Helper()
	bare := syncNewBare(t, s, filepath.Join(s.dir(t, "srv"), name+".git"))
	return &syncRemote{bare: bare, url: bare}
}

// repoidFirstDevice is syncFirstDevice with a checkout directory of its own
// name, so that one simulated machine (GIT_CTX_HOME) can work in several
// projects.
func repoidFirstDevice(t *testing.T, s *sandbox, r *syncRemote, machine, dir string) *syncDevice {
	t.Helper()
	d := newSyncDevice(s, machine, newRepo(t, s, dir))
	d.git(t, "remote", "add", "origin", r.url)
	d.git(t, "push", "-q", "origin", "main")
	return d
}

// repoidWantQ fails unless the device's quarantine holds a record of device
// with reason.
func repoidWantQ(t *testing.T, what string, d *syncDevice, device, reason string) {
	t.Helper()
	for _, q := range syncUnverified(t, d) {
		if q.Device == device && q.Reason == reason {
			return
		}
	}
	t.Fatalf("%s: no %s rejection of %s in log --unverified: %+v", what, reason, device, syncUnverified(t, d))
}

// TestRepoReplayAttack: device A works in two projects, P and Q. An
// attacker with push access to P copies A's authentic, validly signed
// records from Q's memory branch into P's, with raw git plumbing, both
// under repos/<P's id>/ (where A has no chain yet) and as Q's whole
// repos/<Q's id>/ directory. Both honest clones of P reject every copied
// record on pull (wrong_repo, listed by log --unverified), `git ctx verify`
// on the attacker's branch fails them wrong_repo, and honest records pushed
// before and after the attack merge on both clones.
func TestRepoReplayAttack(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	// Project Q: A's records, signed with A's key.
	remQ := repoidRemote(t, s, "q")
	qa := repoidFirstDevice(t, s, remQ, "A", "QA")
	qa.must(t, "init")
	replayed := syncHashesOf(qa.cp(t, "q1: secret plan of project Q"), qa.cp(t, "q2: more of Q"))
	qa.must(t, "push")
	idQ := status(t, qa.dir, qa.env).RepoID

	// Project P: A publishes its key (no records yet); B records and pushes.
	remP := repoidRemote(t, s, "p")
	a := repoidFirstDevice(t, s, remP, "A", "PA")
	a.must(t, "init")
	a.must(t, "push")
	idP := status(t, a.dir, a.env).RepoID
	if idP == idQ {
		t.Fatalf("P and Q share the repository id %s", idP)
	}
	b, b1 := cltJoin(t, s, remP, a, "b1: honest, before the attack")
	idA := a.id(t)

	// The attacker: a clone of P that fetches Q's branch and copies A's
	// records with plumbing, into P's directory and as Q's whole directory.
	m := filepath.Join(s.root, "M")
	menv := s.env("M")
	cltAttackerClone(t, s, remP.bare, m, menv)
	gitOut(t, m, menv, "fetch", "-q", remQ.bare, "+"+memRef+":refs/q")
	var edits []fileEdit
	prefix := "repos/" + idQ + "/"
	for _, p := range strings.Split(gitOut(t, m, menv, "ls-tree", "-r", "--name-only", "refs/q", prefix), "\n") {
		if !strings.HasPrefix(p, prefix+"chains/") && !strings.HasPrefix(p, prefix+"checkpoints/") {
			continue
		}
		content := gitOut(t, m, menv, "cat-file", "blob", "refs/q:"+p)
		if strings.HasPrefix(p, prefix+"chains/") {
			content += "\n" // gitOut trims the chain's final newline
		}
		edits = append(edits,
			fileEdit{path: p, content: content},
			fileEdit{path: "repos/" + idP + "/" + strings.TrimPrefix(p, prefix), content: content})
	}
	if len(edits) != 2*(2+1) {
		t.Fatalf("expected 2 checkpoint files and a chain under %s, got %d edits", prefix, len(edits))
	}
	rewriteBranch(t, m, menv, "ctx: checkpoint by "+idA, edits...)
	gitOut(t, m, menv, "push", "-q", "origin", memRef+":"+memRef)

	// verify on the attacker's branch names both copies wrong_repo.
	rep := verifyJSON(t, m, menv)
	if rep.OK {
		t.Fatalf("verify accepts the replayed records:\n%s", rep.Raw)
	}
	for _, dir := range []string{idP, idQ} {
		found := false
		for _, c := range rep.Chains {
			if c.Repo == dir && c.Device == idA {
				var f struct{ Reason string }
				found = json.Unmarshal(c.Failure, &f) == nil && f.Reason == "wrong_repo"
			}
		}
		if !found {
			t.Fatalf("verify does not fail A's chain in repos/%s with wrong_repo:\n%s", dir[:12], rep.Raw)
		}
	}

	// Both honest clones pull: nothing replayed is merged, both copies are
	// quarantined as wrong_repo.
	for _, d := range []*syncDevice{a, b} {
		r := d.ctx(t, "pull")
		if r.code != 1 { // rejected records
			t.Fatalf("%s pull: %s", d.name, r)
		}
		got := d.hashes(t)
		for _, h := range replayed {
			if got[h] {
				t.Fatalf("%s merged the replayed record %s of project Q", d.name, h[:12])
			}
		}
		repoidWantQ(t, d.name+" pull", d, idA, "wrong_repo")
		for _, q := range syncUnverified(t, d) {
			if q.Reason == "orphan_file" {
				t.Fatalf("%s: the replayed chains' files are reported orphan_file too: %+v", d.name, q)
			}
		}
		for _, p := range branchPaths(t, d.dir, d.env) {
			if strings.HasPrefix(p, "repos/"+idQ+"/") || strings.HasPrefix(p, "repos/"+idP+"/chains/"+idA+"/") {
				t.Fatalf("%s's branch holds %s after the pull", d.name, p)
			}
		}
		d.wantVerifies(t)
	}

	// Honest records after the attack still merge everywhere.
	a1 := a.cp(t, "a1: honest, after the attack")
	a.must(t, "sync")
	b2 := b.cp(t, "b2: honest, after the attack")
	b.must(t, "sync")
	a.must(t, "pull")
	want := syncHashesOf(b1, a1, b2)
	for _, d := range []*syncDevice{a, b} {
		syncWantHashes(t, d.name+" after the attack", d.hashes(t), want...)
		d.wantVerifies(t)
	}
}
