package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Envelope constants.
const (
	EnvelopeSchemaVersion = 1
	Kind                  = "reinstate-session-snapshot"
	AdapterSchema         = 1
	// FileMode is the only mode written: 0600, the JSON number 384.
	FileMode = 0o600
	// TimeLayout is the form of every timestamp: UTC RFC 3339, whole
	// seconds, "Z".
	TimeLayout = "2006-01-02T15:04:05Z"
)

// Envelope is the metadata line of a snapshot (envelope v1). The field
// order is the JSON key order; every key is always written.
type Envelope struct {
	SchemaVersion      int              `json:"schema_version"`
	Kind               string           `json:"kind"`
	SnapshotID         string           `json:"snapshot_id"`
	ParentRevision     string           `json:"parent_revision"`
	Agent              string           `json:"agent"`
	AdapterSchema      int              `json:"adapter_schema"`
	SourceAgentVersion string           `json:"source_agent_version"`
	SourcePlatform     string           `json:"source_platform"`
	ProjectID          string           `json:"project_id"`
	SessionID          string           `json:"session_id"`
	CreatedAt          string           `json:"created_at"`
	Files              []FileDescriptor `json:"files"`
}

// FileDescriptor describes the TAR payload. Size and SHA256 cover the whole
// TAR artifact, not the JSON line and not the inner JSONL.
type FileDescriptor struct {
	Path   string `json:"path"`
	Mode   int    `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Expect names what a caller requested; empty fields are not compared.
type Expect struct {
	SnapshotID string
	Agent      string
	SessionID  string
	ProjectID  string
}

// FormatTime renders t as the format's timestamps are written.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ValidTime reports whether s is exactly in TimeLayout.
func ValidTime(s string) bool {
	t, err := time.Parse(TimeLayout, s)
	return err == nil && t.Format(TimeLayout) == s
}

// Marshal encodes e exactly as rc.8 does (json.Marshal: compact, HTML
// escaping, nil Files as null). It does not validate and appends no newline.
func (e *Envelope) Marshal() ([]byte, error) {
	return json.Marshal(e)
}

// MarshalLine returns Marshal's bytes plus "\n", refusing a line longer
// than MaxMetadataLine (readers would refuse it).
func (e *Envelope) MarshalLine() ([]byte, error) {
	b, err := e.Marshal()
	if err != nil {
		return nil, err
	}
	if len(b)+1 > MaxMetadataLine {
		return nil, fmt.Errorf("%w: %d bytes", ErrMetadataTooLarge, len(b)+1)
	}
	return append(b, '\n'), nil
}

// ParseEnvelope decodes one metadata line (a trailing "\n" is allowed) with
// rc.8's leniency: json.Unmarshal into the struct, so unknown keys are
// ignored, keys match case-insensitively, the last duplicate wins and null
// leaves the zero value. It does not validate; call Validate.
func ParseEnvelope(line []byte) (*Envelope, error) {
	var e Envelope
	if err := envelopeDoc.decode(line, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// ParseEnvelopeStrict is ParseEnvelope that also rejects (ErrStrictJSON)
// duplicate, unknown or case-variant keys, missing keys, nulls, a files
// array element of another shape, and invalid UTF-8.
func ParseEnvelopeStrict(line []byte) (*Envelope, error) {
	if err := envelopeDoc.checkStrict(line); err != nil {
		return nil, err
	}
	return ParseEnvelope(line)
}

// Validate checks what a reader must check before trusting the payload, in
// rc.8's order: schema_version 1, kind, non-empty snapshot_id, agent and
// session_id, exactly one file, a safe path (CheckSafePath), not credential
// material, 0 <= size <= MaxPayloadSize, and a sha256 of 64 hex digits (any
// case, as rc.8 accepts). Mode and created_at are not checked (rc.8 does
// not either).
func (e *Envelope) Validate() error {
	if e.SchemaVersion != EnvelopeSchemaVersion {
		return fmt.Errorf("%w: envelope schema_version %d", ErrUnsupportedSchema, e.SchemaVersion)
	}
	if e.Kind != Kind {
		return fmt.Errorf("%w: %q", ErrUnexpectedKind, e.Kind)
	}
	for _, f := range []struct{ name, v string }{
		{"snapshot_id", e.SnapshotID}, {"agent", e.Agent}, {"session_id", e.SessionID},
	} {
		if f.v == "" {
			return fmt.Errorf("%w: %s", ErrMissingField, f.name)
		}
	}
	if len(e.Files) != 1 {
		return fmt.Errorf("%w: got %d", ErrArtifactCount, len(e.Files))
	}
	f := e.Files[0]
	if err := CheckSafePath(f.Path); err != nil {
		return err
	}
	if IsCredentialPath(f.Path) {
		return ErrCredentialPath
	}
	if f.Size < 0 || f.Size > MaxPayloadSize {
		return fmt.Errorf("%w: %d", ErrInvalidPayloadSize, f.Size)
	}
	if _, err := decodeSHA256(f.SHA256); err != nil {
		return err
	}
	return nil
}

// validateForWrite adds the writer's own rules: lowercase sha256, mode
// 0600, a created_at in TimeLayout.
func (e *Envelope) validateForWrite() error {
	if err := e.Validate(); err != nil {
		return err
	}
	f := e.Files[0]
	if f.SHA256 != strings.ToLower(f.SHA256) {
		return fmt.Errorf("%w: not lowercase", ErrInvalidPayloadHash)
	}
	if f.Mode != FileMode {
		return fmt.Errorf("%w: %#o", ErrInvalidMode, f.Mode)
	}
	if !ValidTime(e.CreatedAt) {
		return fmt.Errorf("%w: created_at %q", ErrInvalidTimestamp, e.CreatedAt)
	}
	return nil
}

// Match compares the envelope with what the caller asked for, in rc.8's
// order: snapshot ID, agent, session, project. Empty Expect fields are not
// compared (rc.8 compares the project only when the manifest's is
// non-empty).
func (e *Envelope) Match(want Expect) error {
	if want.SnapshotID != "" && e.SnapshotID != want.SnapshotID {
		return ErrSnapshotIdentity
	}
	if want.Agent != "" && e.Agent != want.Agent {
		return ErrAgentMismatch
	}
	if want.SessionID != "" && e.SessionID != want.SessionID {
		return ErrSessionMismatch
	}
	if want.ProjectID != "" && e.ProjectID != want.ProjectID {
		return ErrProjectMismatch
	}
	return nil
}

func decodeSHA256(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("%w: want 64 hex digits", ErrInvalidPayloadHash)
	}
	return b, nil
}

// HashPayload measures and hashes a TAR payload (first pass of a push),
// returning its size and lowercase hex SHA-256. It refuses payloads over
// MaxPayloadSize without reading further.
func HashPayload(r io.Reader) (int64, string, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, MaxPayloadSize+1))
	if err != nil {
		return 0, "", err
	}
	if n > MaxPayloadSize {
		return 0, "", fmt.Errorf("%w: over %d bytes", ErrInvalidPayloadSize, int64(MaxPayloadSize))
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// NewFileDescriptor returns the descriptor rc.8 writes for a payload.
func NewFileDescriptor(path string, size int64, sha256Hex string) FileDescriptor {
	return FileDescriptor{Path: path, Mode: FileMode, Size: size, SHA256: sha256Hex}
}

// equalHex compares a declared hex digest with a computed one, ignoring the
// declared digest's case.
func equalHex(declared string, sum []byte) bool {
	b, err := decodeSHA256(declared)
	return err == nil && bytes.Equal(b, sum)
}
