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

// Fan-out depths of a ctx-v1 branch: how many directory levels of two hex
// digits of a checkpoint's hash sit between checkpoints/ and its file
// (docs/FORMAT.md §2). A branch's depth is chosen when it is created and
// never changes; ghyll-v1 has none (depth 0).
const (
	// FanoutOne is the depth of ctx-v1 branches made before the LAYOUT
	// file carried a fanout field: checkpoints/ab/<hash>.json. An append
	// rewrites a directory of ~N/256 names.
	FanoutOne = 1
	// FanoutTwo is the depth of new ctx-v1 branches (LAYOUT "ctx-v1
	// fanout=2"): checkpoints/ab/cd/<hash>.json. An append rewrites two
	// directories of 256 and ~N/65536 names.
	FanoutTwo = 2
	// DefaultFanout is the depth Init gives a new ctx-v1 branch.
	DefaultFanout = FanoutTwo
)

// fanoutField is the LAYOUT field naming a ctx-v1 branch's depth.
const fanoutField = "fanout="

// ParseLayoutFile reads the content of a LAYOUT file: "ctx-v1" (depth 1,
// branches made before the field existed), "ctx-v1 fanout=2" or
// "ghyll-v1" (depth 0), surrounding white space ignored. Anything else —
// an unknown layout, field or depth, as a newer git-ctx may write — is
// refused, never read as a layout this binary knows (ErrLayoutUnknown).
func ParseLayoutFile(content string) (Layout, int, error) {
	fields := strings.Fields(content)
	if len(fields) == 1 {
		l, err := ParseLayout(fields[0])
		if err == nil {
			return l, l.baseFanout(), nil
		}
	}
	if len(fields) == 2 && Layout(fields[0]) == LayoutCtxV1 && fields[1] == fanoutField+"2" {
		return LayoutCtxV1, FanoutTwo, nil
	}
	return "", 0, fmt.Errorf("%w %q: this git-ctx reads %q, %q and %q; a newer git-ctx may have written it: upgrade git-ctx",
		ErrLayoutUnknown, strings.TrimSpace(content), LayoutCtxV1, string(LayoutCtxV1)+" "+fanoutField+"2", LayoutGhyllV1)
}

// baseFanout is the depth of layout l when LAYOUT names no fanout.
func (l Layout) baseFanout() int {
	if l == LayoutCtxV1 {
		return FanoutOne
	}
	return 0
}

// LayoutFileContent is what the LAYOUT file of a branch in layout l with
// depth fanout holds (ParseLayoutFile reads it back).
func LayoutFileContent(l Layout, fanout int) []byte {
	return []byte(LayoutName(l, fanout) + "\n")
}

// LayoutName names layout l at depth fanout as LAYOUT spells it: "ctx-v1"
// for depth 1 (and ghyll-v1), "ctx-v1 fanout=2" for depth 2.
func LayoutName(l Layout, fanout int) string {
	if l == LayoutCtxV1 && fanout != FanoutOne {
		return fmt.Sprintf("%s %s%d", l, fanoutField, fanout)
	}
	return string(l)
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

// CheckpointPath is where the checkpoint with hash lives on a branch whose
// checkpoints sit fanout directory levels deep: level i is the hash's hex
// digits 2i and 2i+1 (0: ghyll-v1's checkpoints/<hash>.json; 1:
// checkpoints/ab/<hash>.json; 2: checkpoints/ab/cd/<hash>.json). The one
// place a record's path is made; View.CheckpointPath applies a branch's
// depth.
func CheckpointPath(repoID, hash string, fanout int) string {
	parts := make([]string, 0, fanout+3)
	parts = append(parts, RepoDir(repoID), "checkpoints")
	for i := 0; i < fanout && 2*i+2 <= len(hash); i++ {
		parts = append(parts, hash[2*i:2*i+2])
	}
	return path.Join(append(parts, hash+".json")...)
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
