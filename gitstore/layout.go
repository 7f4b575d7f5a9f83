package gitstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// Layout names a branch layout. The root file LAYOUT holds it; a branch
// without that file is ghyll-v1.
type Layout string

// The two layouts git-ctx reads and writes.
const (
	LayoutGhyllV1 Layout = "ghyll-v1"
	LayoutCtxV1   Layout = "ctx-v1"
)

// DefaultLayout is used for new branches.
const DefaultLayout = LayoutCtxV1

// Layout constants (see docs/FORMAT.md).
const (
	// LayoutFile is the root file naming a ctx-v1 branch's layout.
	LayoutFile = "LAYOUT"
	// SegmentLines is the number of chain lines per ctx-v1 segment file.
	SegmentLines = 128
	// MaxBlob bounds every blob git-ctx reads from the branch.
	MaxBlob = 16 << 20
)

// ParseLayout validates a layout name.
func ParseLayout(s string) (Layout, error) {
	switch Layout(s) {
	case LayoutGhyllV1, LayoutCtxV1:
		return Layout(s), nil
	}
	return "", fmt.Errorf("unknown layout %q (want %s or %s)", s, LayoutCtxV1, LayoutGhyllV1)
}

// SessionRoots reports whether a device's chain in layout l may hold a root
// per session (ghyll-v1, as ghyll's library writes it): the linkage rule of
// chain.Input.SessionRoots, docs/FORMAT.md §5.1.
func (l Layout) SessionRoots() bool { return l == LayoutGhyllV1 }

// Rule is the canonicalisation rule git-ctx seals new checkpoints with in
// layout l: ghyll's code rule (v2 records, "emb" outside the hash) in
// ghyll-v1, so that ghyll's own code verifies them; the seed rule (v1) in
// ctx-v1.
func (l Layout) Rule() checkpoint.Rule {
	if l == LayoutGhyllV1 {
		return checkpoint.RuleGhyllV2
	}
	return checkpoint.RuleSeedV1
}

// GhyllRepoID is the repository directory name ghyll's Syncer uses for a
// repository whose `git remote get-url origin` printed originURL: the
// lowercase hex SHA-256 of that output with surrounding whitespace trimmed,
// not normalised (FORMAT §3). "" for an empty URL.
func GhyllRepoID(originURL string) string {
	u := strings.TrimSpace(originURL)
	if u == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(u))
	return hex.EncodeToString(sum[:])
}

// DeviceKeyPath is where a device's public key lives.
func DeviceKeyPath(device string) string { return "devices/" + device + ".pub" }

// RepoDir is the directory of one repository's records.
func RepoDir(repoID string) string { return "repos/" + repoID }

// CheckpointPath is where the checkpoint with hash lives.
func (l Layout) CheckpointPath(repoID, hash string) string {
	if l == LayoutCtxV1 {
		return path.Join(RepoDir(repoID), "checkpoints", hash[0:2], hash+".json")
	}
	return path.Join(RepoDir(repoID), "checkpoints", hash+".json")
}

// ChainDir is the directory holding chains (ghyll-v1: files <device>.jsonl;
// ctx-v1: one directory per device with numbered segments).
func ChainDir(repoID string) string { return path.Join(RepoDir(repoID), "chains") }

// ChainPath is the ghyll-v1 chain file of device.
func ChainPath(repoID, device string) string {
	return path.Join(ChainDir(repoID), device+".jsonl")
}

// SegmentPath is the ctx-v1 chain segment n of device.
func SegmentPath(repoID, device string, n int) string {
	return path.Join(ChainDir(repoID), device, SegmentName(n))
}

// SegmentName is the file name of segment n: eight decimal digits.
func SegmentName(n int) string { return fmt.Sprintf("%08d.jsonl", n) }
