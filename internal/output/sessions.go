package output

import (
	"github.com/git-ctx/git-ctx/sessions"
)

// SessionEntry is a `session list --json` element.
type SessionEntry struct {
	Agent      string `json:"agent"`
	SessionID  string `json:"session_id"`
	ProjectID  string `json:"project_id"`
	State      string `json:"state"`
	Newer      string `json:"newer"`
	LocalPath  string `json:"local_path,omitempty"`
	LocalMTime string `json:"local_modified,omitempty"`
	LocalSize  int64  `json:"local_size,omitempty"`
	Head       string `json:"remote_head,omitempty"`
	HeadTime   string `json:"remote_updated,omitempty"`
	Base       string `json:"base,omitempty"`
	Mapped     bool   `json:"mapped"`
}

// NewSessionList builds the `session list --json` array.
func NewSessionList(list []sessions.ListEntry) []SessionEntry {
	return mapSlice(list, func(e sessions.ListEntry) SessionEntry {
		return SessionEntry{string(e.Agent), e.SessionID, e.ProjectID, string(e.State), e.Newer, e.LocalPath, e.LocalMTime,
			e.LocalSize, e.Head, e.HeadTime, e.Base, e.Mapped}
	})
}

// SessionStatus is `session status --json`.
type SessionStatus struct {
	Store     string `json:"store"`
	Profile   string `json:"profile"`
	ProjectID string `json:"project_id"`
	WorkTree  string `json:"work_tree"`
	StateDir  string `json:"state_dir"`
	Snapshots int    `json:"remote_snapshots"`
	Manifest  bool   `json:"remote_manifest"`
	Local     int    `json:"local_sessions"`
	Synced    int    `json:"synced_here"`
	Latest    string `json:"latest_local,omitempty"`
}

// NewSessionStatus builds SessionStatus.
func NewSessionStatus(st *sessions.Status) SessionStatus {
	return SessionStatus{st.Store, st.Profile, st.ProjectID, st.WorkTree, st.StateDir, st.Snapshots, st.Manifest, st.Local, st.Synced, st.Latest}
}

// SessionPush is `session push --json`.
type SessionPush struct {
	Agent      string `json:"agent"`
	SessionID  string `json:"session_id"`
	SnapshotID string `json:"snapshot_id"`
	UpToDate   bool   `json:"up_to_date"`
	Size       int64  `json:"size"`
	Store      string `json:"store"`
	Profile    string `json:"profile"`
}

// NewSessionPush builds SessionPush from a push, the store's description
// and the profile.
func NewSessionPush(r *sessions.PushResult, store, profile string) SessionPush {
	return SessionPush{string(r.Session.Agent), r.Session.ID, r.SnapshotID, r.UpToDate, r.Size, store, profile}
}

// SessionPull is `session pull --json` and `session restore --json`.
type SessionPull struct {
	Profile  string            `json:"profile"`
	Sessions []RestoredSession `json:"sessions"`
}

// RestoredSession is a `sessions` element of SessionPull.
type RestoredSession struct {
	Agent      string `json:"agent"`
	SessionID  string `json:"session_id"`
	SnapshotID string `json:"snapshot_id"`
	Path       string `json:"path"`
	UpToDate   bool   `json:"up_to_date"`
	LocalNewer bool   `json:"local_newer"`
	ForkID     string `json:"fork_id,omitempty"`
	Backup     string `json:"backup,omitempty"`
}

// NewSessionPull builds SessionPull.
func NewSessionPull(profile string, results []sessions.PullResult) SessionPull {
	return SessionPull{Profile: profile, Sessions: mapSlice(results, func(r sessions.PullResult) RestoredSession {
		return RestoredSession{string(r.Agent), r.SessionID, r.SnapshotID, r.Path, r.UpToDate, r.LocalNewer, r.ForkID, r.Backup}
	})}
}
