package output

import (
	"encoding/json"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
)

// PackageCheck is a `pkg verify --json` element.
type PackageCheck struct {
	File     string   `json:"file"`
	Valid    bool     `json:"valid"`
	Name     string   `json:"name,omitempty"`
	Version  string   `json:"version,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Signed   bool     `json:"signed"`
	Signer   string   `json:"signer,omitempty"`
	Failures []string `json:"failures"`
	Refused  bool     `json:"refused"`
}

// NewPackageChecks builds the `pkg verify --json` array.
func NewPackageChecks(checks []ctxpackages.Check) []PackageCheck {
	return mapSlice(checks, func(c ctxpackages.Check) PackageCheck {
		return PackageCheck{c.File, c.Valid, c.Name, c.Version, c.SHA256, c.Signed, c.Signer, nonNil(c.Failures), c.Refused}
	})
}

// PackageInspect is `pkg inspect --json`.
type PackageInspect struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Failures []string        `json:"failures"`
	Signer   string          `json:"signer,omitempty"`
	Bytes    int             `json:"bytes"`
	Manifest json.RawMessage `json:"manifest"`
	Content  map[string]int  `json:"content"`
}

// NewPackageInspect builds PackageInspect from a checked file (its Package
// parsed): the manifest as the file's own JSON and item counts per layer.
func NewPackageInspect(file string, pc *ctxpackages.Check) (PackageInspect, error) {
	mj, err := pc.Package.Manifest.AppendJSON(nil)
	if err != nil {
		return PackageInspect{}, err
	}
	return PackageInspect{File: file, Valid: pc.Valid, Failures: nonNil(pc.Failures), Signer: pc.Signer,
		Bytes: len(pc.Raw), Manifest: mj, Content: LayerCounts(&pc.Package.Content)}, nil
}

// LayerCounts counts the items of each layer a package's content holds.
func LayerCounts(ct *ctxpkg.Content) map[string]int {
	out := map[string]int{}
	if k := ct.Knowledge; k != nil {
		out["knowledge"] = len(k.Facts) + len(k.Patterns) + len(k.Insights)
	}
	if g := ct.Graph; g != nil {
		out["graph"] = len(g.Nodes) + len(g.Edges)
	}
	if s := ct.Session; s != nil {
		out["session"] = len(s.Findings) + len(s.Decisions) + len(s.NextSteps) + len(s.FilesTouched)
	}
	if p := ct.Patterns; p != nil {
		out["patterns"] = len(p.Patterns)
	}
	if g := ct.Gotchas; g != nil {
		out["gotchas"] = len(g.Gotchas)
	}
	return out
}

// PackageInfo is a `pkg list --json` element.
type PackageInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	SHA256       string   `json:"sha256"`
	Description  string   `json:"description"`
	Layers       []string `json:"layers"`
	CreatedAt    string   `json:"created_at"`
	Signed       bool     `json:"signed"`
	Signer       string   `json:"signer,omitempty"`
	SignerDevice string   `json:"signer_device,omitempty"`
	Bytes        int      `json:"bytes"`
	Path         string   `json:"path"`
	Verified     bool     `json:"verified"`
	Error        string   `json:"error,omitempty"`
}

// NewPackageList builds the `pkg list --json` array.
func NewPackageList(list []ctxpackages.Info) []PackageInfo {
	return mapSlice(list, func(p ctxpackages.Info) PackageInfo {
		return PackageInfo{p.Name, p.Version, p.SHA256, p.Description, nonNil(p.Layers), p.CreatedAt, p.Signed, p.Signer,
			p.SignerDevice, p.Bytes, p.Path, p.Verified, p.Error}
	})
}

// PackageFile is `pkg build --json` and `pkg get --json`: the package
// and the file written.
type PackageFile struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	File    string `json:"file"`
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Signed  bool   `json:"signed"`
}

// PackageWrap is `pkg wrap --json`.
type PackageWrap struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	File    string `json:"file"`
	Bytes   int    `json:"bytes"`
}

// PackagePublish is `pkg publish --json`.
type PackagePublish struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
}

// PackageUnwrap is `pkg unwrap --json`.
type PackageUnwrap struct {
	Form    string `json:"form"`
	Name    string `json:"name"`
	Version string `json:"version"`
	File    string `json:"file"`
}
