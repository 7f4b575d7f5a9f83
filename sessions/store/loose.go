package store

import (
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// writeBlobFrom stores everything r yields as one loose blob in the
// repository's object database, streaming: the content is spooled to a temp
// file (a loose object's header holds the size, unknown until the end), then
// hashed and zlib-framed from there into the object file. Memory use does
// not depend on the size. It returns the blob id, the size and the SHA-256 of
// the content.
//
// The zlib stream uses stored (uncompressed) blocks: session objects are age
// ciphertext, which does not compress; git reads any valid zlib stream and
// compresses again when it packs.
func (g *gitStore) writeBlobFrom(r io.Reader) (id string, size int64, sum string, err error) {
	if err := os.MkdirAll(g.objectsDir, 0o755); err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	spool, err := os.CreateTemp(g.objectsDir, "tmp_ctx_spool_")
	if err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(spool, h), r)
	if err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	obj, err := os.CreateTemp(g.objectsDir, "tmp_ctx_obj_")
	if err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	objName := obj.Name()
	defer os.Remove(objName)
	header := "blob " + strconv.FormatInt(size, 10) + "\x00"
	gh := g.newObjectHash()
	io.WriteString(gh, header)
	zw, _ := zlib.NewWriterLevel(obj, zlib.NoCompression)
	_, err = io.WriteString(zw, header)
	if err == nil {
		var n int64
		n, err = io.Copy(io.MultiWriter(zw, gh), spool)
		if err == nil && n != size {
			err = fmt.Errorf("spool file changed size (%d, wrote %d)", n, size)
		}
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := obj.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	id = hex.EncodeToString(gh.Sum(nil))
	dir := filepath.Join(g.objectsDir, id[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	_ = os.Chmod(objName, 0o444)
	// link(2) fails when the object exists already (same id, same content).
	if err := os.Link(objName, filepath.Join(dir, id[2:])); err != nil && !errors.Is(err, fs.ErrExist) {
		if !isUnsupported(err) {
			return "", 0, "", fmt.Errorf("write blob %s: %w", id, err)
		}
		if err := os.Rename(objName, filepath.Join(dir, id[2:])); err != nil {
			return "", 0, "", fmt.Errorf("write blob %s: %w", id, err)
		}
	}
	return id, size, sum, nil
}
