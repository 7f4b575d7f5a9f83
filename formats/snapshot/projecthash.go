package snapshot

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
)

// ProjectHash returns lean-ctx's hash_project_root: Rust's std DefaultHasher
// (SipHash-1-3 with keys 0, 0) fed the bytes of root and a 0xFF byte, then,
// when identity is non-nil, the bytes of *identity and a 0xFF byte; the
// 64-bit result as 16 lowercase hex digits. It names the project's snapshot
// directory and fills project.root_hash.
//
// root is hashed as given: pass it through NormalizeRoot (after resolving
// symlinks of an existing absolute path) first. The values hold for rustc
// 1.95; Rust does not promise DefaultHasher is stable across releases.
func ProjectHash(root string, identity *string) string {
	var h sip13
	h.writeStr(root)
	if identity != nil {
		h.writeStr(*identity)
	}
	s := strconv.FormatUint(h.sum(), 16)
	return strings.Repeat("0", 16-len(s)) + s
}

// NormalizeRoot applies the textual steps of lean-ctx's project root
// normalisation: '\' becomes '/', runs of '/' collapse to one (a leading
// "//" of a UNC path is kept), and a trailing '/' is dropped unless the path
// is a root ("/" or a drive root such as "C:/"). lean-ctx also canonicalises
// absolute paths that exist (resolving symlinks); that needs the file system
// and is left to the caller. The edge cases ("///x", UNC roots) follow the
// reference's description and are unverified against lean-ctx.
func NormalizeRoot(root string) string {
	s := strings.ReplaceAll(root, `\`, "/")
	prefix := ""
	if strings.HasPrefix(s, "//") {
		prefix, s = "//", s[2:]
	}
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	s = prefix + s
	if len(s) > 1 && strings.HasSuffix(s, "/") && !isDriveRoot(s) && s != "//" {
		s = s[:len(s)-1]
	}
	return s
}

func isDriveRoot(s string) bool {
	return len(s) == 3 && s[1] == ':' && s[2] == '/' &&
		(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// sip13 is a streaming SipHash-1-3 with keys (0, 0), as Rust's DefaultHasher.
type sip13 struct {
	v0, v1, v2, v3 uint64
	tail           [8]byte
	ntail          int
	length         uint64
	started        bool
}

func (h *sip13) init() {
	// Keys are (0, 0), so the key XORs vanish.
	h.v0 = 0x736f6d6570736575
	h.v1 = 0x646f72616e646f6d
	h.v2 = 0x6c7967656e657261
	h.v3 = 0x7465646279746573
	h.started = true
}

func (h *sip13) round() {
	h.v0 += h.v1
	h.v1 = bits.RotateLeft64(h.v1, 13)
	h.v1 ^= h.v0
	h.v0 = bits.RotateLeft64(h.v0, 32)
	h.v2 += h.v3
	h.v3 = bits.RotateLeft64(h.v3, 16)
	h.v3 ^= h.v2
	h.v0 += h.v3
	h.v3 = bits.RotateLeft64(h.v3, 21)
	h.v3 ^= h.v0
	h.v2 += h.v1
	h.v1 = bits.RotateLeft64(h.v1, 17)
	h.v1 ^= h.v2
	h.v2 = bits.RotateLeft64(h.v2, 32)
}

func (h *sip13) block(m uint64) {
	h.v3 ^= m
	h.round() // c = 1
	h.v0 ^= m
}

func (h *sip13) write(p []byte) {
	if !h.started {
		h.init()
	}
	h.length += uint64(len(p))
	for _, b := range p {
		h.tail[h.ntail] = b
		h.ntail++
		if h.ntail == 8 {
			h.block(binary.LittleEndian.Uint64(h.tail[:]))
			h.ntail = 0
		}
	}
}

// writeStr is Rust's Hasher::write_str: the bytes, then 0xFF.
func (h *sip13) writeStr(s string) {
	h.write([]byte(s))
	h.write([]byte{0xff})
}

func (h *sip13) sum() uint64 {
	if !h.started {
		h.init()
	}
	last := h.length << 56
	for i := 0; i < h.ntail; i++ {
		last |= uint64(h.tail[i]) << (8 * i)
	}
	h.block(last)
	h.v2 ^= 0xff
	h.round() // d = 3
	h.round()
	h.round()
	return h.v0 ^ h.v1 ^ h.v2 ^ h.v3
}
