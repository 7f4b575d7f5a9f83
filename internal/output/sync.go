package output

import (
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// Pull is `pull --json`, and each element of Push's `pulls`.
type Pull struct {
	Remote           string         `json:"remote"`
	Fetched          string         `json:"fetched"`
	Before           string         `json:"before"`
	After            string         `json:"after"`
	UpToDate         bool           `json:"up_to_date"`
	Added            int            `json:"added"`
	NewDevices       []string       `json:"new_devices"`
	Devices          []PullDevice   `json:"devices"`
	Forks            int            `json:"forks"`
	Packages         int            `json:"packages"`
	PackageConflicts int            `json:"package_conflicts"`
	Superseded       []Superseded   `json:"superseded"`
	SharedKeys       []SharedKey    `json:"shared_keys"`
	Timings          Timings        `json:"timings_ms"`
	Rejected         []Rejection    `json:"rejected"`
	RejectedTotal    int            `json:"rejected_total"`
	RejectedByReason map[string]int `json:"rejected_by_reason"`
	Truncated        bool           `json:"rejected_truncated"`
}

// PullDevice is a `devices` element of Pull: one chain that differs.
type PullDevice struct {
	Repo     string `json:"repo"`
	Device   string `json:"device"`
	Added    int    `json:"added"`
	Rejected bool   `json:"rejected"`
	Fork     bool   `json:"fork"`
	Reason   string `json:"reason,omitempty"`
	Record   string `json:"record,omitempty"`
	Local    string `json:"local,omitempty"`
}

// Rejection is a `rejected` element of Pull.
type Rejection struct {
	Repo   string `json:"repo"`
	Device string `json:"device"`
	Record string `json:"record"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Superseded is a `superseded` element of Pull.
type Superseded struct {
	Kind    string `json:"kind"`
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	Package string `json:"package"`
	Local   string `json:"local_blob"`
	Remote  string `json:"remote_blob"`
	Commit  string `json:"local_commit"`
	Detail  string `json:"detail"`
}

// SharedKey is a `shared_keys` element of Pull.
type SharedKey struct {
	Fingerprint string   `json:"fingerprint"`
	Devices     []string `json:"devices"`
	New         []string `json:"new"`
}

// Timings is Pull's `timings_ms` (milliseconds).
type Timings struct {
	Fetch  float64 `json:"fetch"`
	Verify float64 `json:"verify"`
	Merge  float64 `json:"merge"`
	Cache  float64 `json:"cache"`
}

// NewPull builds Pull from a pull's result: at most
// ctxsync.MaxJSONRejections rejections are listed, and all are counted.
func NewPull(r *ctxsync.PullResult) Pull {
	byReason := map[string]int{}
	for _, rj := range r.Rejected {
		byReason[rj.Reason]++
	}
	listed := r.Rejected
	if len(listed) > ctxsync.MaxJSONRejections {
		listed = listed[:ctxsync.MaxJSONRejections]
	}
	d := r.Durations
	return Pull{
		Remote: r.Remote, Fetched: r.Fetched, Before: r.Before, After: r.After, UpToDate: r.UpToDate, Added: r.Added,
		NewDevices: nonNil(r.NewKeys),
		Devices: mapSlice(r.Devices, func(d ctxsync.DeviceResult) PullDevice {
			return PullDevice{d.Repo, d.Device, d.Added, d.Rejected, d.Fork, d.Reason, d.Record, d.Local}
		}),
		Forks: r.Forks, Packages: r.Packages, PackageConflicts: r.PackageConflicts,
		Superseded: mapSlice(r.Superseded, func(s ctxsync.Superseded) Superseded {
			return Superseded{s.Kind, s.Repo, s.Path, s.Package, s.Local, s.Remote, s.Commit, s.Detail}
		}),
		SharedKeys: mapSlice(r.SharedKeys, func(k ctxsync.SharedKey) SharedKey {
			return SharedKey{k.Fingerprint, nonNil(k.Devices), nonNil(k.New)}
		}),
		Timings: Timings{d.Fetch, d.Verify, d.Merge, d.Cache},
		Rejected: mapSlice(listed, func(rj ctxsync.Rejection) Rejection {
			return Rejection{rj.Repo, rj.Device, rj.Record, rj.Reason, rj.Detail}
		}),
		RejectedTotal: len(r.Rejected), RejectedByReason: byReason, Truncated: len(listed) < len(r.Rejected),
	}
}

// Push is `push --json` and `sync --json`.
type Push struct {
	Remote   string `json:"remote"`
	Pushed   string `json:"pushed"`
	Attempts int    `json:"attempts"`
	Pulls    []Pull `json:"pulls"`
}

// NewPush builds Push from a push's result.
func NewPush(r *ctxsync.PushResult) Push {
	return Push{Remote: r.Remote, Pushed: r.Pushed, Attempts: r.Attempts, Pulls: mapSlice(r.Pulls, NewPull)}
}

// Device is a `devices --json` element.
type Device struct {
	ID          string   `json:"id"`
	Fingerprint string   `json:"fingerprint"`
	Trust       string   `json:"trust"`
	This        bool     `json:"this_device"`
	Checkpoints int      `json:"checkpoints"`
	Unverified  int      `json:"unverified"`
	LastSeen    int64    `json:"last_seen"`
	SameKeyAs   []string `json:"same_key_as"`
}

// NewDevices builds the `devices --json` array.
func NewDevices(list []ctxsync.DeviceInfo) []Device {
	return mapSlice(list, func(d ctxsync.DeviceInfo) Device {
		return Device{d.ID, d.Fingerprint, d.Trust, d.This, d.Checkpoints, d.Unverified, d.LastSeen, nonNil(d.SameKeyAs)}
	})
}

// Trust is `devices trust --json` and `devices untrust --json`.
type Trust struct {
	Device string `json:"device"`
	Trust  string `json:"trust"`
	Config string `json:"config"`
}

// ReviewCommit is a `review --json` element.
type ReviewCommit struct {
	Commit  string         `json:"commit"`
	Subject string         `json:"subject"`
	Author  string         `json:"author"`
	Parents []string       `json:"parents"`
	Records []ReviewRecord `json:"records"`
}

// ReviewRecord is a `records` element of ReviewCommit.
type ReviewRecord struct {
	Kind     string `json:"kind"`
	Path     string `json:"path"`
	Hash     string `json:"hash,omitempty"`
	Device   string `json:"device,omitempty"`
	Session  string `json:"session,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	Summary  string `json:"summary,omitempty"`
	Status   string `json:"status"`
	Modified bool   `json:"modified"`
}

// NewReview builds the `review --json` array.
func NewReview(commits []ctxsync.ReviewCommit) []ReviewCommit {
	return mapSlice(commits, func(c ctxsync.ReviewCommit) ReviewCommit {
		return ReviewCommit{c.Commit, c.Subject, c.Author, nonNil(c.Parents), mapSlice(c.Records, func(r ctxsync.ReviewRecord) ReviewRecord {
			return ReviewRecord{r.Kind, r.Path, r.Hash, r.Device, r.Session, r.Turn, r.Summary, r.Status, r.Modified}
		})}
	})
}
