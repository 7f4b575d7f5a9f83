package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/gitname"
	"github.com/git-ctx/git-ctx/internal/gitobject"
)

// ErrNotExist means a path is not on the branch.
var ErrNotExist = fault.Sentinel(fault.Failed, "not on the branch")

// ErrTooLarge means a blob exceeds the limit it was read with.
var ErrTooLarge = fault.Sentinel(fault.Refused, "object too large")

// ErrUnsafePath: a tree edit names a path component git refuses (empty,
// ".", "..", or an alias of .git or .gitmodules: gitname.Check). Callers
// validate names first; this is the last guard before a tree is written.
var ErrUnsafePath = fault.Sentinel(fault.Refused, "path component git refuses")

// TooLargeError is the ErrTooLarge of one blob: its size as its object
// header states it (the body was never inflated). Base is set when the blob
// is stored as a delta of an object larger than any file of the branch may
// be (reading the delta would mean inflating that object whole).
type TooLargeError struct {
	Path  string // the file on the branch ("" when read by id)
	Blob  plumbing.Hash
	Size  int64
	Limit int64
	Base  bool
}

func (e *TooLargeError) Error() string {
	what := "blob " + e.Blob.String()
	if e.Path != "" {
		what = e.Path + " (" + what + ")"
	}
	if e.Base {
		return fmt.Sprintf("%v: %s is stored as a delta of a %d-byte object (limit %d)", ErrTooLarge, what, e.Size, e.Limit)
	}
	return fmt.Sprintf("%v: %s is %d bytes (limit %d)", ErrTooLarge, what, e.Size, e.Limit)
}

// Unwrap makes a TooLargeError match ErrTooLarge (errors.Is) and gives it
// ErrTooLarge's kind.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

func (s *Store) writeBlob(data []byte) (plumbing.Hash, error) {
	return s.writeLoose(plumbing.BlobObject, data)
}

// readBlob reads a blob, refusing it when it exceeds limit before its body is
// inflated: the size comes from the object's header (a loose object's first
// bytes, a pack entry's header and, for a delta, the delta's first bytes).
// Every object a packed delta is built on must be at most MaxBlob (or limit)
// bytes too: applying the delta would hold it whole.
//
// In a long operation a blob stored whole in a pack is read from one read
// of its entry (readPackedWhole), with the same answers.
func (s *Store) readBlob(h plumbing.Hash, limit int64) ([]byte, error) {
	s.mu.Lock()
	p, off, ok := s.direct.wholeEntry(h)
	s.mu.Unlock()
	var data []byte
	var whole int64
	var handled bool
	if ok { // readPackedWhole, its read outside the lock
		data, whole, handled = readWholeAt(p, off, h, limit)
	}
	if handled {
		if data == nil {
			return nil, &TooLargeError{Blob: h, Size: whole, Limit: limit}
		}
		return data, nil
	}
	size, err := s.blobSize(h, max(limit, MaxBlob))
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.Blob = h
		return nil, tl
	}
	if err != nil {
		return nil, fault.Default(fault.Failed, fmt.Errorf("read blob %s: %w", h, err))
	}
	if size > limit {
		return nil, &TooLargeError{Blob: h, Size: size, Limit: limit}
	}
	s.mu.Lock()
	t, data, err := s.direct.read(h)
	s.mu.Unlock()
	if err == nil && t == plumbing.BlobObject && int64(len(data)) <= limit {
		return data, nil // the direct reader's own copy, checked against h
	}
	obj, err := s.object(plumbing.BlobObject, h)
	if err != nil {
		return nil, fault.Default(fault.Failed, fmt.Errorf("read blob %s: %w", h, err))
	}
	if obj.Size() > limit {
		return nil, &TooLargeError{Blob: h, Size: obj.Size(), Limit: limit}
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, limit+1))
}

// blobSize returns the size of blob h from its header, without inflating
// its body (see readBlob); a packed delta's bases must be at most maxBase
// bytes. What the direct reader cannot tell, git does (`cat-file -s` reads
// headers only).
func (s *Store) blobSize(h plumbing.Hash, maxBase int64) (int64, error) {
	s.mu.Lock()
	t, size, err := s.direct.probe(h, maxBase)
	s.mu.Unlock()
	if err == nil {
		if t != plumbing.BlobObject {
			return 0, plumbing.ErrObjectNotFound
		}
		return size, nil
	}
	if !errors.Is(err, errDirect) {
		return 0, err
	}
	out, gerr := gitexec.Git(context.Background(), s.Repo.CommonDir, "cat-file", "-s", h.String())
	if gerr != nil {
		return 0, plumbing.ErrObjectNotFound
	}
	size, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size of blob %s: %w", h, err)
	}
	return size, nil
}

// Decoded trees are kept (trees never change for a given id): resolving
// one checkpoint path decodes three trees, and a pull or an index resolves
// thousands of paths through the same few. The result is shared: callers
// must not modify it.
//
// The cache has two generations of at most maxCachedTrees each: a tree
// found in the old one moves to the new one, and when the new one is full
// it becomes the old one. A whole-branch pass over a two-level fan-out
// (~50,000 leaf trees at 100k checkpoints, each read once) thus keeps the
// upper levels it passes through again and again, where a cache emptied
// when full dropped them with the leaves.
func (s *Store) readTree(h plumbing.Hash) (*object.Tree, error) {
	if t := s.cachedTree(h); t != nil {
		return t, nil
	}
	// The direct reader's copy (checked against h) decoded in one pass;
	// anything it cannot read or decodeTree refuses goes the general way,
	// which reads it again and gives go-git's answer and error.
	s.mu.Lock()
	dt, data, err := s.direct.read(h)
	s.mu.Unlock()
	if err == nil && dt == plumbing.TreeObject {
		if entries, ok := decodeTree(data); ok {
			return s.keepDecodedTree(h, entries), nil
		}
	}
	obj, err := s.object(plumbing.TreeObject, h)
	if err != nil {
		return nil, fault.Default(fault.Failed, fmt.Errorf("read tree %s: %w", h, err))
	}
	s.treeDecodes.Add(1)
	t := &object.Tree{}
	if err := t.Decode(obj); err != nil {
		// A tree git-ctx cannot decode (hostile branch content).
		return nil, fault.New(fault.Failed, "read tree %s: %w", h, err)
	}
	s.treesMu.Lock()
	s.keepTree(h, t)
	s.treesMu.Unlock()
	return t, nil
}

// cachedTree returns the decoded tree h when the cache holds it.
func (s *Store) cachedTree(h plumbing.Hash) *object.Tree {
	s.treesMu.Lock()
	defer s.treesMu.Unlock()
	if t, ok := s.trees[h]; ok {
		return t
	}
	t, ok := s.oldTrees[h]
	if !ok {
		return nil
	}
	delete(s.oldTrees, h)
	s.keepTree(h, t)
	return t
}

// keepDecodedTree makes the tree h of entries (decodeTree's), keeps it in
// the tree cache and counts the decode.
func (s *Store) keepDecodedTree(h plumbing.Hash, entries []object.TreeEntry) *object.Tree {
	s.treeDecodes.Add(1)
	t := newDecodedTree(h, entries)
	s.treesMu.Lock()
	s.keepTree(h, t)
	s.treesMu.Unlock()
	return t
}

// keepTree puts t in the new generation (treesMu held).
func (s *Store) keepTree(h plumbing.Hash, t *object.Tree) {
	if s.trees == nil || len(s.trees) >= maxCachedTrees {
		s.oldTrees, s.trees = s.trees, make(map[plumbing.Hash]*object.Tree)
	}
	s.trees[h] = t
}

// maxCachedTrees bounds each generation of the decoded-tree cache: a
// ctx-v1 branch of 100k checkpoints has about 300 directories per
// repository above its leaves that a whole-branch pass visits repeatedly,
// and a pull resolves each new record's path twice (its verification, then
// the cache's check that the branch holds the blob it verified): at 4,096
// a pull of 10k new records read ~10k leaf trees twice, at 16,384 once
// (its wall time 1.45 → 1.30 s); the two generations then hold up to ~10
// MiB of decoded trees more at 100k (max RSS of a reindex 80 → 101 MiB).
var maxCachedTrees = 16384

// writeTree stores a tree with its entries in git's order
// (gitobject.Writer.WriteTree).
func (s *Store) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	es := make([]gitobject.TreeEntry, len(entries))
	for i, e := range entries {
		es[i] = gitobject.TreeEntry{Mode: strconv.FormatUint(uint64(e.Mode), 8), Name: e.Name, ID: e.Hash[:]}
	}
	id, err := s.objects().WriteTree(es)
	var h plumbing.Hash
	copy(h[:], id)
	return h, err
}

// editTree returns base with the blobs in edits placed at their paths
// (relative to base), rewriting only the trees on those paths. base may be
// ZeroHash for an empty tree. A path that runs through an existing blob is
// an error.
func (s *Store) editTree(base plumbing.Hash, edits map[string]plumbing.Hash) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !base.IsZero() {
		t, err := s.readTree(base)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, t.Entries...)
	}
	index := make(map[string]int, len(entries))
	for i, e := range entries {
		index[e.Name] = i
	}
	sub := map[string]map[string]plumbing.Hash{}
	for p, h := range edits {
		name, rest, deeper := strings.Cut(p, "/")
		// Every name git-ctx writes passes through here: none may be one
		// git refuses or a checkout reads as .git (gitname.Check). A
		// directory's name is checked once, with the first path under it.
		if sub[name] == nil {
			if err := gitname.Check(name); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("%w: %q: %v", ErrUnsafePath, p, err)
			}
		}
		if !deeper {
			if i, ok := index[name]; ok {
				if entries[i].Mode == filemode.Dir {
					return plumbing.ZeroHash, fmt.Errorf("path %q is a directory on the branch", p)
				}
				entries[i] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
			} else {
				index[name] = len(entries)
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
			}
			continue
		}
		if sub[name] == nil {
			sub[name] = map[string]plumbing.Hash{}
		}
		sub[name][rest] = h
	}
	for name, e := range sub {
		childBase := plumbing.ZeroHash
		i, ok := index[name]
		if ok {
			if entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("path %q is a file on the branch", name)
			}
			childBase = entries[i].Hash
		}
		h, err := s.editTree(childBase, e)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		te := object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		if ok {
			entries[i] = te
		} else {
			index[name] = len(entries)
			entries = append(entries, te)
		}
	}
	return s.writeTree(entries)
}

func (s *Store) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, sig object.Signature, msg string) (plumbing.Hash, error) {
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	r, _ := obj.Reader()
	body, err := io.ReadAll(r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.writeLoose(plumbing.CommitObject, body)
}

// lastLine returns the last "\n"-terminated line of data without its newline.
func lastLine(data []byte) []byte {
	data = bytes.TrimSuffix(data, []byte("\n"))
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return data[i+1:]
	}
	return data
}

// object reads one object. go-git caches the list of pack indexes for the
// life of the storage, so an object that arrived in a new pack (git fetch,
// or a concurrent git gc that also pruned the loose copy) is first retried
// after re-reading the pack indexes, then read through `git cat-file`, which
// also knows pack layouts go-git does not (git maintenance's loose packs).
func (s *Store) object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.mu.Lock()
	if dt, data, err := s.direct.read(h); err == nil {
		s.mu.Unlock()
		if dt != t && t != plumbing.AnyObject {
			// Found, but of another type (a ref or entry naming a blob
			// where a commit belongs): say so; still "not found" to callers.
			return nil, fmt.Errorf("object is a %s, not a %s: %w", dt, t, plumbing.ErrObjectNotFound)
		}
		mo := &plumbing.MemoryObject{}
		mo.SetType(dt)
		mo.Write(data)
		return mo, nil
	}
	obj, err := s.st.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		s.st.Reindex()
		obj, err = s.st.EncodedObject(t, h)
	}
	s.mu.Unlock()
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return obj, err
	}
	out, gerr := gitexec.Git(context.Background(), s.Repo.CommonDir, "cat-file", t.String(), h.String())
	if gerr != nil {
		return nil, err
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(t)
	mo.Write(out)
	return mo, nil
}
