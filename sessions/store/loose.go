package store

import (
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/git-ctx/git-ctx/internal/gitobject"
)

// writeBlobFrom stores everything r yields as one loose blob in the
// repository's object database, streaming (internal/gitobject, the writer
// the memory branch uses too): memory use does not depend on the size. It
// returns the blob id, the size and the SHA-256 of the content.
//
// The zlib stream uses stored (uncompressed) blocks: session objects are age
// ciphertext, which does not compress; git reads any valid zlib stream and
// compresses again when it packs.
func (g *gitStore) writeBlobFrom(r io.Reader) (id string, size int64, sum string, err error) {
	h := sha256.New()
	oid, size, err := g.objects.WriteStream(gitobject.Blob, io.TeeReader(r, h), zlib.NoCompression)
	if err != nil {
		return "", 0, "", fmt.Errorf("write blob: %w", err)
	}
	return oid.String(), size, hex.EncodeToString(h.Sum(nil)), nil
}
