package gitstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/gitexec"
)

// Change is one path whose entry in the newer tree differs from the older
// one (added or modified; removals are not reported: nothing on the branch
// is ever removed by git-ctx).
type Change struct {
	Path string
	Mode filemode.FileMode
	Hash plumbing.Hash
	// Old is the previous blob id (ZeroHash when the path is new).
	Old plumbing.Hash
}

// Diff lists the non-tree entries of b that are new or different from a,
// descending only into subtrees whose ids differ. a may be nil (everything
// in b is new). Entries of any mode are reported (symlinks, gitlinks,
// executables), so callers can refuse what does not belong.
func (s *Store) Diff(a, b *View) ([]Change, error) {
	var base plumbing.Hash
	if a != nil {
		base = a.Root
	}
	var out []Change
	err := s.diffTrees(base, b.Root, "", &out)
	return out, err
}

func (s *Store) diffTrees(a, b plumbing.Hash, prefix string, out *[]Change) error {
	if a == b {
		return nil
	}
	var aEntries map[string]object.TreeEntry
	if !a.IsZero() {
		t, err := s.readTree(a)
		if err != nil {
			return err
		}
		aEntries = make(map[string]object.TreeEntry, len(t.Entries))
		for _, e := range t.Entries {
			aEntries[e.Name] = e
		}
	}
	bt, err := s.readTree(b)
	if err != nil {
		return err
	}
	for _, e := range bt.Entries {
		p := childPath(prefix, e.Name)
		old, had := aEntries[e.Name]
		if had && old.Hash == e.Hash && old.Mode == e.Mode {
			continue
		}
		if e.Mode == filemode.Dir {
			oldTree := plumbing.ZeroHash
			if had && old.Mode == filemode.Dir {
				oldTree = old.Hash
			} else if had {
				*out = append(*out, Change{Path: p, Mode: e.Mode, Hash: e.Hash, Old: old.Hash})
				continue
			}
			if err := s.diffTrees(oldTree, e.Hash, p, out); err != nil {
				return err
			}
			continue
		}
		c := Change{Path: p, Mode: e.Mode, Hash: e.Hash}
		if had && old.Mode != filemode.Dir {
			c.Old = old.Hash
		}
		*out = append(*out, c)
	}
	return nil
}

// WriteBlob stores data as a blob and returns its id.
func (s *Store) WriteBlob(data []byte) (plumbing.Hash, error) { return s.writeBlob(data) }

// ReadBlob reads a blob by id, refusing more than max bytes.
func (s *Store) ReadBlob(h plumbing.Hash, max int64) ([]byte, error) { return s.readBlob(h, max) }

// Segments returns the blob ids of device's ctx-v1 chain segments in order.
func (v *View) Segments(repoID, device string) ([]plumbing.Hash, error) {
	return v.segments(repoID, device)
}

// CommitRequest asks for one commit on the memory branch: the tree of Base
// with Edits applied (path → existing blob id), the given parents, and a
// compare-and-swap of the branch from Expect (ZeroHash: must not exist).
type CommitRequest struct {
	Base    plumbing.Hash // tree id; ZeroHash for an empty tree
	Edits   map[string]plumbing.Hash
	Parents []plumbing.Hash
	Message string
	Author  Author
	Expect  plumbing.Hash
}

// Commit writes the tree and commit and moves the branch under the git-ctx
// lock. It returns ErrBranchMoved when the branch moved from Expect. When the
// edited tree equals the tree of the only parent, no commit is made and the
// branch is moved to that parent (a fast-forward).
func (s *Store) Commit(ctx context.Context, req CommitRequest) (plumbing.Hash, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer unlock()
	cur, err := s.Tip()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if cur != req.Expect {
		return plumbing.ZeroHash, ErrBranchMoved
	}
	tree, err := s.editTree(req.Base, req.Edits)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var target plumbing.Hash
	if len(req.Parents) == 1 {
		if pc, err := s.readCommit(req.Parents[0]); err == nil && pc.TreeHash == tree {
			target = req.Parents[0]
		}
	}
	if target.IsZero() {
		target, err = s.writeCommit(tree, req.Parents, req.Author.signature(time.Now()), req.Message)
		if err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := s.casRef(ctx, req.Expect, target, firstLineOf(req.Message)); err != nil {
		return plumbing.ZeroHash, err
	}
	return target, nil
}

func firstLineOf(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// TreeOf returns the root tree id of a commit.
func (s *Store) TreeOf(c plumbing.Hash) (plumbing.Hash, error) {
	commit, err := s.readCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return commit.TreeHash, nil
}

// ancestorWalkLimit bounds the commits IsAncestor reads in process before
// it asks git: the common question (is the tip the cache indexed an
// ancestor of the tip now?) is answered within a few appends.
const ancestorWalkLimit = 64

// IsAncestor reports whether a is an ancestor of (or equal to) b. Up to
// ancestorWalkLimit commits back from b are read in process; beyond that
// git answers (it uses its commit-graph).
func (s *Store) IsAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	if found, sure := s.walkForAncestor(a, b); sure {
		return found, nil
	}
	_, err := gitexec.Git(ctx, s.Repo.CommonDir, "merge-base", "--is-ancestor", a.String(), b.String())
	if err == nil {
		return true, nil
	}
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// walkForAncestor looks for a among the ancestors of b, reading at most
// ancestorWalkLimit commits. sure is false when the limit was reached (or
// a commit could not be read) before the question was settled.
func (s *Store) walkForAncestor(a, b plumbing.Hash) (found, sure bool) {
	seen := map[plumbing.Hash]bool{b: true}
	queue := []plumbing.Hash{b}
	for len(queue) > 0 {
		if len(seen) > ancestorWalkLimit {
			return false, false
		}
		c, err := s.readCommit(queue[0])
		if err != nil {
			return false, false
		}
		queue = queue[1:]
		for _, p := range c.ParentHashes {
			if p == a {
				return true, true
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, true // every ancestor of b read: a is not one
}

// MergeBase returns the best common ancestor of a and b (ZeroHash when
// they share no history), asking git once.
func (s *Store) MergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	if a == b {
		return a, nil
	}
	out, err := gitexec.Git(ctx, s.Repo.CommonDir, "merge-base", a.String(), b.String())
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

// Parents returns the parents of commit c.
func (s *Store) Parents(c plumbing.Hash) ([]plumbing.Hash, error) {
	commit, err := s.readCommit(c)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", c, err)
	}
	return commit.ParentHashes, nil
}

// childPath is the path of the entry name below the directory prefix (""
// for the root). Not path.Join: it would clean a hostile entry such as ".."
// or "" away; the caller must see every name as the tree spells it.
func childPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}
