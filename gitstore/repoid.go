package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/formats/sigcheck"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// RepoFile is the root file that fixes the repository id of a branch and
// lists the other ids whose records this repository adopted (FORMAT §3).
const RepoFile = "REPO"

// MaxRepoFile bounds the REPO file read from a branch.
const MaxRepoFile = 64 << 10

// ErrRepoID means the branch's REPO file is unusable.
var ErrRepoID = fault.Sentinel(fault.Failed, "bad REPO file")

// ErrAdopt means an adoption was refused: the id is the branch's own, or
// this device already adopted it.
var ErrAdopt = fault.Sentinel(fault.Usage, "adoption refused")

// Adoption says that the records under repos/<ID>/ belong to the branch's
// repository too: Device signed it (ed25519 over AdoptionMessage).
type Adoption struct {
	ID     string
	Device string
	Sig    string // 128 lowercase hex
}

// RepoIDs is the content of a REPO file.
type RepoIDs struct {
	ID        string
	Adoptions []Adoption
}

// adoptPrefix starts an adoption line of the REPO file.
const adoptPrefix = "adopt "

// ParseRepoFile reads a REPO file: the id on the first line, then one
// "adopt <id> <device> <sig>" line per adoption. Every line ends in "\n".
func ParseRepoFile(data []byte) (*RepoIDs, error) {
	if len(data) > MaxRepoFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrRepoID, RepoFile, MaxRepoFile)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%w: %s must end in a newline", ErrRepoID, RepoFile)
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	r := &RepoIDs{ID: lines[0]}
	if err := gitrepo.ValidSegment(r.ID); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRepoID, RepoFile, err)
	}
	seen := map[Adoption]bool{}
	for i, l := range lines[1:] {
		f := strings.Split(strings.TrimPrefix(l, adoptPrefix), " ")
		if !strings.HasPrefix(l, adoptPrefix) || len(f) != 3 {
			return nil, fmt.Errorf("%w: %s line %d: want \"adopt <id> <device> <signature>\"", ErrRepoID, RepoFile, i+2)
		}
		a := Adoption{ID: f[0], Device: f[1], Sig: f[2]}
		if gitrepo.ValidSegment(a.ID) != nil || a.ID == r.ID || gitrepo.ValidSegment(a.Device) != nil || !isLowerHex(a.Sig, ed25519.SignatureSize*2) {
			return nil, fmt.Errorf("%w: %s line %d: bad id, device or signature", ErrRepoID, RepoFile, i+2)
		}
		if seen[a] {
			return nil, fmt.Errorf("%w: %s line %d: repeated", ErrRepoID, RepoFile, i+2)
		}
		seen[a] = true
		r.Adoptions = append(r.Adoptions, a)
	}
	return r, nil
}

// Marshal encodes r as a REPO file, adoptions sorted by id, then device.
func (r *RepoIDs) Marshal() []byte {
	ads := append([]Adoption(nil), r.Adoptions...)
	sort.Slice(ads, func(i, j int) bool {
		return ads[i].ID < ads[j].ID || ads[i].ID == ads[j].ID && (ads[i].Device < ads[j].Device || ads[i].Device == ads[j].Device && ads[i].Sig < ads[j].Sig)
	})
	var b bytes.Buffer
	b.WriteString(r.ID + "\n")
	for _, a := range ads {
		fmt.Fprintf(&b, "%s%s %s %s\n", adoptPrefix, a.ID, a.Device, a.Sig)
	}
	return b.Bytes()
}

// AdoptionMessage is what an adoption's signature covers.
func AdoptionMessage(branchID, adopted string) []byte {
	return []byte("git-ctx adopt v1\n" + branchID + "\n" + adopted + "\n")
}

// Valid reports whether a is signed by pub for the branch id branchID.
func (a Adoption) Valid(branchID string, pub ed25519.PublicKey) bool {
	sig, err := hex.DecodeString(a.Sig)
	return err == nil && len(pub) == ed25519.PublicKeySize && sigcheck.Verify(pub, AdoptionMessage(branchID, a.ID), sig)
}

// Allowed returns the ids whose directories hold this repository's records:
// the branch's id and every adoption signed by a device for which key
// returns a public key (nil: not accepted).
func (r *RepoIDs) Allowed(key func(device string) ed25519.PublicKey) map[string]bool {
	out := map[string]bool{r.ID: true}
	for _, a := range r.Adoptions {
		if pub := key(a.Device); pub != nil && a.Valid(r.ID, pub) {
			out[a.ID] = true
		}
	}
	return out
}

// RepoIDs reads the branch's REPO file; ErrNotExist when there is none
// (a branch written before git-ctx fixed ids on the branch, or by ghyll).
func (v *View) RepoIDs() (*RepoIDs, error) {
	data, err := v.ReadFile(RepoFile, MaxRepoFile)
	if err != nil {
		return nil, err
	}
	return ParseRepoFile(data)
}

// AllowedRepos returns the repository ids of this branch whose records are
// this repository's: the REPO file's id and its adoptions validly signed by
// a device with a key on the branch. Without a REPO file it is fallback
// alone (the id this clone derives). The second result is the branch's id
// ("" when it has no REPO file).
func (v *View) AllowedRepos(fallback string) (map[string]bool, string, error) {
	ids, err := v.RepoIDs()
	if errors.Is(err, ErrNotExist) {
		return map[string]bool{fallback: true}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return ids.Allowed(func(dev string) ed25519.PublicKey {
		pub, _, err := v.DeviceKey(dev)
		if err != nil {
			return nil
		}
		return pub
	}), ids.ID, nil
}

// AdoptRequest asks Adopt to list another repository id as this one's.
type AdoptRequest struct {
	// RepoID is the id a branch without a REPO file gets.
	RepoID  string
	Adopted string
	Device  Device
	Author  Author
}

// Adopt adds a signed adoption of req.Adopted to the REPO file (creating
// the file with req.RepoID on a branch that has none), publishing the
// device's key if needed. Adopting an id twice, or the branch's own id, is
// refused with ErrRepoID.
func (s *Store) Adopt(ctx context.Context, req AdoptRequest) (plumbing.Hash, error) {
	if err := gitrepo.ValidSegment(req.Adopted); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: %v", ErrAdopt, err)
	}
	return lockedEdit(ctx, s, func(e *branchEdit) (plumbing.Hash, error) {
		ids, err := e.v.RepoIDs()
		if errors.Is(err, ErrNotExist) {
			ids, err = &RepoIDs{ID: req.RepoID}, gitrepo.ValidSegment(req.RepoID)
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if req.Adopted == ids.ID {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s is this repository's own id", ErrAdopt, req.Adopted)
		}
		for _, a := range ids.Adoptions {
			if a.ID == req.Adopted && a.Device == req.Device.ID {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s is already adopted by %s", ErrAdopt, req.Adopted, a.Device)
			}
		}
		sig := ed25519.Sign(req.Device.Key, AdoptionMessage(ids.ID, req.Adopted))
		ids.Adoptions = append(ids.Adoptions, Adoption{ID: req.Adopted, Device: req.Device.ID, Sig: hex.EncodeToString(sig)})
		e.files[RepoFile] = ids.Marshal()
		if _, err := e.publishKey(req.Device); err != nil {
			return plumbing.ZeroHash, err
		}
		return e.commit(ctx, req.Author, time.Now(),
			fmt.Sprintf("ctx: adopt repository %s into %s by %s\n", req.Adopted, ids.ID, req.Device.ID), "ctx: adopt")
	})
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// needsRepoFile reports whether an append under repoID should fix the id
// on the branch: there is no REPO file and no directory of another id.
func (v *View) needsRepoFile(repoID string) (bool, error) {
	if _, err := v.BlobHash(RepoFile); !errors.Is(err, ErrNotExist) {
		return false, nil
	}
	repos, err := v.List("repos")
	if err != nil {
		return false, err
	}
	for _, e := range repos {
		if e.Name != repoID {
			return false, nil
		}
	}
	return true, nil
}
