package integration

import (
	"path/filepath"
	"testing"
)

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
