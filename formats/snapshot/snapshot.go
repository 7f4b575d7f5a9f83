// Package snapshot reads, writes, identifies, signs and verifies lean-ctx
// Context Snapshot v1 files (CONTEXT_SNAPSHOT_V1, status Experimental), byte
// for byte as lean-ctx 3.9.18 does, together with the pieces of its store
// that are pure data: timeline index lines, id prefix resolution, the
// project directory hash and the signing key file content.
//
// It is pure: it takes bytes and returns values, and knows nothing of git,
// SQLite or the file system.
//
// Encoding is serde_json's (package serdejson): keys in Rust declaration
// order, every key always present, None as null, empty lists as [], f64 as
// zmij formats it (0.0, never 0). Files are pretty JSON without a trailing
// newline; index lines are compact.
//
// Identity and signing:
//
//   - snapshot_id = lowercase hex BLAKE3-256 of the canonical body: the
//     compact encoding with snapshot_id "" and signature null (both keys
//     kept). It is computed from the typed values, never from file bytes, so
//     unknown fields in a file are ignored and dropped. Verification accepts
//     the id of either serde_json float era (IntegrityEra): zmij's "1e+16",
//     which is what this package writes, or the "1e16" of lean-ctx builds
//     whose serde_json predates zmij.
//   - signature = Ed25519 over the 64 ASCII bytes of
//     hex(SHA-256("ctxsnapshot-sign-v1:" + snapshot_id)), stored with the
//     signer's public key as lowercase hex. There is no trust list in
//     lean-ctx: a snapshot verifies under the key it carries.
//
// Parsing follows serde_derive's defaults: unknown fields ignored, missing
// Option fields None, missing other fields, duplicate fields, null in a list
// or non-Option field, floats in integer fields, negative or out-of-range
// integers are errors; the struct-as-array form serde accepts is accepted.
//
// Deliberate differences from lean-ctx:
//
//   - Encoding refuses (ErrUnencodable) a NaN or ±Inf in a non-Option f64 and
//     strings that are not valid UTF-8. serde_json would write null for the
//     float, giving a file neither lean-ctx nor this package can read back;
//     Rust strings cannot hold invalid UTF-8. A non-finite phi (Option<f64>)
//     is written null, as serde_json does, which is also what None gives.
//   - ParseFile refuses input over MaxFileSize (lean-ctx has no limit).
//   - The signature hex decoder refuses a '+' inside a byte pair, which
//     Rust's u8::from_str_radix accepts ("+f" = 0x0f), and reports non-ASCII
//     input as an invalid digit where lean-ctx may panic.
//   - Verify takes an optional expected public key: with a non-nil key, a
//     snapshot signed by any other key verifies false. With nil it is
//     lean-ctx's self-consistency check.
//   - lean-ctx checks an id only in its own float era; this package also
//     accepts the older (ryu) era's id, and Sign keeps such an id.
//   - Floats are parsed correctly rounded (see package serdejson); lean-ctx
//     may be 1 ulp off on some 17-digit inputs.
package snapshot

import (
	"errors"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// SchemaVersion is the schema_version lean-ctx writes. Parsing accepts any
// u32, as lean-ctx does.
const SchemaVersion = 1

// Caps the lean-ctx builder applies (see ApplyCaps). Nothing enforces them
// on parse or verify.
const (
	MaxLineageItems = 128 // MAX_SNAPSHOT_LINEAGE_ITEMS
	MaxLedgerItems  = 256 // MAX_SNAPSHOT_LEDGER_ITEMS
	MaxSessionList  = 64  // MAX_SNAPSHOT_SESSION_LIST, decisions and files_touched each
)

// MaxFileSize is the largest snapshot file ParseFile accepts. A capped
// snapshot with ordinary paths and texts is a few hundred KiB at most; the
// limit only guards against hostile input.
const MaxFileSize = 8 << 20

// SignatureAlgorithm is the only algorithm Verify accepts (case-sensitive).
const SignatureAlgorithm = dalek.Algorithm

// SignPrefix is prepended to the snapshot id before hashing the message to
// sign.
const SignPrefix = "ctxsnapshot-sign-v1:"

// Lineage item kinds and ledger item states lean-ctx writes. Neither field is
// validated on parse.
const (
	KindRead     = "read"
	KindShell    = "shell"
	KindSearch   = "search"
	KindProvider = "provider"
	KindOther    = "other"

	StateCandidate = "candidate"
	StateIncluded  = "included"
	StateExcluded  = "excluded"
	StatePinned    = "pinned"
	StateStale     = "stale"
	StateShadowed  = "shadowed"
)

// Snapshot is ContextSnapshotV1. Field order is the canonical key order.
type Snapshot struct {
	SchemaVersion  uint32     // schema_version
	SnapshotID     string     // snapshot_id: BLAKE3 hex, "" in the canonical body
	ParentID       *string    // parent_id: previous timeline head
	CreatedAt      string     // created_at: opaque; never reformat it
	LeanCtxVersion string     // lean_ctx_version
	Git            GitAnchor  // git
	Project        Project    // project
	ROI            ROI        // roi
	Lineage        Lineage    // lineage
	Ledger         Ledger     // ledger
	Session        *Session   // session
	Signature      *Signature // signature: null in the canonical body
}

// GitAnchor is GitAnchorV1.
type GitAnchor struct {
	Commit *string // commit
	Branch *string // branch
	Dirty  bool    // dirty
}

// Project is SnapshotProjectV1: hashes only, never raw paths.
type Project struct {
	RootHash     *string // root_hash: 16 hex digits (ProjectHash)
	IdentityHash *string // identity_hash: BLAKE3 hex of the identity string
}

// ROI is SnapshotRoiV1.
type ROI struct {
	InputTokens     uint64  // input_tokens
	OutputTokens    uint64  // output_tokens
	TokensSaved     uint64  // tokens_saved
	CompressionRate float64 // compression_rate (f64)
}

// Lineage is SnapshotLineageV1.
type Lineage struct {
	ItemsRecorded uint64        // items_recorded
	Items         []LineageItem // items
}

// LineageItem is SnapshotLineageItemV1.
type LineageItem struct {
	Seq              uint64  // seq
	Kind             string  // kind: one of the Kind* constants
	Tool             string  // tool
	Path             *string // path
	InputTokens      uint64  // input_tokens
	OutputTokens     uint64  // output_tokens
	CompressionRatio float64 // compression_ratio (f64)
	ContentHash      *string // content_hash: BLAKE3 hex of the excerpt
}

// Ledger is SnapshotLedgerV1.
type Ledger struct {
	WindowSize       uint64       // window_size (usize)
	TotalTokensSent  uint64       // total_tokens_sent (usize)
	TotalTokensSaved uint64       // total_tokens_saved (usize)
	Items            []LedgerItem // items
}

// LedgerItem is SnapshotLedgerItemV1.
type LedgerItem struct {
	Path           string   // path
	State          string   // state: one of the State* constants
	Phi            *float64 // phi (Option<f64>)
	SentTokens     uint64   // sent_tokens (usize)
	OriginalTokens uint64   // original_tokens (usize)
}

// Session is SnapshotSessionV1.
type Session struct {
	SessionID    *string  // session_id
	Task         *string  // task
	Decisions    []string // decisions
	FilesTouched []string // files_touched
	ProgressPct  *uint8   // progress_pct (Option<u8>; 101..255 are accepted)
}

// Signature is SnapshotSignatureV1.
type Signature struct {
	Algorithm string // algorithm: "ed25519"
	PublicKey string // public_key: hex of the 32-byte key
	Value     string // value: hex of the 64-byte signature
}

// New returns the empty shell lean-ctx's ContextSnapshotV1::new builds:
// schema version 1, no id, parent, anchor, hashes, items, session or
// signature, all counters 0.
func New(createdAt, leanCtxVersion string) *Snapshot {
	return &Snapshot{SchemaVersion: SchemaVersion, CreatedAt: createdAt, LeanCtxVersion: leanCtxVersion}
}

// Errors. Where lean-ctx reports a fixed text, Error() of the returned error
// is exactly that text (parameters appended as lean-ctx formats them), and
// errors.Is matches the sentinel.
var (
	// ErrTooLarge: the input exceeds MaxFileSize.
	ErrTooLarge = errors.New("snapshot file too large")
	// ErrParse wraps every parse failure: "parse snapshot: {reason}".
	ErrParse = errors.New("parse snapshot")
	// ErrUnencodable: a value serde_json could not round-trip (see package doc).
	ErrUnencodable = errors.New("snapshot cannot be encoded")
	// ErrBadKey: a private key of the wrong size was given to Sign.
	ErrBadKey = dalek.ErrBadKey

	// Verification errors of malformed signature material (lean-ctx's
	// order: algorithm, id, key hex, signature hex, lengths, key point) are
	// package dalek's (dalek.ErrUnsupportedAlgorithm, …), shared with
	// packages.

	// Import (CheckImport).
	ErrIntegrity         = errors.New("integrity check failed: snapshot body does not match its id")
	ErrSignatureRejected = errors.New("signature verification failed — refusing to import")

	// Store and timeline.
	ErrNotFinalized = errors.New("snapshot id is empty — finalize or sign before storing")
	ErrInvalidID    = errors.New("invalid snapshot id")    // ": {id}"
	ErrEmptyPrefix  = errors.New("empty snapshot id")      // ResolveID
	ErrNoMatch      = errors.New("no snapshot matches id") // " '{p}'"
	ErrAmbiguous    = errors.New("ambiguous snapshot id")  // " '{p}' — use more characters"

	// ErrKeyFileCorrupt: "signing key file is corrupt (expected 64 hex chars,
	// got {n} chars) — delete it to regenerate (this changes your publisher
	// identity!)".
	ErrKeyFileCorrupt = errors.New("signing key file is corrupt")
)
