package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// repoidBeforeRemote is device A in a repository without a remote, after
// init and two checkpoints (early), and the repository id they were
// recorded under (the root commit's).
func repoidBeforeRemote(t *testing.T) (*testrepo.Sandbox, *testrepo.Device, []string, string) {
	t.Helper()
	s := newSandbox(t)
	a := inproc.Device(s, "A", testrepo.NewRepo(t, s, "A"))
	a.Must(t, "init")
	early := testrepo.HashesOf(a.Checkpoint(t, "before the remote: one"), a.Checkpoint(t, "before the remote: two"))
	return s, a, early, inproc.Status(t, a.Dir, a.Env).RepoID
}

// TestRepoIDRemoteAddedLater: checkpoints recorded in a repository without
// a remote stay this repository's memory when a remote is added later
// (the id is fixed on the branch, not re-derived from the new URL), and a
// clone of that remote sees them all under the same id.
func TestRepoIDRemoteAddedLater(t *testing.T) {
	s, a, early, id := repoidBeforeRemote(t)

	rem := testrepo.NewBareRemote(t, s, "remote")
	a.Git(t, "remote", "add", "origin", rem)
	a.Git(t, "push", "-q", "origin", "main")
	st := inproc.Status(t, a.Dir, a.Env)
	if st.RepoID != id || st.Checkpoints != 2 {
		t.Fatalf("after 'git remote add': repo id %s with %d checkpoints, want %s with 2", st.RepoID, st.Checkpoints, id)
	}
	testrepo.WantHashes(t, "log after 'git remote add'", a.Hashes(t), early...)
	late := a.Checkpoint(t, "after the remote")
	a.Must(t, "push")

	b := inproc.CloneDevice(t, s, "B", rem)
	b.Must(t, "pull")
	if st := inproc.Status(t, b.Dir, b.Env); st.RepoID != id || st.Checkpoints != 3 {
		t.Fatalf("clone B: repo id %s with %d checkpoints, want %s with 3", st.RepoID, st.Checkpoints, id)
	}
	want := append(early, late.Hash)
	testrepo.WantHashes(t, "clone B", b.Hashes(t), want...)
	b.WantVerifies(t)
	a.WantVerifies(t)
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

func repoidStatusOf(t *testing.T, d *testrepo.Device) repoidStatus {
	t.Helper()
	var st repoidStatus
	if out := d.Must(t, "status", "--json"); json.Unmarshal([]byte(out), &st) != nil || st.Adopted == nil || st.OtherRepos == nil {
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
	s, a, early, oldID := repoidBeforeRemote(t)
	// What an older git-ctx left: the same records, no REPO file.
	testrepo.RewriteBranch(t, a.Dir, a.Env, "older branch", testrepo.FileEdit{Path: "REPO", Remove: true})
	rem := testrepo.NewBareRemote(t, s, "remote")
	a.Git(t, "remote", "add", "origin", rem)
	a.Git(t, "push", "-q", "origin", "main")
	late := a.Checkpoint(t, "after the remote")

	st := repoidStatusOf(t, a)
	if st.RepoID == oldID || st.Checkpoints != 1 || len(st.OtherRepos) != 1 || st.OtherRepos[0].ID != oldID || st.OtherRepos[0].Checkpoints != 2 {
		t.Fatalf("status before adopt: %+v (old id %s)", st, oldID)
	}
	if out := a.Must(t, "status"); !strings.Contains(out, "git ctx adopt "+oldID) {
		t.Fatalf("status does not name the adopt command:\n%s", out)
	}
	if out := a.Must(t, "doctor"); !strings.Contains(out, "git ctx adopt "+oldID) {
		t.Fatalf("doctor does not name the adopt command:\n%s", out)
	}
	r := a.Ctx(t, "adopt", "not/an/id")
	testrepo.WantCode(t, "adopt of a bad id", r, 7)
	testrepo.WantOneLine(t, "adopt of a bad id", r.Stderr)
	a.Must(t, "adopt", oldID)
	testrepo.WantCode(t, "adopt twice", a.Ctx(t, "adopt", oldID), 2)

	want := append(early, late.Hash)
	st = repoidStatusOf(t, a)
	if st.Checkpoints != 3 || len(st.OtherRepos) != 0 || len(st.Adopted) != 1 || st.Adopted[0] != oldID {
		t.Fatalf("status after adopt: %+v", st)
	}
	testrepo.WantHashes(t, "A after adopt", a.Hashes(t), want...)
	var hits []testrepo.Record
	if out := a.Must(t, "search", "--json", "before the remote"); json.Unmarshal([]byte(out), &hits) != nil || len(hits) != 2 {
		t.Fatalf("search after adopt does not find the adopted records:\n%s", out)
	}
	if out := a.Must(t, "show", early[0][:12]); !strings.Contains(out, early[0]) {
		t.Fatalf("show of an adopted record:\n%s", out)
	}
	a.WantVerifies(t)
	a.Must(t, "push")

	b := inproc.CloneDevice(t, s, "B", rem)
	b.Must(t, "pull")
	if st := repoidStatusOf(t, b); st.RepoID != inproc.Status(t, a.Dir, a.Env).RepoID || st.Checkpoints != 3 || len(st.Adopted) != 1 {
		t.Fatalf("clone B: %+v", st)
	}
	testrepo.WantHashes(t, "clone B", b.Hashes(t), want...)
	b.WantVerifies(t)
}
