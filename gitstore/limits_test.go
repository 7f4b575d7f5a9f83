package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// limitBigSize is larger than any file of the branch may be (MaxBlob).
const limitBigSize = 48 << 20

// limitAllocated runs fn and returns the bytes it allocated.
func limitAllocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// limitPack writes a pack holding entries (already encoded) and indexes it
// with git index-pack.
func limitPack(t *testing.T, dir string, entries ...[]byte) {
	t.Helper()
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	for _, e := range entries {
		pack.Write(e)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	name := filepath.Join(t.TempDir(), "in.pack")
	if err := os.WriteFile(name, pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "index-pack", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(pack.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index-pack: %v\n%s", err, out)
	}
}

// limitEntry encodes one pack entry: its header, extra bytes (a delta's
// base reference) and its zlib-compressed body.
func limitEntry(kind byte, size int, extra, body []byte) []byte {
	var b bytes.Buffer
	c := kind<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		b.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b.WriteByte(c)
	b.Write(extra)
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write(body)
	zw.Close()
	return b.Bytes()
}

func limitVarint(v int) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// TestReadBlobRefusesFromHeader: a blob past the limit is refused by the
// size its header states, loose or packed, without its body being
// inflated; a small blob stored as a delta of an object larger than
// MaxBlob is refused too (applying the delta would inflate the base).
// Blobs within the limit still read.
func TestReadBlobRefusesFromHeader(t *testing.T) {
	isolate(t)
	s, dir := newStore(t)
	big := bytes.Repeat([]byte("a line of a very large key file\n"), limitBigSize/32)
	small := []byte("-----BEGIN PUBLIC KEY-----\nsmall\n")

	// Loose: written by git itself.
	write := func(data []byte) plumbing.Hash {
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return plumbing.NewHash(strings.TrimSpace(string(out)))
	}
	check := func(what string, h plumbing.Hash, limit int64, wantSize int64, wantBase bool) {
		t.Helper()
		var err error
		n := limitAllocated(func() { _, err = s.ReadBlob(h, limit) })
		var tl *TooLargeError
		if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Size != wantSize || tl.Base != wantBase {
			t.Fatalf("%s: ReadBlob = %v, want a TooLargeError of %d bytes (base %v)", what, err, wantSize, wantBase)
		}
		if n > 4<<20 {
			t.Errorf("%s: refusing allocated %d bytes", what, n)
		}
	}
	bigLoose := write(big)
	check("loose, past MaxBlob", bigLoose, 4096, int64(len(big)), false)
	mid := write(big[:2<<20])
	check("loose, within MaxBlob", mid, 4096, 2<<20, false)
	if b, err := s.ReadBlob(write(small), 4096); err != nil || !bytes.Equal(b, small) {
		t.Fatalf("small loose blob: %q, %v", b, err)
	}

	// Packed: the big blob, and a small blob stored as an offset delta of it.
	base := limitEntry(3, len(big), nil, big)
	// The delta's entry follows the base's, which starts at offset 12.
	rel := len(base)
	var ofs []byte
	ofs = append(ofs, byte(rel&0x7f))
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		ofs = append([]byte{byte(0x80 | rel&0x7f)}, ofs...)
	}
	smallDelta := make([]byte, 0, len(small)+40)
	smallDelta = append(smallDelta, small...)
	smallDelta = append(smallDelta, "delta target\n"...)
	delta := append(limitVarint(len(big)), limitVarint(len(smallDelta))...)
	delta = append(delta, byte(len(smallDelta)))
	delta = append(delta, smallDelta...)
	limitPack(t, dir, base, limitEntry(packOfsDelta, len(delta), ofs, delta))
	target := plumbing.ComputeHash(plumbing.BlobObject, smallDelta)
	git(t, dir, "cat-file", "-e", target.String()) // git can read it
	os.Remove(filepath.Join(dir, ".git", "objects", bigLoose.String()[:2], bigLoose.String()[2:]))
	s2, err := Open(s.Repo)
	if err != nil {
		t.Fatal(err)
	}
	s = s2
	check("packed, past MaxBlob", bigLoose, 4096, int64(len(big)), false)
	check("packed delta of a blob past MaxBlob", target, 4096, int64(len(big)), true)
	// Past the direct reader's budget, the probe still answers.
	s.direct.reads = directReadLimit
	check("packed, past MaxBlob, go-git reading", bigLoose, 4096, int64(len(big)), false)
	check("packed delta, go-git reading", target, 4096, int64(len(big)), true)
}
