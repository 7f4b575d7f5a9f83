package integration

import (
	"strings"
	"testing"
)

// TestGhyllRepoDirURLForms: the first clone fixes ghyll's directory for
// origin (SHA-256 of its exact URL) in REPO at `init --layout ghyll-v1`; a
// second clone whose origin spells the same remote differently (file://
// instead of a path) pulls, agrees on that directory, and writes its own
// records there, not under a directory of its own spelling.
func TestGhyllRepoDirURLForms(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a := syncFirstDevice(t, s, rem, "A")
	dir := ddGhyllDir(t, a)
	a.must(t, "init", "--layout", "ghyll-v1")
	a1 := a.cp(t, "gw: a's decision")
	a.must(t, "push")

	other := syncRemote{bare: rem.bare, url: "file://" + rem.bare}
	b := syncCloneDevice(t, s, &other, "B")
	bURL := strings.TrimSpace(b.git(t, "remote", "get-url", "origin"))
	if bURL == rem.url || sha256Hex(bURL) == dir {
		t.Fatalf("B's origin %q is not another spelling of %q", bURL, rem.url)
	}
	b.must(t, "pull")
	b.must(t, "init")
	if st := status(t, b.dir, b.env); st.RepoID != dir {
		t.Fatalf("B's repository id is %s, want the directory A fixed, %s", st.RepoID, dir)
	}
	b1 := b.cp(t, "gw: b's decision")
	gwWantGhyllRecord(t, b, dir, b.id(t), b1.Hash)
	syncWantHashes(t, "B's log", b.hashes(t), a1.Hash, b1.Hash)
	b.wantVerifies(t)
}
