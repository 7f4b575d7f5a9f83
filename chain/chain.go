// Package chain holds every verification rule of the memory branch and the
// one vocabulary of rejection reasons (Reason, chain/reasons.go; the same
// words as docs/FORMAT.md §10a).
//
// Where a record is verified: here. Verify checks one device's checkpoint
// chain (linkage from the genesis or from a trusted entry — in the ghyll-v1
// layout, where ghyll's library roots a chain per session, the rule of
// sessions.go — agreement between
// chain lines and checkpoint files, hashes and signatures under the
// device's key, the repository binding: BindsTo); CheckTimelineLines and
// CheckTimelineEntry check a snapshot timeline's line signatures and the
// snapshot files it names; CheckPackage checks a published package file.
//
// The one loader: chain reads the branch through Tree (a device's key,
// chain, checkpoint files, timeline, snapshot files), which gitstore.View
// provides (View.ChainTree); chain imports nothing of git. On top of it:
// VerifyStored and VerifyTimeline (`git ctx verify`, called by gitstore's
// layout walk), VerifyNew (the cache refresh: only the records past the
// ones already indexed), Records (the Loader of checkpoint files). Both
// check a chain's records on GOMAXPROCS workers a bounded batch ahead of
// Verify's in-order walk (ahead.go), which alone decides the verdict.
//
// Where a pull decides what to merge: sync's makePlan walks the fetched
// changes and refuses what is not a record (paths, device ids, keys,
// trust, repository ids); for every chain and timeline it asks Continue and
// ContinueTimeline here, which decide what of the fetched history may join
// the local one (verified from the shared prefix, taken up to the first
// failure; a validly signed divergence is a fork).
package chain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// BindsTo reports whether a record whose signed repo field is field may sit
// in the directory repos/<dir>/: field is dir itself, or dir is the
// lowercase hex SHA-256 of field (the URL an id was derived from). An empty
// field names no repository (ghyll writes none, nor did git-ctx without a
// remote before ids were fixed on the branch) and binds to any directory.
func BindsTo(field, dir string) bool {
	if field == "" || field == dir {
		return true
	}
	sum := sha256.Sum256([]byte(field))
	return hex.EncodeToString(sum[:]) == dir
}

// Failure is the first bad record of one device.
type Failure struct {
	Device string
	Index  int    // 0-based position in the chain; -1 when not about one entry
	Hash   string // the record at fault ("" when unknown)
	Reason Reason
	Detail string
}

func (f *Failure) Error() string {
	at := f.Hash
	if len(at) > 12 {
		at = at[:12]
	}
	if at == "" {
		return fmt.Sprintf("device %s: %s: %s", f.Device, f.Reason, f.Detail)
	}
	return fmt.Sprintf("device %s: checkpoint %s (entry %d): %s: %s", f.Device, at, f.Index+1, f.Reason, f.Detail)
}

// Result is the outcome of verifying one device's chain.
type Result struct {
	Device   string
	Verified int                     // entries that passed every check
	Rules    map[checkpoint.Rule]int // how many matched each hash rule
	Failure  *Failure                // nil when every entry verified
	Head     checkpoint.ChainEntry   // last verified entry (zero value if none)
}

// Loader returns the raw bytes of the checkpoint file named by hash.
type Loader func(hash string) ([]byte, error)

// ErrMissing is returned by loaders when a checkpoint file does not exist.
var ErrMissing = fault.Sentinel(fault.Failed, "checkpoint file missing")

// ErrTooLarge is returned (wrapped) by loaders when a checkpoint file is
// larger than checkpoint.MaxFileSize.
var ErrTooLarge = fault.Sentinel(fault.Refused, "checkpoint file too large")

// Input is everything Verify needs about one device.
type Input struct {
	Device string
	// Repo, when set, is the repository directory the chain sits in: every
	// record's repo field must bind to it (BindsTo).
	Repo    string
	Key     ed25519.PublicKey // nil: the device has no key on the branch
	Entries []checkpoint.ChainEntry
	// Trusted, when set, is an entry already verified earlier: Entries must
	// continue it (Entries[0].Parent == Trusted.Hash). When nil, Entries
	// must start at the genesis (parent = ZeroHash). Not read with
	// SessionRoots (Prior says more).
	Trusted *checkpoint.ChainEntry
	Load    Loader
	// Verified, if set, receives each record that passed, in chain order,
	// with the hash rule it matched (which says what the hash covers).
	Verified func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error
	// Preverified, if set, names records whose hash and signature were
	// verified moments ago on these exact bytes (a pull, before indexing):
	// they are parsed, hashed and linked as usual; only the signature is not
	// checked a second time.
	Preverified func(hash string) bool
	// Known, if set, returns records that were loaded, parsed and had their
	// hash, signature (under Key) and hash rule verified moments ago on the
	// bytes Load would return (a pull, before the cache indexes what it
	// merged): such a record is not loaded, parsed or hashed again; it is
	// still checked against its entry (hash, device, parent, ts), linked,
	// and bound to Repo as usual. ok false: the record is checked in full.
	Known func(hash string) (cp *checkpoint.Checkpoint, rule checkpoint.Rule, ok bool)
	// SessionRoots selects the linkage rule of the ghyll-v1 layout
	// (docs/FORMAT.md §5.1), where ghyll's library roots a new chain per
	// session: an entry's parent is the zero hash (a new root, refused for
	// a session that already has records), the previous entry's hash, or
	// the latest earlier record of the entry's own session (for a record
	// without a session: of its parent's session). Without it, the chain
	// is linear.
	SessionRoots bool
	// Prior, with SessionRoots, is the chain before Entries, verified
	// earlier (empty: Entries start the chain). Their files are read (not
	// verified again) through PriorLoad, or Load when that is nil, only
	// when an entry's linkage needs their sessions.
	Prior     []checkpoint.ChainEntry
	PriorLoad Loader
	// Workers, when more than 1, is how many records are loaded, parsed
	// and checked against their entries and the key at once, ahead of the
	// in-order walk (ahead.go); Load and Preverified must then be safe for
	// concurrent use. The verdict is the same as with one.
	Workers int
}

// Verify checks every entry in order and stops at the first failure: linkage,
// no repeated hash, the checkpoint file's hash/sig under Key, the file naming
// the same device, parent and ts as its chain line and (when Repo is set) a
// repository that binds to the chain's directory. With SessionRoots the
// linkage is the ghyll-v1 rule (sessionLinks), checked once the record's
// signature has verified, since it reads the record's session.
func Verify(in Input) Result {
	res := Result{Device: in.Device, Rules: map[checkpoint.Rule]int{}}
	fail := func(i int, hash string, r Reason, format string, args ...any) Result {
		res.Failure = &Failure{Device: in.Device, Index: i, Hash: hash, Reason: r, Detail: fmt.Sprintf(format, args...)}
		return res
	}
	if len(in.Entries) == 0 {
		return res
	}
	if in.Key == nil {
		return fail(0, in.Entries[0].Hash, UnknownKey, "no public key for this device on the branch")
	}
	prev := checkpoint.ZeroHash
	if in.Trusted != nil {
		prev = in.Trusted.Hash
	}
	var links *sessionLinks
	if in.SessionRoots {
		links = newSessionLinks(in)
	}
	seen := make(map[string]bool, len(in.Entries))
	look := newAhead(&in)
	defer look.close()
	for i, e := range in.Entries {
		if links == nil && e.Parent != prev {
			return fail(i, e.Hash, BrokenChain, "parent %s, want %s", short(e.Parent), short(prev))
		}
		if seen[e.Hash] || links.holds(e.Hash) {
			return fail(i, e.Hash, Duplicate, "hash appears twice in the chain")
		}
		seen[e.Hash] = true
		c := look.get(i)
		cp, rule := c.cp, c.rule
		if c.reason != "" {
			return fail(i, e.Hash, c.reason, "%s", c.detail)
		}
		if r, detail := links.link(e, cp.SessionID); r != "" {
			return fail(i, e.Hash, r, "%s", detail)
		}
		// After the signature: wrong_repo means an authentic record in the
		// wrong place (replayed from another repository).
		if in.Repo != "" && !BindsTo(cp.RepoRemote, in.Repo) {
			return fail(i, e.Hash, WrongRepo, "record names repository %q, which does not bind to repos/%s", cp.RepoRemote, in.Repo)
		}
		if in.Verified != nil {
			if err := in.Verified(i, cp, rule); err != nil {
				return fail(i, e.Hash, Malformed, "%v", err)
			}
		}
		links.accept(e, cp.SessionID)
		res.Rules[rule]++
		res.Verified++
		res.Head = e
		prev = e.Hash
	}
	return res
}

// record loads the checkpoint file of e and checks it against e and the
// key: it exists and parses, names e's hash, the chain's device, e's parent
// and ts, and its hash and signature verify (the signature not a second
// time when Preverified says so; a record Known is not loaded, parsed or
// hashed again, only checked against e). A failure returns its reason and
// detail.
func (in *Input) record(e checkpoint.ChainEntry) (*checkpoint.Checkpoint, checkpoint.Rule, Reason, string) {
	if in.Known != nil {
		if cp, rule, ok := in.Known(e.Hash); ok && cp != nil && cp.Hash == e.Hash && rule != "" {
			if r, detail := matchesEntry(in.Device, e, cp); r != "" {
				return nil, "", r, detail
			}
			return cp, rule, "", ""
		}
	}
	cp, r, detail := parseRecord(in.Load, e)
	if r != "" {
		return nil, "", r, detail
	}
	if r, detail := matchesEntry(in.Device, e, cp); r != "" {
		return nil, "", r, detail
	}
	var rule checkpoint.Rule
	var err error
	if in.Preverified != nil && in.Preverified(e.Hash) {
		rule, err = cp.MatchRule()
	} else {
		rule, err = cp.Verify(in.Key)
	}
	switch {
	case errors.Is(err, checkpoint.ErrHashMismatch):
		return nil, "", HashMismatch, "content does not match its hash"
	case errors.Is(err, checkpoint.ErrBadSignature), errors.Is(err, checkpoint.ErrBadKey):
		return nil, "", BadSignature, err.Error()
	case err != nil:
		return nil, "", Malformed, err.Error()
	}
	return cp, rule, "", ""
}

// matchesEntry checks that the record cp of the chain of device is what
// its chain line e says: the device, the parent and the ts.
func matchesEntry(device string, e checkpoint.ChainEntry, cp *checkpoint.Checkpoint) (Reason, string) {
	if cp.DeviceID != device {
		return WrongDevice, fmt.Sprintf("record names device %q", cp.DeviceID)
	}
	if cp.ParentHash != e.Parent || cp.Timestamp != e.TS {
		return EntryMismatch, "chain line and checkpoint file disagree on parent or ts"
	}
	return "", ""
}

// parseRecord loads and parses the checkpoint file of e and checks that it
// holds e's hash.
func parseRecord(load Loader, e checkpoint.ChainEntry) (*checkpoint.Checkpoint, Reason, string) {
	raw, err := load(e.Hash)
	if err != nil {
		switch {
		case errors.Is(err, ErrMissing):
			return nil, MissingCheckpoint, "chain names a checkpoint file that is not on the branch"
		case errors.Is(err, ErrTooLarge):
			return nil, TooLarge, err.Error()
		}
		return nil, Malformed, err.Error()
	}
	cp, err := checkpoint.Parse(raw)
	if err != nil {
		return nil, Malformed, err.Error()
	}
	if cp.Hash != e.Hash {
		return nil, HashMismatch, fmt.Sprintf("file holds hash %s", short(cp.Hash))
	}
	return cp, "", ""
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
