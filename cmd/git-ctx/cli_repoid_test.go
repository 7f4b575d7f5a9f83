package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRepoIDRemoteAddedLater: checkpoints recorded in a repository without
// a remote stay this repository's memory when a remote is added later
// (the id is fixed on the branch, not re-derived from the new URL), and a
// clone of that remote sees them all under the same id.
func TestRepoIDRemoteAddedLater(t *testing.T) {
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	early := syncHashesOf(a.cp(t, "before the remote: one"), a.cp(t, "before the remote: two"))
	id := cliStatus(t, a.dir, a.env).RepoID

	rem := repoidRemote(t, s, "remote")
	a.git(t, "remote", "add", "origin", rem.url)
	a.git(t, "push", "-q", "origin", "main")
	st := cliStatus(t, a.dir, a.env)
	if st.RepoID != id || st.Checkpoints != 2 {
		t.Fatalf("after 'git remote add': repo id %s with %d checkpoints, want %s with 2", st.RepoID, st.Checkpoints, id)
	}
	syncWantHashes(t, "log after 'git remote add'", a.hashes(t), early...)
	late := a.cp(t, "after the remote")
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	if st := cliStatus(t, b.dir, b.env); st.RepoID != id || st.Checkpoints != 3 {
		t.Fatalf("clone B: repo id %s with %d checkpoints, want %s with 3", st.RepoID, st.Checkpoints, id)
	}
	want := append(early, late.Hash)
	syncWantHashes(t, "clone B", b.hashes(t), want...)
	b.wantVerifies(t)
	a.wantVerifies(t)
}

// repoidStatus is the part of `git ctx status --json` about repository ids.
type repoidStatus struct {
	RepoID      string   `json:"repo_id"`
	Checkpoints int      `json:"checkpoints"`
	Adopted     []string `json:"adopted_repos"`
	OtherRepos  []struct {
		ID          string `json:"id"`
		Checkpoints int    `json:"checkpoints"`
	} `json:"other_repos"`
}

func repoidStatusOf(t *testing.T, d *syncDevice) repoidStatus {
	t.Helper()
	var st repoidStatus
	if out := d.must(t, "status", "--json"); json.Unmarshal([]byte(out), &st) != nil || st.Adopted == nil || st.OtherRepos == nil {
		t.Fatalf("status --json lacks adopted_repos or other_repos:\n%s", out)
	}
	return st
}

// TestRepoIDAdoptOlderBranch: a branch written before ids were fixed on it
// (no REPO file) whose records sit under two ids (the root-commit id from
// before the remote, the URL id after) keeps working; status and doctor
// name the other id and the command that adopts it; after 'git ctx adopt'
// every record is this repository's, verifies, and a clone sees them all.
func TestRepoIDAdoptOlderBranch(t *testing.T) {
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	early := syncHashesOf(a.cp(t, "before the remote: one"), a.cp(t, "before the remote: two"))
	oldID := cliStatus(t, a.dir, a.env).RepoID
	// What an older git-ctx left: the same records, no REPO file.
	rewriteBranch(t, a.dir, a.env, "older branch", fileEdit{path: "REPO", remove: true})
	rem := repoidRemote(t, s, "remote")
	a.git(t, "remote", "add", "origin", rem.url)
	a.git(t, "push", "-q", "origin", "main")
	late := a.cp(t, "after the remote")

	st := repoidStatusOf(t, a)
	if st.RepoID == oldID || st.Checkpoints != 1 || len(st.OtherRepos) != 1 || st.OtherRepos[0].ID != oldID || st.OtherRepos[0].Checkpoints != 2 {
		t.Fatalf("status before adopt: %+v (old id %s)", st, oldID)
	}
	if out := a.must(t, "status"); !strings.Contains(out, "git ctx adopt "+oldID) {
		t.Fatalf("status does not name the adopt command:\n%s", out)
	}
	if out := a.must(t, "doctor"); !strings.Contains(out, "git ctx adopt "+oldID) {
		t.Fatalf("doctor does not name the adopt command:\n%s", out)
	}
	r := a.ctx(t, "adopt", "not/an/id")
	wantCode(t, "adopt of a bad id", r, 7)
	wantOneLine(t, "adopt of a bad id", r.stderr)
	a.must(t, "adopt", oldID)
	wantCode(t, "adopt twice", a.ctx(t, "adopt", oldID), 2)

	want := append(early, late.Hash)
	st = repoidStatusOf(t, a)
	if st.Checkpoints != 3 || len(st.OtherRepos) != 0 || len(st.Adopted) != 1 || st.Adopted[0] != oldID {
		t.Fatalf("status after adopt: %+v", st)
	}
	syncWantHashes(t, "A after adopt", a.hashes(t), want...)
	var hits []record
	if out := a.must(t, "search", "--json", "before the remote"); json.Unmarshal([]byte(out), &hits) != nil || len(hits) != 2 {
		t.Fatalf("search after adopt does not find the adopted records:\n%s", out)
	}
	if out := a.must(t, "show", early[0][:12]); !strings.Contains(out, early[0]) {
		t.Fatalf("show of an adopted record:\n%s", out)
	}
	a.wantVerifies(t)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	if st := repoidStatusOf(t, b); st.RepoID != cliStatus(t, a.dir, a.env).RepoID || st.Checkpoints != 3 || len(st.Adopted) != 1 {
		t.Fatalf("clone B: %+v", st)
	}
	syncWantHashes(t, "clone B", b.hashes(t), want...)
	b.wantVerifies(t)
}
