package chain

// Reason is why a record, a path or a file failed verification: the one
// vocabulary of `git ctx verify`, the pull's rejections and quarantine, the
// cache's quarantine, `git ctx review` and package checks. Each reason is
// documented once, here, in the words of docs/FORMAT.md §10a.
type Reason string

// Checkpoint chains (docs/FORMAT.md §7). The first four are ghyll's strings.
const (
	// HashMismatch: the checkpoint file's hash is not the chain entry's, or
	// its content does not hash to it under either rule.
	HashMismatch Reason = "hash_mismatch"
	// BadSignature: a checkpoint's or snapshot's signature does not verify
	// under the key it must be signed with.
	BadSignature Reason = "bad_signature"
	// BrokenChain: an entry's parent is not the previous entry's hash (the
	// zero hash for the first entry); in the ghyll-v1 layout, neither that,
	// nor the zero hash, nor the latest record of the entry's session.
	BrokenChain Reason = "broken_chain"
	// UnknownKey: the device has no valid public key on the branch (on
	// either branch, for a pull), so its records or signed timeline lines
	// cannot be checked.
	UnknownKey Reason = "unknown_key"
	// MissingCheckpoint: the chain names a checkpoint file that is not on
	// the branch.
	MissingCheckpoint Reason = "missing_checkpoint"
	// Malformed: a chain or checkpoint file does not parse, or breaks the
	// layout's form.
	Malformed Reason = "malformed"
	// WrongDevice: the checkpoint file names another device than the
	// chain it sits in.
	WrongDevice Reason = "wrong_device"
	// EntryMismatch: a chain line and its checkpoint file disagree on
	// parent or ts, or a timeline entry's fields do not match its snapshot.
	EntryMismatch Reason = "entry_mismatch"
	// Duplicate: a hash appears twice in one chain.
	Duplicate Reason = "duplicate_entry"
	// TooLarge: a file's object is larger than the limit of its kind, told
	// by its object header: its body was never inflated.
	TooLarge Reason = "too_large"
	// WrongRepo: a record's signed repo field does not bind to the
	// repos/<id>/ directory it sits in, or that directory is neither this
	// repository's id nor an adopted one (BindsTo, docs/FORMAT.md §3.4).
	WrongRepo Reason = "wrong_repo"
	// SessionFork: in the ghyll-v1 layout, a record continues a record of
	// its session that another record of the session already continues, or
	// starts a second root for a session that already has records.
	SessionFork Reason = "session_fork"
)

// Pull (docs/FORMAT.md §10): what a fetch brought that is not merged.
const (
	// UnsafePath: a fetched path has a component git refuses or a checkout
	// reads as .git or .gitmodules (docs/FORMAT.md §1.4); nothing of it is
	// read.
	UnsafePath Reason = "unsafe_path"
	// BadDeviceID: a fetched device id breaks the read rule of
	// docs/FORMAT.md §6.3, or collides by case or trailing dots with a
	// pinned or another arriving id; none of its key, records or snapshots
	// are merged.
	BadDeviceID Reason = "bad_device_id"
	// BadRepoID: a fetched repos/<id>/ directory name is not a valid
	// repository id.
	BadRepoID Reason = "bad_repo_id"
	// KeyChanged: the remote replaces the key pinned for a device; none of
	// that device's records are merged.
	KeyChanged Reason = "key_changed"
	// BadKey: a fetched device key does not parse.
	BadKey Reason = "bad_key"
	// Untrusted: the trust policy refuses the device (ctx.untrustedDevice,
	// or not in the allowlist).
	Untrusted Reason = "untrusted"
	// UnexpectedPath: a symlink, gitlink, executable or any path outside
	// the layout.
	UnexpectedPath Reason = "unexpected_path"
	// RewritesRecord: the remote changed a checkpoint or snapshot file this
	// branch already holds.
	RewritesRecord Reason = "rewrites_record"
	// OrphanFile: a fetched checkpoint file named by no chain, or snapshot
	// file named by no timeline.
	OrphanFile Reason = "orphan_file"
	// Fork: a fetched chain or timeline diverges from the local one at a
	// validly signed record; nothing past the shared prefix is merged.
	Fork Reason = "fork"
	// LayoutMismatch: the remote's LAYOUT (layout or fan-out depth) differs
	// from the local branch's; nothing is merged.
	LayoutMismatch Reason = "layout_mismatch"
	// MalformedChain: a fetched chain cannot be read in the layout's form
	// (segments, lines); nothing of it is merged.
	MalformedChain Reason = "malformed_chain"
	// ChainMissing: reserved (listed in docs/JSON.md); no check of this
	// version reports it.
	ChainMissing Reason = "chain_missing"
	// RepoMismatch: the fetched REPO file fixes another repository id than
	// this branch's, or cannot be read; this branch's file stays.
	RepoMismatch Reason = "repo_mismatch"
	// BadAdoption: a fetched adoption line is not validly signed by a
	// device this clone accepts.
	BadAdoption Reason = "bad_adoption"
	// PackageConflict: the remote holds a different file under a
	// name@version whose file this branch holds and the remote once
	// published: the remote rewrote a published package.
	PackageConflict Reason = "package_conflict"
)

// Snapshot timelines (docs/FORMAT.md §2.3).
const (
	// MalformedTimeline: a timeline cannot be read in the layout's form
	// (segments, lines, ids, an id named twice).
	MalformedTimeline Reason = "malformed_timeline"
	// UnsignedTimelineEntry: a timeline line without the owner's line
	// signature where one is required (no signed line vouches for it).
	UnsignedTimelineEntry Reason = "unsigned_timeline_entry"
	// BadTimelineSignature: a line signature that does not verify under
	// the timeline owner's key for this repository, device and position.
	BadTimelineSignature Reason = "bad_timeline_signature"
	// MisplacedTimelineEntry: a validly signed line at another position
	// than the one it was signed for (seq or prev differ): moved or
	// replayed.
	MisplacedTimelineEntry Reason = "misplaced_timeline_entry"
	// MissingSnapshot: the timeline names a snapshot file that does not
	// exist.
	MissingSnapshot Reason = "missing_snapshot"
	// MalformedSnapshot: the snapshot file does not parse (or is larger
	// than its limit).
	MalformedSnapshot Reason = "malformed_snapshot"
	// IDMismatch: the snapshot file holds another snapshot than the
	// timeline entry names.
	IDMismatch Reason = "id_mismatch"
	// BadID: the snapshot's id does not verify over its content
	// (integrity).
	BadID Reason = "bad_id"
	// Unsigned: the snapshot carries no signature.
	Unsigned Reason = "unsigned"
	// UnknownSigner: the snapshot is signed by a key that is neither its
	// device's nor any device key on the branch.
	UnknownSigner Reason = "unknown_signer"
)

// Published context packages (docs/FORMAT.md §2.3a).
const (
	// MalformedPackage: the package file does not parse.
	MalformedPackage Reason = "malformed_package"
	// BadPackage: the package does not verify (manifest rules, kind
	// coherence, integrity, a signature when present).
	BadPackage Reason = "bad_package"
	// UnsafeName: the manifest's name or version cannot be stored as a
	// path.
	UnsafeName Reason = "unsafe_name"
	// PathMismatch: the package file does not sit at its manifest's
	// name/version path.
	PathMismatch Reason = "path_mismatch"
)

// Reasons lists every reason, in the order of docs/FORMAT.md §10a.
func Reasons() []Reason {
	return []Reason{
		HashMismatch, BadSignature, BrokenChain, UnknownKey, MissingCheckpoint, Malformed, WrongDevice,
		EntryMismatch, Duplicate, TooLarge, WrongRepo, SessionFork,
		UnsafePath, BadDeviceID, BadRepoID, KeyChanged, BadKey, Untrusted, UnexpectedPath, RewritesRecord,
		OrphanFile, Fork, LayoutMismatch, MalformedChain, ChainMissing, RepoMismatch, BadAdoption, PackageConflict,
		MalformedTimeline, UnsignedTimelineEntry, BadTimelineSignature, MisplacedTimelineEntry, MissingSnapshot,
		MalformedSnapshot, IDMismatch, BadID, Unsigned, UnknownSigner,
		MalformedPackage, BadPackage, UnsafeName, PathMismatch,
	}
}
