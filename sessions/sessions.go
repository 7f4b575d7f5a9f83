// Package sessions moves Claude Code and Codex session transcripts between
// machines as encrypted Reinstate v1 snapshots: push (export, encrypt,
// upload, then a compare-and-swap update of the profile's manifest), pull
// (download, verify everything into a temporary file, back up, atomic
// rename, rediscovery), list and status.
//
// The object store, the passphrase and the project (work tree and repository
// id) are given by the caller, or found by Open (setup.go), the one place
// that reads the repository's session configuration (ctx.sessionStore,
// ctx.sessionProfile, ctx.sessionS3Endpoint); the memory remote is resolved by a function the
// caller passes. Per-session local state (the snapshot a session was
// last pushed as or restored from, and the hash of the local file at that
// moment) lives under Client.StateDir.
package sessions

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/sessions/agents"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// Errors the CLI maps to exit codes. Every error returned by this package
// that belongs to one of these classes wraps the sentinel.
var (
	// ErrConflict: the remote head of a session moved since our base, or the
	// local copy has changes that a restore would overwrite (exit 6).
	ErrConflict = fault.Sentinel(fault.Conflict, "session conflict")
	// ErrRefused: refused for safety: a credential-looking file, an unsafe
	// path, a symlink or other non-regular TAR entry, a size limit, a
	// symbolic link in a directory store (exit 7).
	ErrRefused = fault.Sentinel(fault.Refused, "refused for safety")
	// ErrVerification: an object failed decryption or verification (exit 1).
	ErrVerification = fault.Sentinel(fault.Failed, "verification failed")
	// ErrNotFound: no such session or nothing pushed yet (exit 1).
	ErrNotFound = fault.Sentinel(fault.Failed, "not found")
	// ErrConfig: missing or ambiguous configuration (exit 3).
	ErrConfig = fault.Sentinel(fault.Config, "session configuration")
	// ErrStore: the object store failed (exit 4).
	ErrStore = fault.Sentinel(fault.Remote, "session store")
)

// Mapping maps a project id to a local work tree.
type Mapping struct {
	ID   string
	Root string // absolute
}

// Client runs the session verbs for one project against one store profile.
type Client struct {
	Store      store.Store
	Profile    string // profile UUID
	Passphrase []byte
	// WorkFactor is the scrypt logN written (0: session.DefaultWorkFactor);
	// below the default it is used only with AllowWeak.
	WorkFactor int
	AllowWeak  bool

	ProjectID string    // this repository's id
	WorkTree  string    // this work tree (absolute)
	Mappings  []Mapping // further project ids mapped here (--project ID=PATH)
	Home      string    // the local home directory, for ${HOME}

	// StateDir holds local state, backups and temporary export files.
	StateDir string

	Warn func(string)     // warnings (nil: dropped)
	Now  func() time.Time // clock (nil: time.Now)
	// Progress, when set, is told each phase of Push, Pull and List and
	// the bytes it moves; each of them calls Done before returning.
	Progress Progress

	// The last manifest ciphertext decrypted (its SHA-256) and its
	// plaintext, in memory only: a re-read of the same bytes is not
	// decrypted again (fetchManifest).
	manifestSum   [32]byte
	manifestPlain []byte
	// stampWarned: a stamp could not be saved and that was said once.
	stampWarned bool
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *Client) warn(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

func (c *Client) manifestKey() string { return "profiles/" + c.Profile + "/manifest.age" }
func (c *Client) snapshotKey(id string) string {
	return "profiles/" + c.Profile + "/snapshots/" + id + ".age"
}

// roots maps every known project id to its local root.
func (c *Client) roots() map[string]string {
	m := map[string]string{}
	for _, mp := range c.Mappings {
		m[mp.ID] = mp.Root
	}
	if c.ProjectID != "" && c.WorkTree != "" {
		m[c.ProjectID] = c.WorkTree
	}
	return m
}

// pathMap is this machine's token map.
func (c *Client) pathMap() *session.PathMap {
	pm := &session.PathMap{Home: c.Home, Windows: runtime.GOOS == "windows"}
	ids := make([]string, 0)
	r := c.roots()
	for id := range r {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		root := session.Root{ID: id, Path: r[id]}
		if res, err := filepath.EvalSymlinks(r[id]); err == nil && res != r[id] {
			root.Resolved = res
		}
		pm.Projects = append(pm.Projects, root)
	}
	return pm
}

func (c *Client) project() agents.Project {
	p := agents.Project{Root: c.WorkTree}
	if res, err := filepath.EvalSymlinks(c.WorkTree); err == nil {
		p.Resolved = res
	}
	return p
}

// NewUUID returns a random version-4 UUID, lowercase and hyphenated.
func NewUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random UUID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b), nil
}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// forkNamespace is the UUIDv5 namespace Reinstate v0.1.0+ uses for fork ids.
var forkNamespace = [16]byte{0x6f, 0x96, 0x19, 0xff, 0x8b, 0x86, 0xd0, 0x11, 0xb4, 0x2d, 0x00, 0xc0, 0x4f, 0xc9, 0x64, 0xff}

// ForkID is the id a keep-both restore gives the remote copy: UUIDv5 of
// "remote" NUL sessionID NUL snapshotID (as Reinstate v0.1.0 and later), so
// that Claude Code's --resume accepts it.
func ForkID(sessionID, snapshotID string) string {
	h := sha1.New()
	h.Write(forkNamespace[:])
	io.WriteString(h, "remote\x00"+sessionID+"\x00"+snapshotID)
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// ValidUUID reports whether s is a lowercase hyphenated UUID.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				return false
			}
		}
	}
	return true
}

// Platform is the envelope's source_platform: <goos>-<goarch>, with
// linux-wsl1/linux-wsl2 under WSL.
func Platform() string {
	goos := runtime.GOOS
	if goos == "linux" {
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			s := strings.ToLower(string(b))
			switch {
			case strings.Contains(s, "wsl2"):
				goos = "linux-wsl2"
			case strings.Contains(s, "microsoft"):
				goos = "linux-wsl1"
			}
		}
	}
	return goos + "-" + runtime.GOARCH
}

// ResolveProfile picks the store profile: explicit (--profile), else
// configured (ctx.sessionProfile), else the only profile in the store.
// With none in the store, create makes a new UUID (created is then true);
// otherwise ErrNotFound. Several profiles and no choice: ErrConfig.
func ResolveProfile(ctx context.Context, st store.Store, explicit, configured string, create bool) (profile string, created bool, err error) {
	for _, p := range []struct{ v, from string }{{explicit, "--profile"}, {configured, "ctx.sessionProfile"}} {
		if p.v == "" {
			continue
		}
		if !ValidUUID(p.v) {
			return "", false, fmt.Errorf("%w: %s %q is not a lowercase UUID: fix it or unset it", ErrConfig, p.from, p.v)
		}
		return p.v, false, nil
	}
	keys, err := st.List(ctx, "profiles/")
	if err != nil {
		return "", false, fmt.Errorf("%w: list profiles in %s: %w", storeClass(err), st.Describe(), err)
	}
	seen := map[string]bool{}
	var found []string
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, "profiles/")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, "/")
		if ValidUUID(id) && !seen[id] {
			seen[id] = true
			found = append(found, id)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], false, nil
	case len(found) > 1:
		return "", false, fmt.Errorf("%w: %s holds %d profiles (%s): pick one with --profile UUID or git config ctx.sessionProfile UUID",
			ErrConfig, st.Describe(), len(found), strings.Join(found, ", "))
	case create:
		id, err := NewUUID()
		return id, err == nil, err
	}
	return "", false, fmt.Errorf("%w: no session profile in %s yet: push a session first with 'git ctx session push'", ErrNotFound, st.Describe())
}

// storeClass is the class of a failed store operation: ErrRefused for a
// symbolic link met in a directory store, else ErrStore.
func storeClass(err error) error {
	if errors.Is(err, store.ErrSymlink) {
		return ErrRefused
	}
	return ErrStore
}

// classify wraps a format error with ErrRefused (unsafe input) or
// ErrVerification (anything else that failed to verify).
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{ErrConflict, ErrRefused, ErrVerification, ErrNotFound, ErrConfig, ErrStore} {
		if errors.Is(err, s) {
			return err
		}
	}
	for _, s := range []error{
		session.ErrUnsafePath, session.ErrCredentialPath, session.ErrAdapterPath,
		session.ErrTARSymlink, session.ErrTARHardlink, session.ErrTARDevice, session.ErrTARNotRegular,
		session.ErrMetadataTooLarge, session.ErrRecordTooLarge, session.ErrTAREntryTooLarge,
		session.ErrManifestTooLarge, session.ErrWorkFactorTooHigh, session.ErrInvalidPayloadSize,
	} {
		if errors.Is(err, s) {
			return fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	return fmt.Errorf("%w: %w", ErrVerification, err)
}
