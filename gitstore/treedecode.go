package gitstore

import (
	"bytes"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// decodeTree decodes the content of a tree object into the entries
// go-git's object.Tree.Decode gives (same names, canonical modes and ids,
// in stored order) when data is well formed: every entry an octal mode
// that fits 32 bits, a space, a non-empty name, a NUL and a 20-byte id. It
// reports false for anything else; the caller then decodes with go-git,
// whose error texts are the ones readers see. Unlike Decode it allocates
// the names as one string (each entry's Name is a piece of it) and the
// entries once: a whole-branch verify decodes about one leaf tree per
// record. FuzzDecodeTree compares it with go-git's Decode.
func decodeTree(data []byte) ([]object.TreeEntry, bool) {
	if len(data) == 0 {
		return nil, true
	}
	n := 0
	for i := 0; i < len(data); n++ {
		_, _, next, ok := treeEntryAt(data, i)
		if !ok {
			return nil, false
		}
		i = next
	}
	entries := make([]object.TreeEntry, n) // exactly: decoded trees are cached
	names := string(data)
	for i, k := 0, 0; i < len(data); k++ {
		mode, nameStart, next, _ := treeEntryAt(data, i)
		e := &entries[k]
		e.Name, e.Mode = names[nameStart:next-21], canonicalMode(filemode.FileMode(mode))
		copy(e.Hash[:], data[next-20:next])
		i = next
	}
	return entries, true
}

// treeEntryAt reads the tree entry at data[i:]: its mode, where its name
// starts and where the next entry starts (its name ends 21 bytes before);
// ok false when it is not well formed (see decodeTree).
func treeEntryAt(data []byte, i int) (mode uint64, nameStart, next int, ok bool) {
	sp := bytes.IndexByte(data[i:], ' ')
	if sp <= 0 || sp > 11 {
		return 0, 0, 0, false
	}
	for _, c := range data[i : i+sp] {
		if c < '0' || c > '7' {
			return 0, 0, 0, false
		}
		mode = mode<<3 | uint64(c-'0')
	}
	if mode > 0xffffffff {
		return 0, 0, 0, false
	}
	nameStart = i + sp + 1
	nul := bytes.IndexByte(data[nameStart:], 0)
	if nul <= 0 || nameStart+nul+1+20 > len(data) {
		return 0, 0, 0, false
	}
	return mode, nameStart, nameStart + nul + 21, true
}

// canonicalMode is the mode go-git's tree decoder gives an entry stored
// with mode m (git's own reading of tree modes).
func canonicalMode(m filemode.FileMode) filemode.FileMode {
	switch m & 0o170000 {
	case 0o040000:
		return filemode.Dir
	case 0o100000:
		if m&0o111 != 0 {
			return filemode.Executable
		}
		return filemode.Regular
	case 0o120000:
		return filemode.Symlink
	default:
		return filemode.Submodule
	}
}

// newDecodedTree is the object.Tree of id h with entries.
func newDecodedTree(h plumbing.Hash, entries []object.TreeEntry) *object.Tree {
	return &object.Tree{Hash: h, Entries: entries}
}
