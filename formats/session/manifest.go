package session

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ManifestSchemaVersion is the only manifest schema read or written.
const ManifestSchemaVersion = 1

// Manifest is the decrypted manifest v1: the head snapshot of every session.
type Manifest struct {
	SchemaVersion int                      `json:"schema_version"`
	Revision      string                   `json:"revision"`
	Sessions      map[string]ManifestEntry `json:"sessions"`
	UpdatedAt     string                   `json:"updated_at"`
}

// ManifestEntry is one session's head. Field order is the JSON key order.
type ManifestEntry struct {
	Agent      string `json:"agent"`
	SessionID  string `json:"session_id"`
	SnapshotID string `json:"snapshot_id"`
	ProjectID  string `json:"project_id"`
	UpdatedAt  string `json:"updated_at"`
}

// NewManifest returns the empty manifest
// {"schema_version":1,"revision":"","sessions":{},"updated_at":""}.
func NewManifest() *Manifest {
	return &Manifest{SchemaVersion: ManifestSchemaVersion, Sessions: map[string]ManifestEntry{}}
}

// SessionKey is the manifest key of a session: "<agent>:<session_id>".
func SessionKey(agent, sessionID string) string { return agent + ":" + sessionID }

// Marshal encodes m as rc.8 does (json.Marshal: compact, keys of sessions
// sorted, HTML escaping, no trailing newline). A nil Sessions map is written
// as {} (rc.8 never uploads null). It refuses output over MaxManifestSize.
func (m *Manifest) Marshal() ([]byte, error) {
	c := *m
	if c.Sessions == nil {
		c.Sessions = map[string]ManifestEntry{}
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxManifestSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrManifestTooLarge, len(b))
	}
	return b, nil
}

// ParseManifest decodes a manifest with rc.8's leniency (json.Unmarshal:
// unknown keys ignored, case-insensitive keys, last duplicate wins), refusing
// more than MaxManifestSize bytes and a schema_version other than 1. A null
// or absent sessions becomes an empty map. Entries are not validated; call
// Validate for that.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := manifestDoc.decode(data, &m); err != nil {
		return nil, err
	}
	if m.SchemaVersion != ManifestSchemaVersion {
		return nil, fmt.Errorf("%w: manifest schema_version %d", ErrUnsupportedSchema, m.SchemaVersion)
	}
	if m.Sessions == nil {
		m.Sessions = map[string]ManifestEntry{}
	}
	return &m, nil
}

// ParseManifestStrict is ParseManifest that also rejects (ErrStrictJSON)
// duplicate, unknown or case-variant keys, missing keys, nulls (including
// "sessions": null) and invalid UTF-8, and then runs Validate.
func ParseManifestStrict(data []byte) (*Manifest, error) {
	if err := manifestDoc.checkStrict(data); err != nil {
		return nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadManifest reads at most MaxManifestSize+1 bytes from r and parses them
// with ParseManifest.
func ReadManifest(r io.Reader) (*Manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	return ParseManifest(data)
}

// Validate checks what rc.8 leaves unchecked: schema_version 1; each entry
// has non-empty agent, session_id and snapshot_id, an agent without ':',
// and is stored under SessionKey(agent, session_id); timestamps, when
// non-empty, are in TimeLayout.
func (m *Manifest) Validate() error {
	if m.SchemaVersion != ManifestSchemaVersion {
		return fmt.Errorf("%w: manifest schema_version %d", ErrUnsupportedSchema, m.SchemaVersion)
	}
	if m.UpdatedAt != "" && !ValidTime(m.UpdatedAt) {
		return fmt.Errorf("%w: manifest updated_at %q", ErrInvalidTimestamp, m.UpdatedAt)
	}
	keys := make([]string, 0, len(m.Sessions))
	for k := range m.Sessions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := m.Sessions[k]
		switch {
		case e.Agent == "" || e.SessionID == "" || e.SnapshotID == "":
			return fmt.Errorf("%w: %q lacks agent, session_id or snapshot_id", ErrInvalidManifestEntry, k)
		case strings.Contains(e.Agent, ":"):
			return fmt.Errorf("%w: %q: agent contains ':'", ErrInvalidManifestEntry, k)
		case k != SessionKey(e.Agent, e.SessionID):
			return fmt.Errorf("%w: key %q is not %q", ErrInvalidManifestEntry, k, SessionKey(e.Agent, e.SessionID))
		case e.UpdatedAt != "" && !ValidTime(e.UpdatedAt):
			return fmt.Errorf("%w: %q: updated_at %q", ErrInvalidManifestEntry, k, e.UpdatedAt)
		}
	}
	return nil
}
