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
	// An entry takes at least 24 bytes ("0 a\0" and the id).
	entries := make([]object.TreeEntry, 0, len(data)/24+1)
	names := string(data)
	for i := 0; i < len(data); {
		sp := bytes.IndexByte(data[i:], ' ')
		if sp <= 0 || sp > 11 {
			return nil, false
		}
		var mode uint64
		for _, c := range data[i : i+sp] {
			if c < '0' || c > '7' {
				return nil, false
			}
			mode = mode<<3 | uint64(c-'0')
		}
		if mode > 0xffffffff {
			return nil, false
		}
		start := i + sp + 1
		nul := bytes.IndexByte(data[start:], 0)
		if nul <= 0 || start+nul+1+20 > len(data) {
			return nil, false
		}
		e := object.TreeEntry{Name: names[start : start+nul], Mode: canonicalMode(filemode.FileMode(mode))}
		copy(e.Hash[:], data[start+nul+1:start+nul+21])
		entries = append(entries, e)
		i = start + nul + 21
	}
	return entries, true
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
