package output

import (
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fileverify"
)

// Verify is `verify --json` (the branch).
type Verify struct {
	OK        bool            `json:"ok"`
	Commit    string          `json:"commit"`
	Layout    string          `json:"layout"`
	Devices   []string        `json:"devices"`
	Chains    []VerifyChain   `json:"chains"`
	Timelines []Timeline      `json:"timelines"`
	Packages  []PackageReport `json:"packages"`
	Problems  []Problem       `json:"problems"`
}

// VerifyChain is a `chains` element of Verify.
type VerifyChain struct {
	Repo     string         `json:"repo"`
	Device   string         `json:"device"`
	Entries  int            `json:"entries"`
	Verified int            `json:"verified"`
	Rules    map[string]int `json:"rules"`
	Failure  *ChainFailure  `json:"failure,omitempty"`
}

// ChainFailure is the `failure` of a VerifyChain.
type ChainFailure struct {
	Device string `json:"device"`
	Index  int    `json:"index"`
	Hash   string `json:"hash,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Timeline is a `timelines` element of Verify.
type Timeline struct {
	Repo     string           `json:"repo"`
	Device   string           `json:"device"`
	Entries  int              `json:"entries"`
	Verified int              `json:"verified"`
	Unsigned int              `json:"unsigned"`
	Failure  *TimelineFailure `json:"failure,omitempty"`
}

// TimelineFailure is the `failure` of a Timeline.
type TimelineFailure struct {
	Index    int    `json:"index"`
	Snapshot string `json:"snapshot,omitempty"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
}

// PackageReport is a `packages` element of Verify.
type PackageReport struct {
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256,omitempty"`
	Signed  bool   `json:"signed"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Problem is a `problems` element of Verify.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// NewVerify builds Verify from a branch verification.
func NewVerify(r *gitstore.Report) Verify {
	return Verify{
		OK: r.OK, Commit: r.Commit, Layout: string(r.Layout), Devices: nonNil(r.Devices),
		Chains: mapSlice(r.Chains, func(c gitstore.ChainReport) VerifyChain {
			rules := make(map[string]int, len(c.Rules))
			for k, v := range c.Rules {
				rules[string(k)] = v
			}
			return VerifyChain{c.Repo, c.Device, c.Entries, c.Verified, rules, newChainFailure(c.Failure)}
		}),
		Timelines: mapSlice(r.Timelines, func(t gitstore.TimelineReport) Timeline {
			var f *TimelineFailure
			if t.Failure != nil {
				f = &TimelineFailure{t.Failure.Index, t.Failure.Snapshot, string(t.Failure.Reason), t.Failure.Detail}
			}
			return Timeline{t.Repo, t.Device, t.Entries, t.Verified, t.Unsigned, f}
		}),
		Packages: mapSlice(r.Packages, func(p gitstore.PackageReport) PackageReport {
			return PackageReport{p.Repo, p.Path, p.Name, p.Version, p.SHA256, p.Signed, p.Reason, p.Detail}
		}),
		Problems: mapSlice(r.Problems, func(p gitstore.Problem) Problem { return Problem{p.Path, p.Reason} }),
	}
}

func newChainFailure(f *chain.Failure) *ChainFailure {
	if f == nil {
		return nil
	}
	return &ChainFailure{f.Device, f.Index, f.Hash, string(f.Reason), f.Detail}
}

// VerifiedFile is a `verify FILE… --json` element.
type VerifiedFile struct {
	File      string `json:"file"`
	Format    string `json:"format"`
	Valid     bool   `json:"valid"`
	ID        string `json:"id"`
	Error     string `json:"error"`
	Rule      string `json:"rule,omitempty"`
	Device    string `json:"device,omitempty"`
	KeySource string `json:"key_source,omitempty"`
	Refused   bool   `json:"refused"`
}

// NewVerifiedFiles builds the `verify FILE… --json` array.
func NewVerifiedFiles(results []fileverify.Result) []VerifiedFile {
	return mapSlice(results, func(r fileverify.Result) VerifiedFile {
		return VerifiedFile{r.File, r.Format, r.Valid, r.ID, r.Error, r.Rule, r.Device, r.KeySource, r.Refused}
	})
}
