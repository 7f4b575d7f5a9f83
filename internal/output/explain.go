package output

import "github.com/git-ctx/git-ctx/internal/explain"

// Explain is `explain --json`, `review CODE-RANGE --json` and
// `show COMMIT --json`.
type Explain struct {
	Spec      string          `json:"spec"`
	Kind      string          `json:"kind"`
	Path      string          `json:"path"`
	Line      int             `json:"line"`
	Truncated bool            `json:"truncated"`
	Commits   []ExplainCommit `json:"commits"`
}

// ExplainCommit is a `commits` element of Explain.
type ExplainCommit struct {
	Commit      string          `json:"commit"`
	Subject     string          `json:"subject"`
	Author      string          `json:"author"`
	Time        int64           `json:"time"`
	Memory      bool            `json:"memory"`
	Checkpoints []ExplainRecord `json:"checkpoints"`
}

// ExplainRecord is a `checkpoints` element of ExplainCommit.
type ExplainRecord struct {
	Hash     string   `json:"hash"`
	Link     string   `json:"link"`
	Device   string   `json:"device"`
	Author   string   `json:"author"`
	Session  string   `json:"session"`
	Turn     int      `json:"turn"`
	Model    string   `json:"model"`
	Branch   string   `json:"branch"`
	TS       int64    `json:"ts"`
	Summary  string   `json:"summary"`
	Files    []string `json:"files"`
	Tools    []string `json:"tools"`
	Verified bool     `json:"verified"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
}

// NewExplain builds the Explain object of a report.
func NewExplain(r *explain.Report) Explain {
	return Explain{Spec: r.Spec.Arg, Kind: string(r.Spec.Kind), Path: r.Spec.Path, Line: r.Spec.Line, Truncated: r.Truncated,
		Commits: mapSlice(r.Commits, func(c explain.Commit) ExplainCommit {
			return ExplainCommit{Commit: c.Hash, Subject: c.Subject, Author: c.Author, Time: c.Time, Memory: len(c.Records) > 0,
				Checkpoints: mapSlice(c.Records, func(x explain.Record) ExplainRecord {
					return ExplainRecord{Hash: x.Hash, Link: x.Kind, Device: x.Device, Author: x.Author, Session: x.Session,
						Turn: x.Turn, Model: x.Model, Branch: x.Branch, TS: x.Timestamp, Summary: x.Summary,
						Files: nonNil(x.Files), Tools: nonNil(x.Tools), Verified: x.Verified, Status: x.Status, Reason: x.Reason}
				})}
		})}
}
