package session

import (
	"errors"
	"fmt"
)

// Limits. All sizes are in bytes.
const (
	// MaxManifestSize is the largest manifest plaintext accepted or written.
	MaxManifestSize = 4 << 20
	// MaxMetadataLine is the largest envelope line, its "\n" included.
	MaxMetadataLine = 1 << 20
	// MaxRecordSize is the largest JSONL record, its "\n" included.
	MaxRecordSize = 16 << 20
	// MaxPayloadSize is the largest TAR payload (files[0].size), and the
	// largest TAR entry body.
	MaxPayloadSize = 32 << 30
	// MaxPathLen is the longest artifact path or TAR entry name.
	MaxPathLen = 1024
	// MaxPathComponentLen is the longest single path component.
	MaxPathComponentLen = 255
	// MaxPassphraseLen is the longest passphrase accepted.
	MaxPassphraseLen = 4096
)

// Envelope, framing and manifest errors.
var (
	ErrMetadataTooLarge    = errors.New("snapshot metadata exceeds maximum size")
	ErrMetadataTruncated   = errors.New("snapshot metadata ends before its newline")
	ErrInvalidMetadata     = errors.New("invalid snapshot metadata")
	ErrStrictJSON          = errors.New("not strict JSON")
	ErrUnsupportedSchema   = errors.New("unsupported schema_version")
	ErrUnexpectedKind      = errors.New("unexpected snapshot kind")
	ErrMissingField        = errors.New("required field missing")
	ErrArtifactCount       = errors.New("snapshot must contain exactly one artifact")
	ErrInvalidPayloadSize  = errors.New("invalid snapshot payload size")
	ErrInvalidPayloadHash  = errors.New("invalid snapshot payload hash")
	ErrInvalidMode         = errors.New("invalid snapshot file mode")
	ErrInvalidTimestamp    = errors.New("invalid timestamp")
	ErrSnapshotIdentity    = errors.New("snapshot identity mismatch")
	ErrAgentMismatch       = errors.New("snapshot agent mismatch")
	ErrSessionMismatch     = errors.New("snapshot session mismatch")
	ErrProjectMismatch     = errors.New("snapshot project mismatch")
	ErrPayloadSizeMismatch = errors.New("snapshot payload size mismatch")
	ErrPayloadHashMismatch = errors.New("snapshot payload hash mismatch")

	ErrManifestTooLarge     = errors.New("manifest exceeds maximum size")
	ErrInvalidManifest      = errors.New("invalid manifest")
	ErrInvalidManifestEntry = errors.New("invalid manifest entry")
)

// Path errors. Every path error also matches ErrUnsafePath, except
// ErrCredentialPath and ErrAdapterPath, which are separate rules.
var (
	ErrUnsafePath     = errors.New("unsafe snapshot path")
	ErrPathTraversal  = errors.New("path contains a .. component")
	ErrPathAbsolute   = errors.New("path is absolute")
	ErrPathBackslash  = errors.New("path contains a backslash")
	ErrPathTooLong    = errors.New("path too long")
	ErrPathInvalid    = errors.New("path is empty, not clean, or contains a forbidden character")
	ErrCredentialPath = errors.New("snapshot path is excluded credential material")
	ErrAdapterPath    = errors.New("path does not fit the agent's session layout")
)

// TAR errors.
var (
	ErrTARMalformed     = errors.New("tar: malformed archive")
	ErrTAREmpty         = errors.New("tar: archive has no entry")
	ErrTARSymlink       = errors.New("tar: entry is a symbolic link")
	ErrTARHardlink      = errors.New("tar: entry is a hard link")
	ErrTARDevice        = errors.New("tar: entry is a device or FIFO")
	ErrTARNotRegular    = errors.New("tar: entry is not a regular file")
	ErrTARNameMismatch  = errors.New("tar: entry name differs from the artifact path")
	ErrTAREntryTooLarge = errors.New("tar: entry exceeds the payload limit")
	ErrTARSizeMismatch  = errors.New("tar: entry body shorter than its header size")
	ErrTARSecondEntry   = errors.New("tar: archive has a second entry")
	ErrTARNoTrailer     = errors.New("tar: archive lacks its two-block end marker")
	ErrTARTrailingData  = errors.New("tar: non-zero data after the end of the archive")
)

// Encryption errors. No error message ever contains the passphrase.
var (
	ErrEmptyPassphrase        = errors.New("empty passphrase")
	ErrPassphraseTooLong      = errors.New("passphrase exceeds 4096 bytes")
	ErrWeakWorkFactor         = errors.New("scrypt work factor below the default needs AllowWeak")
	ErrWorkFactorTooHigh      = errors.New("scrypt work factor too high")
	ErrWrongPassphrase        = errors.New("decrypt: incorrect passphrase")
	ErrNotPassphraseEncrypted = errors.New("decrypt: not encrypted to exactly one passphrase")
	ErrTruncated              = errors.New("decrypt: ciphertext truncated")
	ErrTampered               = errors.New("decrypt: ciphertext failed authentication")
	ErrMalformedCiphertext    = errors.New("decrypt: not a binary age file")
)

// JSONL errors.
var (
	ErrRecordTooLarge = errors.New("jsonl record exceeds maximum size")
	ErrUnknownAgent   = errors.New("unknown agent")
)

// pathError reports a path rule violation. It matches its kind and
// ErrUnsafePath.
type pathError struct {
	kind error
	path string
}

func (e *pathError) Error() string {
	p := e.path
	if len(p) > 128 {
		p = p[:128] + "..."
	}
	return fmt.Sprintf("%v: %v: %q", ErrUnsafePath, e.kind, p)
}

func (e *pathError) Unwrap() error { return e.kind }

func (e *pathError) Is(target error) bool { return target == ErrUnsafePath }

// multiError matches several sentinels at once (a cut inside the last age
// chunk is both a truncation and an authentication failure).
type multiError struct {
	msg   string
	kinds []error
}

func (e *multiError) Error() string   { return e.msg }
func (e *multiError) Unwrap() []error { return e.kinds }
