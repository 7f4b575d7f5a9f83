package sync

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
)

// TestPlanRepoFile: how a pull merges the REPO file and which directories
// it takes records from.
func TestPlanRepoFile(t *testing.T) {
	w := newPkgWorld(t)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	pub := checkpoint.EncodePublicKey(key.Public().(ed25519.PublicKey))
	const adopted = "3333333333333333333333333333333333333333333333333333333333333333"
	adoption := func(k ed25519.PrivateKey) string {
		return fmt.Sprintf("adopt %s d %s\n", adopted, hex.EncodeToString(ed25519.Sign(k, gitstore.AdoptionMessage(testRepoID, adopted))))
	}
	view := func(files map[string]string) *gitstore.View {
		m := map[string][]byte{gitstore.DeviceKeyPath("d"): pub}
		for p, c := range files {
			m[p] = []byte(c)
		}
		v, err := w.st.ViewAt(w.commit(nil, m))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pol := Policy{Mode: TrustTOFU, Trusted: map[string]bool{}, Untrusted: map[string]bool{}, RepoID: "derived"}
	local := view(map[string]string{gitstore.RepoFile: testRepoID + "\n"})
	cases := []struct {
		name     string
		local    *gitstore.View
		remote   string       // REPO content; "" = none
		reason   chain.Reason // expected rejection, "" = none
		adopted  bool         // adopted in the result
		edit     bool         // REPO written by the merge
		noRepoOK bool         // allowed is nil
	}{
		{name: "first pull takes the remote's", remote: testRepoID + "\n", edit: true},
		{name: "another id", local: local, remote: "4444444444444444444444444444444444444444444444444444444444444444\n", reason: chain.RepoMismatch},
		{name: "valid adoption", local: local, remote: testRepoID + "\n" + adoption(key), adopted: true, edit: true},
		{name: "forged adoption", local: local, remote: testRepoID + "\n" + adoption(other), reason: chain.BadAdoption},
		{name: "garbage", local: local, remote: "../x\n", reason: chain.RepoMismatch},
		{name: "no REPO, first pull", noRepoOK: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{}
			if c.remote != "" {
				files[gitstore.RepoFile] = c.remote
			}
			remote := view(files)
			p := &plan{edits: map[string]plumbing.Hash{}}
			var got []chain.Reason
			reject := func(repo, dev, record string, reason chain.Reason, format string, args ...any) {
				got = append(got, reason)
			}
			allowed, err := planRepoFile(w.st, c.local, remote, c.remote != "", map[string]ed25519.PublicKey{"d": key.Public().(ed25519.PublicKey)}, pol, p, reject)
			if err != nil {
				t.Fatal(err)
			}
			if (c.reason == "") != (len(got) == 0) || c.reason != "" && got[0] != c.reason {
				t.Fatalf("rejections %v, want %q", got, c.reason)
			}
			if c.noRepoOK {
				if allowed != nil {
					t.Fatalf("allowed %v, want no check", allowed)
				}
				return
			}
			if !allowed[testRepoID] || allowed[adopted] != c.adopted {
				t.Fatalf("allowed %v", allowed)
			}
			if _, ok := p.edits[gitstore.RepoFile]; ok != c.edit {
				t.Fatalf("REPO edited: %v, want %v", ok, c.edit)
			}
		})
	}
}
