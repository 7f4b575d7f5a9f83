package sessions

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-ctx/git-ctx/formats/session"
)

// Sync states of a session, as List reports them.
const (
	StateInSync      = "in sync"
	StateLocalNewer  = "local newer"  // local changes not pushed; remote unchanged
	StateRemoteNewer = "remote newer" // the head moved; local unchanged
	StateDiverged    = "diverged"     // both changed since the last sync
	StateLocalOnly   = "local only"
	StateRemoteOnly  = "remote only"
)

// ListEntry is one session, local, remote or both.
type ListEntry struct {
	Agent      string
	SessionID  string
	ProjectID  string
	State      string
	Newer      string // "local", "remote" or "" (in sync or one side only)
	LocalPath  string
	LocalMTime string
	LocalSize  int64
	Head       string
	HeadTime   string
	Base       string // the snapshot last pushed or restored here
	Mapped     bool   // the project maps to a work tree here
}

// List returns this project's local sessions and every remote head of the
// profile (none when Profile is ""), each with which side is newer.
func (c *Client) List(ctx context.Context) ([]ListEntry, error) {
	defer c.progressDone()
	m := session.NewManifest()
	if c.Profile != "" {
		var err error
		if m, _, _, err = c.readManifest(ctx); err != nil {
			return nil, err
		}
	}
	local, err := c.FindLocal("")
	if err != nil {
		return nil, err
	}
	roots := c.roots()
	byKey := map[string]*ListEntry{}
	var order []string
	for _, s := range local {
		k := session.SessionKey(s.Agent, s.ID)
		if _, dup := byKey[k]; dup {
			continue
		}
		byKey[k] = &ListEntry{Agent: s.Agent, SessionID: s.ID, ProjectID: c.ProjectID, Mapped: true,
			LocalPath: s.Path, LocalMTime: session.FormatTime(s.ModTime.UTC()), LocalSize: s.Size}
		order = append(order, k)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Sessions)) {
		e := m.Sessions[k]
		le, ok := byKey[k]
		if !ok {
			le = &ListEntry{Agent: e.Agent, SessionID: e.SessionID}
			byKey[k] = le
			order = append(order, k)
		}
		le.ProjectID, le.Head, le.HeadTime = e.ProjectID, e.SnapshotID, e.UpdatedAt
		_, le.Mapped = roots[e.ProjectID]
	}
	out := make([]ListEntry, 0, len(order))
	for _, k := range order {
		le := byKey[k]
		st, err := c.LoadState(k)
		if err != nil {
			return nil, err
		}
		if st != nil {
			le.Base = st.RemoteRevision
			if le.LocalPath == "" && st.Path != "" {
				le.LocalPath = st.Path
			}
		}
		c.judge(k, le, st)
		out = append(out, *le)
	}
	return out, nil
}

// judge sets le's State and Newer from the session key's local file, its
// remote head and st, what this machine last synced.
func (c *Client) judge(key string, le *ListEntry, st *State) {
	switch {
	case le.Head == "":
		le.State, le.Newer = StateLocalOnly, "local"
		return
	case le.LocalMTime == "":
		le.State, le.Newer = StateRemoteOnly, "remote"
		return
	}
	if st == nil {
		// Never synced here: compare times only.
		le.State = StateDiverged
		if strings.Compare(le.LocalMTime, le.HeadTime) > 0 {
			le.Newer = "local"
		} else {
			le.Newer = "remote"
		}
		return
	}
	h, _ := c.localHash(key, le.LocalPath, st.LocalRevision)
	localChanged := h != st.LocalRevision
	remoteChanged := le.Head != st.RemoteRevision
	switch {
	case !localChanged && !remoteChanged:
		le.State = StateInSync
	case localChanged && !remoteChanged:
		le.State, le.Newer = StateLocalNewer, "local"
	case !localChanged && remoteChanged:
		le.State, le.Newer = StateRemoteNewer, "remote"
	default:
		le.State = StateDiverged
		if strings.Compare(le.LocalMTime, le.HeadTime) > 0 {
			le.Newer = "local"
		} else {
			le.Newer = "remote"
		}
	}
}

// Status summarises the configuration without the passphrase: the number
// of objects in the profile and this project's local sessions.
type Status struct {
	Store     string
	Profile   string
	ProjectID string
	WorkTree  string
	StateDir  string
	Snapshots int
	Manifest  bool
	Local     int
	Synced    int // local sessions with state (pushed or restored here)
	Latest    string
}

// Status reports the store, the profile and the local sessions.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	s := &Status{Store: c.Store.Describe(), Profile: c.Profile, ProjectID: c.ProjectID, WorkTree: c.WorkTree, StateDir: c.StateDir}
	if c.Profile != "" {
		keys, err := c.Store.List(ctx, "profiles/"+c.Profile+"/")
		if err != nil {
			return nil, fmt.Errorf("%w: list %s: %w", storeClass(err), c.Store.Describe(), err)
		}
		for _, k := range keys {
			switch {
			case k == c.manifestKey():
				s.Manifest = true
			case strings.HasPrefix(k, "profiles/"+c.Profile+"/snapshots/"):
				s.Snapshots++
			}
		}
	}
	local, err := c.FindLocal("")
	if err != nil {
		return nil, err
	}
	s.Local = len(local)
	if len(local) > 0 {
		s.Latest = session.SessionKey(local[0].Agent, local[0].ID)
	}
	if c.Profile != "" {
		for _, l := range local {
			if st, _ := c.LoadState(session.SessionKey(l.Agent, l.ID)); st != nil {
				s.Synced++
			}
		}
	}
	return s, nil
}
