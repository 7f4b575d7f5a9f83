package integration

import (
	"path/filepath"
	"testing"
)

// TestRepoIDRemoteAddedLater: checkpoints recorded in a repository without
// a remote stay this repository's memory when a remote is added later
// (the id is fixed on the branch, not re-derived from the new URL), and a
// clone of that remote sees them all under the same id.
func TestRepoIDRemoteAddedLater(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	early := syncHashesOf(a.cp(t, "before the remote: one"), a.cp(t, "before the remote: two"))
	id := status(t, a.dir, a.env).RepoID

	rem := repoidRemote(t, s, "remote")
	a.git(t, "remote", "add", "origin", rem.url)
	a.git(t, "push", "-q", "origin", "main")
	st := status(t, a.dir, a.env)
	if st.RepoID != id || st.Checkpoints != 2 {
		t.Fatalf("after 'git remote add': repo id %s with %d checkpoints, want %s with 2", st.RepoID, st.Checkpoints, id)
	}
	syncWantHashes(t, "log after 'git remote add'", a.hashes(t), early...)
	late := a.cp(t, "after the remote")
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	if st := status(t, b.dir, b.env); st.RepoID != id || st.Checkpoints != 3 {
		t.Fatalf("clone B: repo id %s with %d checkpoints, want %s with 3", st.RepoID, st.Checkpoints, id)
	}
	want := append(early, late.Hash)
	syncWantHashes(t, "clone B", b.hashes(t), want...)
	b.wantVerifies(t)
	a.wantVerifies(t)
}

// TestRepoIDURLForms: three clones of one remote over a plain path, a
// file:// URL and git:// (git daemon on 127.0.0.1) share one repository id
// and, after syncing, every record each of them wrote.
func TestRepoIDURLForms(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	daemon := syncStartDaemon(t, s, filepath.Dir(rem.bare))

	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	var want []string
	want = append(want, a.cp(t, "a: over a path").Hash)
	a.must(t, "push")
	id := status(t, a.dir, a.env).RepoID

	var devs []*syncDevice
	for i, url := range []string{"file://" + rem.bare, daemon + "/" + filepath.Base(rem.bare)} {
		name := []string{"B", "C"}[i]
		d := syncCloneDevice(t, s, &syncRemote{bare: rem.bare, url: url}, name)
		d.must(t, "pull")
		if st := status(t, d.dir, d.env); st.RepoID != id {
			t.Fatalf("clone %s over %s: repo id %s, want %s", name, url, st.RepoID, id)
		}
		want = append(want, d.cp(t, name+": over "+url).Hash)
		d.must(t, "sync")
		devs = append(devs, d)
	}
	a.must(t, "pull")
	devs[0].must(t, "pull")
	for _, d := range append([]*syncDevice{a}, devs...) {
		syncWantHashes(t, "clone "+d.name, d.hashes(t), want...)
		if st := status(t, d.dir, d.env); st.RepoID != id || st.Checkpoints != 3 {
			t.Fatalf("clone %s: repo id %s with %d checkpoints, want %s with 3", d.name, st.RepoID, st.Checkpoints, id)
		}
		d.wantVerifies(t)
	}
}
