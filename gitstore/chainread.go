package gitstore

import (
	"errors"
	"fmt"
	"path"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// ChainID returns the object id of device's chain in repoID (the ctx-v1
// directory or the ghyll-v1 file); ZeroHash when there is none. Two views
// with the same ChainID hold the same chain.
func (v *View) ChainID(repoID, device string) (plumbing.Hash, error) {
	p := path.Join(ChainDir(repoID), device)
	if v.Layout == LayoutGhyllV1 {
		p = ChainPath(repoID, device)
	}
	e, err := v.entry(p)
	if errors.Is(err, ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return e.Hash, nil
}

// ChainFrom returns device's chain entries from position start on. In the
// ctx-v1 layout only the segments holding those entries are read.
func (v *View) ChainFrom(repoID, device string, start int) ([]checkpoint.ChainEntry, error) {
	if v.Layout == LayoutGhyllV1 || start <= 0 {
		all, err := v.Chain(repoID, device)
		if err != nil || start <= 0 {
			return all, err
		}
		if start > len(all) {
			return nil, nil
		}
		return all[start:], nil
	}
	segs, err := v.segments(repoID, device)
	if err != nil {
		return nil, err
	}
	first := start / SegmentLines
	var out []checkpoint.ChainEntry
	for i := first; i < len(segs); i++ {
		b, err := v.readPath(SegmentPath(repoID, device, i), segs[i], MaxBlob)
		if err != nil {
			return nil, err
		}
		entries, _, err := checkpoint.ParseChain(b)
		if err != nil {
			return nil, fmt.Errorf("%w: chain of %s, segment %d: %v", ErrCorrupt, device, i, err)
		}
		if i < len(segs)-1 && len(entries) != SegmentLines {
			return nil, fmt.Errorf("%w: chain of %s: segment %d holds %d lines, want %d", ErrCorrupt, device, i, len(entries), SegmentLines)
		}
		if i == first {
			skip := start - first*SegmentLines
			if skip > len(entries) {
				return nil, nil
			}
			entries = entries[skip:]
		}
		out = append(out, entries...)
	}
	return out, nil
}

// TimelineID returns the object id of device's snapshot timeline directory
// in repoID (ZeroHash when there is none). Two views with the same id hold
// the same timeline.
func (v *View) TimelineID(repoID, device string) (plumbing.Hash, error) {
	e, err := v.entry(path.Join(TimelineDir(repoID), device))
	if errors.Is(err, ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return e.Hash, nil
}
