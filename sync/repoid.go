package sync

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitstore"
)

// planRepoFile decides the REPO file of the merge and returns the
// repository ids whose directories this pull may merge records from: the
// branch's id and its validly signed adoptions. A branch without a REPO
// file takes the fetched one; two different ids are a repo_mismatch (ours
// stays); adoptions are merged as a union, each one only when signed by a
// device whose key this merge holds and the trust policy allows. With no
// REPO file on either side: the id this clone derives (pol.RepoID) and the
// directories the local branch holds; nil (no check) on a first pull or
// when this clone derives no id.
func planRepoFile(st *gitstore.Store, local, remote *gitstore.View, changed bool, keys map[string]ed25519.PublicKey, pol Policy, p *plan,
	reject rejectFunc) (map[string]bool, error) {
	mine, err := readRepoIDs(local)
	if err != nil {
		return nil, fmt.Errorf("this branch's %s: %w", gitstore.RepoFile, err)
	}
	var theirs *gitstore.RepoIDs
	if changed {
		if theirs, err = readRepoIDs(remote); errors.Is(err, gitstore.ErrRepoID) {
			reject("", "", gitstore.RepoFile, chain.RepoMismatch, "%v: not merged", err)
			theirs = nil
		} else if err != nil {
			return nil, err
		}
	}
	keyOf := adoptionKeys(local, keys, pol)
	switch {
	case mine == nil && theirs == nil:
		return noRepoFile(local, pol)
	case theirs == nil:
		return mine.Allowed(keyOf), nil
	case mine != nil && mine.ID != theirs.ID:
		reject(theirs.ID, "", gitstore.RepoFile, chain.RepoMismatch,
			"the remote fixes repository id %s, this branch %s: its records under repos/%s are not merged (git ctx adopt %s takes them)",
			short(theirs.ID), short(mine.ID), short(theirs.ID), theirs.ID)
		return mine.Allowed(keyOf), nil
	}
	merged := mergeAdoptions(mine, theirs, keyOf, reject)
	if mine == nil || len(merged.Adoptions) != len(mine.Adoptions) {
		h, err := st.WriteBlob(merged.Marshal())
		if err != nil {
			return nil, err
		}
		p.edits[gitstore.RepoFile] = h
	}
	return merged.Allowed(keyOf), nil
}

// readRepoIDs reads v's REPO file (nil when v or the file is missing).
func readRepoIDs(v *gitstore.View) (*gitstore.RepoIDs, error) {
	if v == nil {
		return nil, nil
	}
	ids, err := v.RepoIDs()
	if errors.Is(err, gitstore.ErrNotExist) {
		return nil, nil
	}
	return ids, err
}

// adoptionKeys returns the key an adoption by a device must verify under:
// none for a device the trust policy refuses, else the one pinned here,
// else the one this pull accepted.
func adoptionKeys(local *gitstore.View, keys map[string]ed25519.PublicKey, pol Policy) func(string) ed25519.PublicKey {
	return func(dev string) ed25519.PublicKey {
		if ok, _ := pol.Allows(dev); !ok {
			return nil
		}
		if local != nil {
			if pub, _, err := local.DeviceKey(dev); err == nil {
				return pub
			}
		}
		return keys[dev]
	}
}

// noRepoFile: a branch of an older git-ctx or of ghyll. A first pull
// mirrors it (records still bind, chain.BindsTo); later pulls take records
// only under the id this clone derives and the directories this branch
// already holds (verified when they were merged).
func noRepoFile(local *gitstore.View, pol Policy) (map[string]bool, error) {
	if local == nil || pol.RepoID == "" {
		return nil, nil
	}
	allowed := map[string]bool{pol.RepoID: true}
	dirs, err := local.Repos()
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		allowed[d] = true
	}
	return allowed, nil
}

// mergeAdoptions is the union of both files' adoptions under theirs' id,
// each fetched one only when validly signed (bad_adoption otherwise).
func mergeAdoptions(mine, theirs *gitstore.RepoIDs, keyOf func(string) ed25519.PublicKey, reject rejectFunc) *gitstore.RepoIDs {
	merged := &gitstore.RepoIDs{ID: theirs.ID}
	have := map[gitstore.Adoption]bool{}
	if mine != nil {
		for _, a := range mine.Adoptions {
			merged.Adoptions = append(merged.Adoptions, a)
			have[a] = true
		}
	}
	for _, a := range theirs.Adoptions {
		if have[a] {
			continue
		}
		if pub := keyOf(a.Device); pub == nil || !a.Valid(theirs.ID, pub) {
			reject(a.ID, a.Device, gitstore.RepoFile, chain.BadAdoption,
				"adoption of repos/%s is not validly signed by a device this clone accepts: not merged", short(a.ID))
			continue
		}
		merged.Adoptions = append(merged.Adoptions, a)
	}
	return merged
}
