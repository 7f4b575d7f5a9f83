package chain

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"runtime"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Tree is the memory branch as chain reads it: a device's key, chain,
// checkpoint files, timeline and snapshot files, by repository, device,
// hash and id. Paths are the layout's business: gitstore.View provides a
// Tree (View.ChainTree), so chain never imports gitstore.
//
// Errors: a key, checkpoint or snapshot file that is not on the branch is
// ErrMissing; a chain or timeline that does not exist is no error (no
// entries). A file larger than its limit is ErrTooLarge, and a chain or
// timeline not in the layout's form (segments, lines) is ErrUnreadable,
// each wrapping the store's own error. Any other error is the store's
// and stops the caller.
type Tree interface {
	// DeviceKey is the public key published for device.
	DeviceKey(device string) (ed25519.PublicKey, error)
	// ChainBytes is device's whole chain in repo as stored (ctx-v1
	// segments concatenated), nil when there is none.
	ChainBytes(repo, device string) ([]byte, error)
	// ChainFrom is device's chain in repo from 0-based position start on.
	ChainFrom(repo, device string, start int) ([]checkpoint.ChainEntry, error)
	// CheckpointFile is the file of the checkpoint hash in repo.
	CheckpointFile(repo, hash string) ([]byte, error)
	// TimelineLines is device's snapshot timeline in repo.
	TimelineLines(repo, device string) ([]snapshot.TimelineLine, error)
	// SnapshotFile is the file of the snapshot id in repo.
	SnapshotFile(repo, id string) ([]byte, error)
}

// ErrUnreadable is returned (wrapped) by a Tree when a chain or timeline is
// not in the layout's form.
var ErrUnreadable = fault.Sentinel(fault.Failed, "not in the layout's form")

// Records is the one Loader of checkpoint files: repo's files in t.
func Records(t Tree, repo string) Loader {
	return func(hash string) ([]byte, error) { return t.CheckpointFile(repo, hash) }
}

// unreadable reports whether err is a Tree's refusal of what it read (too
// large or not in the layout's form), as opposed to a failure of the store.
func unreadable(err error) bool {
	return errors.Is(err, ErrUnreadable) || errors.Is(err, ErrTooLarge)
}

// ReadChain reads device's whole chain in repo from t. A chain that cannot
// be read or parsed is a Malformed failure (Index: the bad line's 0-based
// position, or -1 when the chain itself cannot be read), with the entries
// before it; err is a failure of the store.
func ReadChain(t Tree, repo, device string) ([]checkpoint.ChainEntry, *Failure, error) {
	raw, err := t.ChainBytes(repo, device)
	if err != nil {
		if unreadable(err) {
			return nil, &Failure{Device: device, Index: -1, Reason: Malformed, Detail: err.Error()}, nil
		}
		return nil, nil, err
	}
	list, line, err := checkpoint.ParseChain(raw)
	if err != nil {
		return list, &Failure{Device: device, Index: line - 1, Reason: Malformed, Detail: err.Error()}, nil
	}
	return list, nil, nil
}

// Stored asks VerifyStored to verify one device's chain as it is stored.
type Stored struct {
	Repo, Device string
	Key          ed25519.PublicKey // nil: no valid key on the branch
	// Foreign: repo is neither this repository's id nor an adopted one;
	// a non-empty chain there fails WrongRepo without being read further.
	Foreign bool
	// Load, if set, replaces Records(t, Repo) (e.g. files already listed).
	Load Loader
	// SessionRoots: the chain is in the ghyll-v1 layout, whose linkage
	// rule allows a root per session (Input.SessionRoots).
	SessionRoots bool
	// Workers: Input.Workers (0: GOMAXPROCS).
	Workers int
}

// StoredResult is VerifyStored's verdict on one chain.
type StoredResult struct {
	// List: the chain's entries (up to a line that does not parse).
	List []checkpoint.ChainEntry
	Result
}

// VerifyStored reads one device's chain from t and verifies it from the
// genesis (`git ctx verify`): ReadChain, then WrongRepo when the directory
// is Foreign, then Verify with the repository binding checked, its records
// checked on GOMAXPROCS workers (Input.Workers: t and s.Load must be safe
// for concurrent use).
func VerifyStored(t Tree, s Stored) (StoredResult, error) {
	list, fail, err := ReadChain(t, s.Repo, s.Device)
	if err != nil {
		return StoredResult{}, err
	}
	out := StoredResult{List: list, Result: Result{Device: s.Device, Rules: map[checkpoint.Rule]int{}}}
	if fail == nil && s.Foreign && len(list) > 0 {
		fail = &Failure{Device: s.Device, Index: -1, Reason: WrongRepo,
			Detail: "repos/" + s.Repo + " is neither this repository's id nor an adopted one (git ctx adopt)"}
	}
	if fail != nil {
		out.Failure = fail
		return out, nil
	}
	load := s.Load
	if load == nil {
		load = Records(t, s.Repo)
	}
	out.Result = Verify(Input{Device: s.Device, Repo: s.Repo, Key: s.Key, Entries: list, Load: load, SessionRoots: s.SessionRoots,
		Workers: workers(s.Workers)})
	return out, nil
}

// workers is n, or GOMAXPROCS when n is 0.
func workers(n int) int {
	if n == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// Increment asks VerifyNew for the records of one device's chain past the
// ones already verified (the cache's refresh).
type Increment struct {
	Repo, Device string
	// Have entries are known already; the last of them is LastHash. They
	// are trusted: the new ones must continue them.
	Have     int
	LastHash string
	// Preverified, Verified: as in Input; Verified's i is the record's
	// 0-based position in the whole chain.
	Preverified func(hash string) bool
	Verified    func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error
	// Known: as in Input (records a pull verified, not read again).
	Known func(hash string) (*checkpoint.Checkpoint, checkpoint.Rule, bool)
	// SessionRoots: the chain is in the ghyll-v1 layout (Input.SessionRoots);
	// the whole chain is read, the first Have entries as Input.Prior.
	SessionRoots bool
	// Workers: Input.Workers (0: GOMAXPROCS).
	Workers int
}

// Unverified is a record after a chain's first failure whose file still
// parses and names its entry's hash: kept (as unverified) by the cache.
type Unverified struct {
	Seq  int // 0-based position in the whole chain
	CP   *checkpoint.Checkpoint
	Rule checkpoint.Rule // "" when neither hash rule matches
}

// IncrementResult is VerifyNew's verdict.
type IncrementResult struct {
	// Failure is the first new record that failed (nil: all verified);
	// its Index counts from the first new record.
	Failure *Failure
	// After: the failing record and the later ones that can still be read.
	After []Unverified
	// Unreadable: the chain could not be read at all (quarantined as
	// Malformed with this detail); nothing else is set.
	Unreadable string
}

// DivergedError means the chain no longer holds the entry a caller had
// verified at that position: the history was rewritten.
type DivergedError struct {
	Device, Hash string
	Position     int // 1-based
}

// ErrDiverged is what every DivergedError is (errors.Is).
var ErrDiverged = fault.Sentinel(fault.Failed, "chain history rewritten")

// Unwrap makes a DivergedError an ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

func (e *DivergedError) Error() string {
	return fmt.Sprintf("the chain of %s no longer holds checkpoint %s at position %d", e.Device, short(e.Hash), e.Position)
}

// VerifyNew reads device's chain in t from entry Have-1 on (only the
// segments holding it) and verifies the records past the first Have,
// continuing LastHash, under the device's key on the branch, with the
// repository binding checked, on GOMAXPROCS workers (Input.Workers: t and
// in.Preverified must be safe for concurrent use; in.Verified is called
// in chain order from one goroutine). err is a *DivergedError when the chain no
// longer holds LastHash at position Have.
func VerifyNew(t Tree, in Increment) (IncrementResult, error) {
	var out IncrementResult
	from := max(in.Have-1, 0)
	if in.SessionRoots {
		from = 0
	}
	entries, err := t.ChainFrom(in.Repo, in.Device, from)
	if err != nil {
		out.Unreadable = err.Error()
		return out, nil
	}
	vin := Input{Device: in.Device, Repo: in.Repo, Load: Records(t, in.Repo), Preverified: in.Preverified, Known: in.Known,
		SessionRoots: in.SessionRoots, Workers: workers(in.Workers)}
	if in.Have > 0 {
		// entries[known-1] is the entry at position Have-1.
		known := in.Have - from
		if len(entries) < known || entries[known-1].Hash != in.LastHash {
			return out, &DivergedError{Device: in.Device, Hash: in.LastHash, Position: in.Have}
		}
		vin.Trusted, vin.Prior, entries = &entries[known-1], entries[:known], entries[known:]
	}
	if len(entries) == 0 {
		return out, nil
	}
	vin.Entries = entries
	if in.Verified != nil {
		vin.Verified = func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error {
			return in.Verified(in.Have+i, cp, rule)
		}
	}
	if k, err := t.DeviceKey(in.Device); err == nil {
		vin.Key = k
	}
	res := Verify(vin)
	if res.Failure == nil {
		return out, nil
	}
	out.Failure = res.Failure
	out.After = readable(vin.Load, entries[res.Failure.Index:], in.Have+res.Failure.Index)
	return out, nil
}

// readable returns the records of entries, from the first on, as long as
// each file loads, parses and names its entry's hash; seq is the first
// one's position.
func readable(load Loader, entries []checkpoint.ChainEntry, seq int) []Unverified {
	var out []Unverified
	for i, e := range entries {
		raw, err := load(e.Hash)
		if err != nil {
			break
		}
		cp, err := checkpoint.Parse(raw)
		if err != nil || cp.Hash != e.Hash {
			break
		}
		rule, _ := cp.MatchRule() // "" when neither rule matches
		out = append(out, Unverified{Seq: seq + i, CP: cp, Rule: rule})
	}
	return out
}

// Continuation is the verdict of Continue on a fetched chain.
type Continuation struct {
	// Shared: the entries both chains begin with.
	Shared int
	// Fork: the fetched chain diverges from the local one at entry Shared
	// with a validly signed record; Local is the local record there.
	Fork  bool
	Local string
	// Result: the fetched entries past Shared that verified (none at a
	// divergence) and the first failure. At a divergence that is not a
	// fork, Failure says why the fetched record there is bad.
	Result Result
}

// Compare asks Continue about one device's chain.
type Compare struct {
	Device, Repo  string
	Key           ed25519.PublicKey
	Local, Remote []checkpoint.ChainEntry
	Load          Loader // the fetched chain's checkpoint files
	// SessionRoots: the chains are in the ghyll-v1 layout
	// (Input.SessionRoots); the shared prefix is Input.Prior, its files
	// read through LocalLoad (the local branch's), or Load when nil.
	SessionRoots bool
	LocalLoad    Loader
	// Verified, if set, receives each fetched record past Shared that
	// verified, in chain order (Input.Verified; i counts from Shared).
	Verified func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error
	// Workers: Input.Workers for the fetched records (0 or 1: checked in
	// the walk, one at a time; more: Load must be safe for concurrent use).
	Workers int
}

// Continue decides what of a fetched chain (Remote) may join the local one
// (Local) — the pull's rule. A chain that extends the local one is
// verified from the last shared entry on and its records are taken up to
// the first failure; a chain that diverges is a fork when its record at
// the divergence is validly signed (Verify from the shared prefix), else
// tampering, and nothing past the shared prefix is taken.
func Continue(c Compare) Continuation {
	n := 0
	for n < len(c.Local) && n < len(c.Remote) && c.Local[n] == c.Remote[n] {
		n++
	}
	out := Continuation{Shared: n, Result: Result{Device: c.Device, Rules: map[checkpoint.Rule]int{}}}
	if n == len(c.Remote) {
		return out // nothing new
	}
	in := Input{Device: c.Device, Repo: c.Repo, Key: c.Key, Entries: c.Remote[n:], Load: c.Load,
		SessionRoots: c.SessionRoots, Prior: c.Remote[:n], PriorLoad: c.LocalLoad, Verified: c.Verified, Workers: c.Workers}
	if n > 0 {
		in.Trusted = &c.Remote[n-1]
	}
	if n < len(c.Local) {
		in.Entries, in.Verified = c.Remote[n:n+1], nil // a divergence: nothing is taken
		res := Verify(in)
		if res.Failure == nil {
			out.Fork, out.Local = true, c.Local[n].Hash
			return out
		}
		out.Result.Failure = res.Failure
		return out
	}
	out.Result = Verify(in)
	return out
}
