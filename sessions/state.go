package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// State is what this machine remembers about one session of one profile,
// in <StateDir>/state/<profile>/<sha256(agent:session)[:32]>.json.
type State struct {
	SchemaVersion int    `json:"schema_version"`
	Agent         string `json:"agent"`
	SessionID     string `json:"session_id"`
	// Path is the local file the session was last pushed from or restored to.
	Path string `json:"path"`
	// LocalRevision is the SHA-256 (hex) of that file's bytes at that moment.
	LocalRevision string `json:"local_revision"`
	// RemoteRevision is the snapshot id pushed or restored: the base of the
	// next push.
	RemoteRevision string `json:"remote_revision"`
	UpdatedAt      string `json:"updated_at"`
}

func (c *Client) statePath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.StateDir, "state", c.Profile, hex.EncodeToString(sum[:16])+".json")
}

// LoadState returns the state of the session key ("agent:id"), or nil.
func (c *Client) LoadState(key string) (*State, error) {
	data, err := os.ReadFile(c.statePath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read session state: %w", ErrConfig, err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil || s.SchemaVersion != 1 {
		c.warn("ignoring unreadable session state %s (delete it to silence this)", c.statePath(key))
		return nil, nil
	}
	return &s, nil
}

func (c *Client) saveState(key string, s *State) error {
	s.SchemaVersion = 1
	s.UpdatedAt = c.now().Format("2006-01-02T15:04:05Z")
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	p := c.statePath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("save session state: %w", err)
	}
	return writeAtomic(p, bytes.NewReader(data))
}

// writeAtomic replaces (or creates) p, mode 0600, with what r yields
// (atomicfile).
func writeAtomic(p string, r io.Reader) error {
	return atomicfile.Write(p, r, atomicfile.Options{Perm: 0o600, Replace: true})
}
