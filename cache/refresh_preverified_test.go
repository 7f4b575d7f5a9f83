package cache_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestPreverifiedNeedsTheBranchBlobAndKey: the cache takes a record a pull
// verified (cache.Preverified with its parsed record) without reading it
// again only when the branch holds the very blob the pull verified, under
// the key the device has on the branch. A record rewritten on the branch
// after the "pull" (a different blob at its path) is read and verified
// again (it fails: hash_mismatch, unverified from there on), and a
// preverified record claimed under another key is read from the branch,
// not taken from the claim. Either way the cache equals the branch.
func TestPreverifiedNeedsTheBranchBlobAndKey(t *testing.T) {
	_, repo, a := initDev(t, "")
	ctx := workspacetest.Ctx(t)
	var hs []string
	for i := 0; i < 6; i++ {
		hs = append(hs, a.Record(t, workspacetest.Say("preverified record %d", i)))
	}
	repoID := a.MustRepoID(t)
	v, err := a.Store.View()
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.Identity()
	if err != nil {
		t.Fatal(err)
	}
	pub := id.Public
	claim := func(h string, key ed25519.PublicKey, summary string) cache.Preverified {
		t.Helper()
		path := v.CheckpointPath(repoID, h)
		blob, err := v.BlobHash(path)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := v.Checkpoint(repoID, h)
		if err != nil {
			t.Fatal(err)
		}
		rule, err := cp.MatchRule()
		if err != nil {
			t.Fatal(err)
		}
		cp.Summary = summary // what the claim says, not what the branch holds
		return cache.Preverified{Key: key, Blob: blob, CP: cp, Rule: rule}
	}
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey)
	pre := map[string]cache.Preverified{
		hs[1]: claim(hs[1], other, "forged under another key"),
		hs[3]: claim(hs[3], pub, "the bytes the pull verified"),
	}
	// Record 3 is rewritten on the branch after the claim was made.
	path := v.CheckpointPath(repoID, hs[3])
	raw, err := v.ReadFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(raw), "preverified record 3", "preverified record 3 (rewritten)", 1)
	if tampered == string(raw) {
		t.Fatal("the record does not hold its summary")
	}
	workspacetest.EditBranch(t, repo, "rewrite a record", map[string]string{path: tampered})

	if err := os.RemoveAll(a.CacheDir()); err != nil {
		t.Fatal(err)
	}
	a.Preverified = pre
	db, err := a.Cache(ctx)
	a.Preverified = nil
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	got := workspacetest.CacheEqualsBranch(t, a.Workspace, map[string]bool{hs[3]: true, hs[4]: true, hs[5]: true})
	if got[hs[1]].Summary != "preverified record 1" {
		t.Errorf("record 1 cached with summary %q", got[hs[1]].Summary)
	}
	if n := workspacetest.RawCount(t, a.Workspace, `SELECT count(*) FROM quarantine WHERE record = '`+hs[3]+`' AND reason = 'hash_mismatch'`); n != 1 {
		t.Errorf("the rewritten record is quarantined %d times as hash_mismatch, want 1", n)
	}
}
