// Package gitobject is the one writer of loose git objects: the memory
// branch (gitstore) and the git session store (sessions/store) both store
// their blobs, trees and commits through it, straight into the object
// database, without a git process.
//
// A loose object is "<type> <size>\0<content>", zlib-compressed, in
// objects/<first two hex digits of its id>/<the rest>; its id is the SHA-1
// (or, in a SHA-256 repository, the SHA-256) of the uncompressed bytes. The
// file is written under a temporary name ("tmp_obj_…", the prefix git's own
// prune recognises and cleans up after a crash), created read-only, and
// renamed into place: an object another process wrote meanwhile has the
// same bytes, so replacing it is harmless (git's core.createObject=rename).
// An object that exists already (loose, or where the caller's Writer.Has
// finds it: in a pack) is not rewritten. Like git by default, the
// object files are not fsynced.
package gitobject

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Type is a git object type as it appears in an object header.
type Type string

// The object types git-ctx writes.
const (
	Blob   Type = "blob"
	Tree   Type = "tree"
	Commit Type = "commit"
)

// ID is an object id (20 bytes for SHA-1, 32 for SHA-256).
type ID []byte

// String is the id in lower-case hex, as git prints it.
func (id ID) String() string { return hex.EncodeToString(id) }

// Writer writes loose objects into one object database.
type Writer struct {
	// Dir is the objects directory, <git common dir>/objects.
	Dir string
	// SHA256 says the repository uses SHA-256 object ids
	// (extensions.objectFormat=sha256).
	SHA256 bool
	// Has, when set, reports whether an object is in the repository in a
	// form this writer does not see (a pack): Write and WriteTree then do
	// not write it again. They ask it before they look for a loose copy,
	// so it should be cheap and need not look at loose objects.
	Has func(ID) bool
}

// NewHash returns the object hash of the repository (SHA-1 or SHA-256),
// for computing or checking ids.
func (w Writer) NewHash() hash.Hash {
	if w.SHA256 {
		return sha256.New()
	}
	return sha1.New()
}

// Header is the object header "<type> <size>\0".
func Header(t Type, size int64) []byte {
	return []byte(string(t) + " " + strconv.FormatInt(size, 10) + "\x00")
}

// zlibPool keeps BestSpeed compressors: a fresh zlib state per object costs
// more than writing a small object.
var zlibPool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// Write stores one object held in memory and returns its id: five system
// calls for a new object (lstat, open, write, close, rename), one when it
// exists loose, none when Has finds it.
func (w Writer) Write(t Type, content []byte) (ID, error) {
	header := Header(t, int64(len(content)))
	h := w.NewHash()
	h.Write(header)
	h.Write(content)
	id := ID(h.Sum(nil))
	// Has first: an object a fetch brought is in a pack, and asking the
	// pack index costs no system call (a merge of a first pull rewrites
	// thousands of trees the fetch brought).
	if w.Has != nil && w.Has(id) {
		return id, nil
	}
	final := w.path(id)
	if _, err := os.Lstat(final); err == nil {
		return id, nil
	}
	var buf bytes.Buffer
	zw := zlibPool.Get().(*zlib.Writer)
	zw.Reset(&buf)
	zw.Write(header)
	zw.Write(content)
	err := zw.Close()
	zlibPool.Put(zw)
	if err != nil {
		return id, fmt.Errorf("write object %s: %w", id, err)
	}
	tmp, err := createTemp(filepath.Dir(final))
	if err != nil {
		return id, fmt.Errorf("write object %s: %w", id, err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return id, fmt.Errorf("write object %s: %w", id, err)
	}
	return id, w.publish(tmp.Name(), final, id)
}

// WriteStream stores everything r yields as one object and returns its id
// and size, streaming: the content is spooled to a temporary file (the
// header holds the size, unknown until the end), then hashed and
// zlib-framed from there; memory use does not depend on the size. level is
// the zlib level (zlib.NoCompression for data that does not compress, such
// as ciphertext: git compresses again when it packs).
func (w Writer) WriteStream(t Type, r io.Reader, level int) (ID, int64, error) {
	spool, err := createTemp(w.Dir)
	if err != nil {
		return nil, 0, fmt.Errorf("write object: %w", err)
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	size, err := io.Copy(spool, r)
	if err != nil {
		return nil, 0, fmt.Errorf("write object: %w", err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("write object: %w", err)
	}
	obj, err := createTemp(w.Dir)
	if err != nil {
		return nil, 0, fmt.Errorf("write object: %w", err)
	}
	objName := obj.Name()
	id, err := w.frame(obj, t, spool, size, level)
	if cerr := obj.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(objName)
		return nil, 0, fmt.Errorf("write object: %w", err)
	}
	final := w.path(id)
	if _, err := os.Lstat(final); err == nil {
		os.Remove(objName)
		return id, size, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		os.Remove(objName)
		return nil, 0, fmt.Errorf("write object %s: %w", id, err)
	}
	return id, size, w.publish(objName, final, id)
}

// frame writes the object (header and the size bytes of src) zlib-framed
// to dst and returns its id.
func (w Writer) frame(dst io.Writer, t Type, src io.Reader, size int64, level int) (ID, error) {
	header := Header(t, size)
	h := w.NewHash()
	h.Write(header)
	zw, err := zlib.NewWriterLevel(dst, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(header); err != nil {
		return nil, err
	}
	n, err := io.Copy(io.MultiWriter(zw, h), src)
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("spool file changed size (%d, wrote %d)", n, size)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return ID(h.Sum(nil)), nil
}

// path is the file of object id.
func (w Writer) path(id ID) string {
	x := id.String()
	return filepath.Join(w.Dir, x[:2], x[2:])
}

// publish renames the complete temporary object file tmp into place.
func (w Writer) publish(tmp, final string, id ID) error {
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write object %s: %w", id, err)
	}
	return nil
}

// createTemp creates a new read-only temporary file in dir (created if
// missing), named like git's own "tmp_obj_" files.
func createTemp(dir string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		name := filepath.Join(dir, "tmp_obj_"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		switch {
		case err == nil:
			return f, nil
		case errors.Is(err, fs.ErrNotExist) && attempt < 3:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		case errors.Is(err, fs.ErrExist) && attempt < 10:
		default:
			return nil, err
		}
	}
}

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	// Mode is git's octal mode: "100644" (a file), "100755", "120000",
	// "160000", or "40000" (a tree; "040000", as ls-tree prints it, is
	// accepted).
	Mode string
	Name string
	ID   ID
}

func (e TreeEntry) isTree() bool { return e.Mode == "40000" || e.Mode == "040000" }

// WriteTree stores a tree holding entries (names unique; the caller's
// order does not matter) and returns its id. Entries are written in git's
// order: by name, a tree's name compared as if it ended in "/".
func (w Writer) WriteTree(entries []TreeEntry) (ID, error) {
	es := slices.Clone(entries)
	slices.SortFunc(es, compareTreeEntries)
	var buf bytes.Buffer
	for _, e := range es {
		buf.WriteString(strings.TrimPrefix(e.Mode, "0"))
		buf.WriteByte(' ')
		buf.WriteString(e.Name)
		buf.WriteByte(0)
		buf.Write(e.ID)
	}
	return w.Write(Tree, buf.Bytes())
}

// compareTreeEntries orders tree entries as git does: by name, bytewise, a
// tree's name compared as if it ended in "/" (without building that name).
func compareTreeEntries(a, b TreeEntry) int {
	n := min(len(a.Name), len(b.Name))
	if c := strings.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	return int(a.nameEnd(n)) - int(b.nameEnd(n))
}

// nameEnd is the byte of e's name at i, or past its end "/" for a tree and
// 0 for anything else.
func (e TreeEntry) nameEnd(i int) byte {
	switch {
	case i < len(e.Name):
		return e.Name[i]
	case e.isTree():
		return '/'
	}
	return 0
}
