package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

func TestBindsTo(t *testing.T) {
	sum := sha256.Sum256([]byte("github.com/example/app"))
	urlID := hex.EncodeToString(sum[:])
	cases := []struct {
		field, dir string
		want       bool
	}{
		{"", urlID, true},                          // no repository named
		{"github.com/example/app", urlID, true},    // the id is the field's SHA-256
		{urlID, urlID, true},                       // the field is the id
		{"github.com/example/other", urlID, false}, // another repository
		{"github.com/Example/app", urlID, false},   // the hash is over the exact bytes
		{"custom-id", "custom-id", true},
		{"custom-id", urlID, false},
	}
	for _, c := range cases {
		if got := BindsTo(c.field, c.dir); got != c.want {
			t.Errorf("BindsTo(%q, %s) = %v, want %v", c.field, c.dir[:min(12, len(c.dir))], got, c.want)
		}
	}
}

// A record whose repo field does not bind to the chain's directory fails
// wrong_repo after its signature verified; Repo "" skips the check.
func TestVerifyWrongRepo(t *testing.T) {
	f := build(t, 3)
	f.resealed(t, 1, f.key, func(cp *checkpoint.Checkpoint) { cp.RepoRemote = "github.com/example/other" })
	// Resealing changed the record's hash: relink the chain to it.
	cp, _ := checkpoint.Parse(f.files[f.entries[1].Hash])
	f.files[cp.Hash] = f.files[f.entries[1].Hash]
	f.entries[1].Hash = cp.Hash
	f.entries = f.entries[:2]
	in := f.input()
	if res := Verify(in); res.Failure != nil {
		t.Fatalf("without Repo: %v", res.Failure)
	}
	in.Repo = "custom-id"
	res := Verify(in)
	if res.Failure == nil || res.Failure.Reason != WrongRepo || res.Failure.Index != 1 || res.Verified != 1 {
		t.Fatalf("with Repo: %+v", res)
	}
}
