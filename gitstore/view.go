package gitstore

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// View is the branch as of one commit. It is read-only and cheap to make.
type View struct {
	s      *Store
	Commit plumbing.Hash
	Root   plumbing.Hash
	Layout Layout
	// Fanout is the number of hash-prefix directory levels above a
	// checkpoint file (CheckpointPath): 0 in ghyll-v1, 1 or 2 in ctx-v1,
	// read from LAYOUT.
	Fanout int
	root   *object.Tree
}

// View returns the branch at its current tip, or ErrNotInitialized.
func (s *Store) View() (*View, error) {
	tip, err := s.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, ErrNotInitialized
	}
	return s.ViewAt(tip)
}

// ViewAt returns the branch as of commit c.
func (s *Store) ViewAt(c plumbing.Hash) (*View, error) {
	commit, err := s.readCommit(c)
	if err != nil {
		return nil, err
	}
	root, err := s.readTree(commit.TreeHash)
	if err != nil {
		return nil, err
	}
	v := &View{s: s, Commit: c, Root: commit.TreeHash, root: root, Layout: LayoutGhyllV1}
	if data, err := v.ReadFile(LayoutFile, 64); err == nil {
		l, fanout, err := ParseLayoutFile(string(data))
		if err != nil {
			return nil, fmt.Errorf("LAYOUT: %w", err)
		}
		v.Layout, v.Fanout = l, fanout
	} else if !errors.Is(err, ErrNotExist) {
		return nil, err
	}
	return v, nil
}

func (s *Store) readCommit(c plumbing.Hash) (*object.Commit, error) {
	obj, err := s.object(plumbing.CommitObject, c)
	if err != nil {
		return nil, fault.Default(fault.Failed, fmt.Errorf("read commit %s: %w", c, err))
	}
	commit := &object.Commit{}
	if err := commit.Decode(obj); err != nil {
		return nil, fault.New(fault.Failed, "read commit %s: %w", c, err)
	}
	return commit, nil
}

// entry finds the tree entry at p ("" is the root).
func (v *View) entry(p string) (object.TreeEntry, error) {
	if p == "" {
		return object.TreeEntry{Mode: filemode.Dir, Hash: v.Root}, nil
	}
	t := v.root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		var found *object.TreeEntry
		for j := range t.Entries {
			if t.Entries[j].Name == name {
				found = &t.Entries[j]
				break
			}
		}
		if found == nil {
			return object.TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
		if i == len(parts)-1 {
			return *found, nil
		}
		if found.Mode != filemode.Dir {
			return object.TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
		sub, err := v.s.readTree(found.Hash)
		if err != nil {
			return object.TreeEntry{}, fmt.Errorf("%s: %w", p, err)
		}
		t = sub
	}
	return object.TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
}

// BlobHash returns the blob id at p.
func (v *View) BlobHash(p string) (plumbing.Hash, error) {
	e, err := v.entry(p)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if e.Mode != filemode.Regular && e.Mode != filemode.Deprecated {
		return plumbing.ZeroHash, fmt.Errorf("%w: %s is not a regular file (mode %o)", ErrCorrupt, p, uint32(e.Mode))
	}
	return e.Hash, nil
}

// ReadFile reads the regular file at p, refusing more than max bytes.
func (v *View) ReadFile(p string, max int64) ([]byte, error) {
	h, err := v.BlobHash(p)
	if err != nil {
		return nil, err
	}
	return v.readPath(p, h, max)
}

// readPath reads blob h, the file at p, refusing more than limit bytes (a
// TooLargeError names p).
func (v *View) readPath(p string, h plumbing.Hash, limit int64) ([]byte, error) {
	b, err := v.s.readBlob(h, limit)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.Path = p
	}
	return b, err
}

// List returns the entries of the directory at p (nil if it does not exist).
func (v *View) List(p string) ([]object.TreeEntry, error) {
	e, err := v.entry(p)
	if errors.Is(err, ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if e.Mode != filemode.Dir {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrCorrupt, p)
	}
	t, err := v.s.readTree(e.Hash)
	if err != nil {
		return nil, err
	}
	return slices.Clone(t.Entries), nil
}

// Devices lists the device ids that have a public key on the branch.
func (v *View) Devices() ([]string, error) {
	return v.listNames("devices", func(e object.TreeEntry) (string, bool) {
		id, ok := strings.CutSuffix(e.Name, ".pub")
		return id, ok && e.Mode != filemode.Dir
	})
}

// listNames returns, in tree order, the names pick derives from the entries
// of the directory at p that it keeps (nil when there are none).
func (v *View) listNames(p string, pick func(object.TreeEntry) (string, bool)) ([]string, error) {
	es, err := v.List(p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if name, ok := pick(e); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// dirName is the pick of listNames that keeps the directories.
func dirName(e object.TreeEntry) (string, bool) { return e.Name, e.Mode == filemode.Dir }

// DeviceKey returns the public key published for device (ErrNotExist if
// none) and the raw file bytes.
func (v *View) DeviceKey(device string) (ed25519.PublicKey, []byte, error) {
	raw, err := v.ReadFile(DeviceKeyPath(device), checkpoint.MaxKeyFileSize)
	if err != nil {
		return nil, nil, err
	}
	pub, err := checkpoint.ParsePublicKey(raw)
	if err != nil {
		return nil, raw, fmt.Errorf("%s: %w", DeviceKeyPath(device), err)
	}
	return pub, raw, nil
}

// Repos lists the repo ids on the branch.
func (v *View) Repos() ([]string, error) { return v.listNames("repos", dirName) }

// ChainDevices lists the devices with a chain in repoID.
func (v *View) ChainDevices(repoID string) ([]string, error) {
	out, err := v.listNames(ChainDir(repoID), func(e object.TreeEntry) (string, bool) {
		if v.Layout == LayoutCtxV1 {
			return dirName(e)
		}
		id, ok := strings.CutSuffix(e.Name, ".jsonl")
		return id, ok && v.Layout == LayoutGhyllV1 && e.Mode != filemode.Dir
	})
	sort.Strings(out)
	return out, err
}

// ChainBytes returns device's whole chain in repoID (segments concatenated
// in order), or nil when the device has no chain there.
func (v *View) ChainBytes(repoID, device string) ([]byte, error) {
	if v.Layout == LayoutGhyllV1 {
		b, err := v.ReadFile(ChainPath(repoID, device), MaxBlob)
		if errors.Is(err, ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	segs, err := v.segments(repoID, device)
	if err != nil {
		return nil, err
	}
	var out []byte
	for i, h := range segs {
		b, err := v.readPath(SegmentPath(repoID, device, i), h, MaxBlob)
		if err != nil {
			return nil, err
		}
		n := bytes.Count(b, []byte{'\n'})
		if n > SegmentLines || i < len(segs)-1 && n != SegmentLines || n == 0 {
			return nil, fmt.Errorf("%w: chain of %s: segment %s holds %d lines (full segments hold %d)", ErrCorrupt, device, SegmentName(i), n, SegmentLines)
		}
		if out == nil && len(segs) > 1 {
			// Room for all segments as large as the first (bounded): one
			// copy each, not a regrowth per segment.
			out = make([]byte, 0, min(len(b)*len(segs), chainBytesHint))
		}
		out = append(out, b...)
	}
	return out, nil
}

// chainBytesHint bounds the room ChainBytes makes for a chain up front.
const chainBytesHint = 8 << 20

// segments returns the blob ids of device's ctx-v1 segments in order, and
// fails unless they are exactly 00000000.jsonl … N.jsonl, regular files.
func (v *View) segments(repoID, device string) ([]plumbing.Hash, error) {
	return v.segmentFiles(path.Join(ChainDir(repoID), device), "chain")
}

// segmentFiles returns the blob ids of the segment files in dir (a chain
// or a timeline: what), in order; they must be exactly 00000000.jsonl …
// N.jsonl, regular files.
func (v *View) segmentFiles(dir, what string) ([]plumbing.Hash, error) {
	es, err := v.List(dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	out := make([]plumbing.Hash, 0, len(es))
	for i, e := range es {
		if e.Name != SegmentName(i) || e.Mode != filemode.Regular {
			return nil, fmt.Errorf("%w: unexpected entry %s/%s in a %s", ErrCorrupt, dir, e.Name, what)
		}
		out = append(out, e.Hash)
	}
	return out, nil
}

// Chain parses device's chain in repoID.
func (v *View) Chain(repoID, device string) ([]checkpoint.ChainEntry, error) {
	b, err := v.ChainBytes(repoID, device)
	if err != nil {
		return nil, err
	}
	entries, _, err := checkpoint.ParseChain(b)
	if err != nil {
		return entries, fmt.Errorf("%w: chain of %s: %v", ErrCorrupt, device, err)
	}
	return entries, nil
}

// CheckpointFile reads the raw checkpoint file for hash in repoID.
func (v *View) CheckpointFile(repoID, hash string) ([]byte, error) {
	if !checkpoint.IsHexHash(hash) {
		return nil, fmt.Errorf("%q is not a checkpoint hash", hash)
	}
	return v.ReadFile(v.CheckpointPath(repoID, hash), checkpoint.MaxFileSize)
}

// CheckpointPath is where this branch keeps the checkpoint with hash in
// repoID: CheckpointPath at the branch's depth (Fanout).
func (v *View) CheckpointPath(repoID, hash string) string {
	return CheckpointPath(repoID, hash, v.Fanout)
}

// LayoutName names the branch's layout as its LAYOUT file does ("ctx-v1",
// "ctx-v1 fanout=2", "ghyll-v1").
func (v *View) LayoutName() string { return LayoutName(v.Layout, v.Fanout) }

// Checkpoint reads and parses the checkpoint hash in repoID.
func (v *View) Checkpoint(repoID, hash string) (*checkpoint.Checkpoint, error) {
	raw, err := v.CheckpointFile(repoID, hash)
	if err != nil {
		return nil, err
	}
	return checkpoint.Parse(raw)
}

// CheckpointEntry is one checkpoint file found by WalkCheckpoints.
type CheckpointEntry struct {
	Path string
	Hash string // from the file name
	Blob plumbing.Hash
}

// WalkCheckpoints lists the checkpoint files of repoID. Entries whose path is
// not what the layout prescribes for their name go to bad.
func (v *View) WalkCheckpoints(repoID string) (good []CheckpointEntry, bad []string, err error) {
	bad, err = v.walkCheckpoints(repoID, func(full, hash string, blob plumbing.Hash) {
		good = append(good, CheckpointEntry{Path: full, Hash: hash, Blob: blob})
	})
	return good, bad, err
}

// walkCheckpoints calls found for every checkpoint file of repoID at the
// path the layout prescribes for its name (full: that path) and returns
// the others' paths.
func (v *View) walkCheckpoints(repoID string, found func(full, hash string, blob plumbing.Hash)) (bad []string, err error) {
	err = v.walk(path.Join(RepoDir(repoID), "checkpoints"), 0, func(_ string, e object.TreeEntry, full string, depth int) bool {
		return v.visitCheckpoint(repoID, e, full, depth, found, &bad)
	})
	return bad, err
}

// visitCheckpoint is walkCheckpoints' visit of one entry at depth below
// the checkpoints directory: true to descend into it (a fan-out directory).
func (v *View) visitCheckpoint(repoID string, e object.TreeEntry, full string, depth int, found func(full, hash string, blob plumbing.Hash), bad *[]string) bool {
	if e.Mode == filemode.Dir && depth < v.Fanout {
		if len(e.Name) != 2 || !isHex(e.Name) {
			*bad = append(*bad, full+"/")
			return false
		}
		return true
	}
	hash, ok := strings.CutSuffix(e.Name, ".json")
	if !ok || depth != v.Fanout || e.Mode != filemode.Regular || !checkpoint.IsHexHash(hash) ||
		!v.isCheckpointPath(full, repoID, hash) {
		*bad = append(*bad, full)
		return false
	}
	found(full, hash, e.Hash)
	return false
}

// isCheckpointPath reports whether p is v.CheckpointPath(repoID, hash),
// without making that path when repoID is a plain name (plainName) and
// hash a checkpoint hash: the layout walk asks it for every record.
func (v *View) isCheckpointPath(p, repoID, hash string) bool {
	if !plainName(repoID) || !checkpoint.IsHexHash(hash) || v.Fanout < 0 || v.Fanout > len(hash)/2 {
		return v.CheckpointPath(repoID, hash) == p
	}
	rest, ok := strings.CutPrefix(p, "repos/")
	if ok {
		rest, ok = strings.CutPrefix(rest, repoID)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, "/checkpoints/")
	}
	for i := 0; ok && i < v.Fanout; i++ {
		rest, ok = strings.CutPrefix(rest, hash[2*i:2*i+2])
		if ok {
			rest, ok = strings.CutPrefix(rest, "/")
		}
	}
	if ok {
		rest, ok = strings.CutSuffix(rest, ".json")
	}
	return ok && rest == hash
}

// plainName reports whether name is one path element that path.Join keeps
// as it is: not empty, ".", ".." and without "/".
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}

// walk calls visit for every entry of the directory at dir, in tree order,
// with dir, the entry, its path (path.Join(dir, name)) and depth, and
// descends (depth+1) into the entries for which visit returns true: the one
// walk behind the layout checks of WalkCheckpoints, WalkSnapshots and
// WalkPackages.
func (v *View) walk(dir string, depth int, visit func(dir string, e object.TreeEntry, full string, depth int) bool) error {
	es, err := v.List(dir)
	if err != nil {
		return err
	}
	return v.walkEntries(dir, es, depth, visit)
}

// walkEntries is walk over es, the entries of dir: subdirectories are read
// by their tree ids (not resolved from the root again), and their entries
// are not copied (visit gets each by value).
func (v *View) walkEntries(dir string, es []object.TreeEntry, depth int, visit func(dir string, e object.TreeEntry, full string, depth int) bool) error {
	for _, e := range es {
		full := path.Join(dir, e.Name)
		if !visit(dir, e, full, depth) {
			continue
		}
		if e.Mode != filemode.Dir {
			return fmt.Errorf("%w: %s is not a directory", ErrCorrupt, full)
		}
		t, err := v.s.readTree(e.Hash)
		if err != nil {
			return err
		}
		if err := v.walkEntries(full, t.Entries, depth+1, visit); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlob reads a blob by id with a size limit.
func (v *View) ReadBlob(h plumbing.Hash, max int64) ([]byte, error) { return v.s.readBlob(h, max) }

// Resolve returns the hashes of repoID's checkpoints starting with prefix.
func (v *View) Resolve(repoID, prefix string) ([]string, error) {
	prefix = strings.ToLower(prefix)
	if prefix == "" || len(prefix) > 64 || !isHex(prefix) {
		return nil, fmt.Errorf("%q is not a hash prefix", prefix)
	}
	// Descend only into the fan-out directories the prefix names (all of
	// them below where it ends), and keep the files at their layout path.
	levels := min(len(prefix)/2, v.Fanout)
	dir := path.Join(RepoDir(repoID), "checkpoints")
	for i := 0; i < levels; i++ {
		dir = path.Join(dir, prefix[2*i:2*i+2])
	}
	var out []string
	err := v.walk(dir, levels, func(_ string, e object.TreeEntry, full string, depth int) bool {
		if e.Mode == filemode.Dir {
			rest := prefix[min(2*depth, len(prefix)):]
			return depth < v.Fanout && len(e.Name) == 2 && strings.HasPrefix(e.Name, rest[:min(2, len(rest))])
		}
		h, ok := strings.CutSuffix(e.Name, ".json")
		if ok && strings.HasPrefix(h, prefix) && checkpoint.IsHexHash(h) && v.CheckpointPath(repoID, h) == full {
			out = append(out, h)
		}
		return false
	})
	return out, err
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
