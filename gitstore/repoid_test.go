package gitstore

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseRepoFile(t *testing.T) {
	sig := strings.Repeat("ab", 64)
	good := repoID + "\nadopt other d " + sig + "\n"
	ids, err := ParseRepoFile([]byte(good))
	if err != nil || ids.ID != repoID || len(ids.Adoptions) != 1 || ids.Adoptions[0] != (Adoption{ID: "other", Device: "d", Sig: sig}) {
		t.Fatalf("ParseRepoFile(good) = %+v, %v", ids, err)
	}
	if got := string(ids.Marshal()); got != good {
		t.Fatalf("Marshal = %q, want %q", got, good)
	}
	for _, bad := range []string{
		"", repoID, "..\n", "a/b\n", repoID + "\n\n", repoID + "\nadopt other d\n",
		repoID + "\nadopt other d " + strings.ToUpper(sig) + "\n", repoID + "\nadopt " + repoID + " d " + sig + "\n",
		repoID + "\nadopt other d " + sig + "\nadopt other d " + sig + "\n", repoID + "\nadopted other d " + sig + "\n",
		strings.Repeat("x", MaxRepoFile+1),
	} {
		if _, err := ParseRepoFile([]byte(bad)); !errors.Is(err, ErrRepoID) {
			t.Errorf("ParseRepoFile(%.40q) = %v, want ErrRepoID", bad, err)
		}
	}
}

// Init fixes the id, an adoption signed by a device on the branch makes
// another directory this repository's, and verify fails the chains of any
// directory that is neither.
func TestRepoFileAndAdoption(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{RepoID: repoID})
	ctx := context.Background()
	const other = "2222222222222222222222222222222222222222222222222222222222222222"
	for _, id := range []string{repoID, other} {
		if _, err := s.Append(ctx, AppendRequest{RepoID: id, Device: d, Drafts: drafts(2, id[:4])}); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := s.View()
	if ids, err := v.RepoIDs(); err != nil || ids.ID != repoID || len(ids.Adoptions) != 0 {
		t.Fatalf("RepoIDs after init: %+v %v", ids, err)
	}
	rep := mustVerify(t, v)
	if rep.OK || len(rep.Chains) != 2 {
		t.Fatalf("verify accepts a directory that is not this repository's: %+v", rep)
	}
	for _, c := range rep.Chains {
		if (c.Repo == other) != (c.Failure != nil && c.Failure.Reason == "wrong_repo") {
			t.Fatalf("chain %s: %+v", c.Repo[:4], c.Failure)
		}
	}
	if _, err := s.Adopt(ctx, AdoptRequest{Adopted: repoID, Device: d}); !errors.Is(err, ErrAdopt) {
		t.Fatalf("adopting the own id: %v", err)
	}
	if _, err := s.Adopt(ctx, AdoptRequest{Adopted: other, Device: d}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Adopt(ctx, AdoptRequest{Adopted: other, Device: d}); !errors.Is(err, ErrAdopt) {
		t.Fatalf("adopting twice: %v", err)
	}
	v, _ = s.View()
	allowed, id, err := v.AllowedRepos("")
	if err != nil || id != repoID || !allowed[other] || len(allowed) != 2 {
		t.Fatalf("AllowedRepos: %v %s %v", allowed, id, err)
	}
	if rep := mustVerify(t, v); !rep.OK {
		t.Fatalf("verify after adoption: %+v", rep)
	}
	// An adoption line signed by another key does not count.
	ids, _ := v.RepoIDs()
	ids.Adoptions[0].Device = "nobody"
	forged := editView(t, s, v, map[string][]byte{RepoFile: ids.Marshal()}, "forged adoption")
	if allowed, _, _ := forged.AllowedRepos(""); allowed[other] {
		t.Fatal("an adoption by a device without a key counts")
	}
}
