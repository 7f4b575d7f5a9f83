package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeIndex writes a version-2 pack index naming ids (sorted here), the
// i-th at offset 12+i, and an empty pack beside it, and opens it.
func writeIndex(t *testing.T, ids []plumbing.Hash) *packIndex {
	t.Helper()
	slices.SortFunc(ids, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, id := range ids {
		for i := int(id[0]); i < 256; i++ {
			fan[i]++
		}
	}
	binary.Write(&b, binary.BigEndian, fan)
	for _, id := range ids {
		b.Write(id[:])
	}
	b.Write(make([]byte, 4*len(ids))) // CRCs
	for i := range ids {
		binary.Write(&b, binary.BigEndian, uint32(12+i))
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "pack-x.idx")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack-x.pack"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := openPackIndex(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.unmap(); p.idx.Close(); p.pack.Close() })
	return p
}

// TestFindEverySpread: find gives every named id its offset and names no
// other id, for ids spread as SHA-1 spreads them and for spreads that
// defeat interpolation (equal 8-byte keys, keys bunched at one end of a
// bucket, a bucket holding everything), with the index mapped and read.
func TestFindEverySpread(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(id *plumbing.Hash) {
		for i := range id {
			id[i] = byte(r.Uint32())
		}
	}
	spreads := map[string]func(i int) plumbing.Hash{
		"sha1": func(i int) plumbing.Hash {
			return plumbing.Hash(sha1.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
		},
		"same key": func(i int) plumbing.Hash {
			var id plumbing.Hash
			random(&id)
			id[0] = 0x42
			copy(id[1:9], "samekey!")
			return id
		},
		"bunched low": func(i int) plumbing.Hash {
			var id plumbing.Hash
			random(&id)
			id[0], id[1], id[2] = 0x10, 0, 0
			if i%50 == 0 {
				id[1] = 0xff // a few at the top keep the range wide
			}
			return id
		},
		"geometric": func(i int) plumbing.Hash {
			var id plumbing.Hash
			random(&id)
			id[0] = 0xff
			binary.BigEndian.PutUint64(id[1:9], uint64(1)<<(i%64)+uint64(i))
			return id
		},
	}
	for name, spread := range spreads {
		t.Run(name, func(t *testing.T) {
			seen := map[plumbing.Hash]bool{}
			var ids []plumbing.Hash
			for i := 0; len(ids) < 3000; i++ {
				if id := spread(i); !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			p := writeIndex(t, ids)
			for _, mapped := range []bool{true, false} {
				if !mapped {
					p.unmap()
				} else if p.mapped == nil {
					t.Fatal("the index was not mapped")
				}
				for i, id := range ids { // sorted by writeIndex
					if off, ok := p.find(id); !ok || off != int64(12+i) {
						t.Fatalf("mapped %v: find(%s) = %d, %v; want %d", mapped, id, off, ok, 12+i)
					}
					miss := id
					miss[19] ^= 1
					if _, ok := p.find(miss); ok && !seen[miss] {
						t.Fatalf("mapped %v: find(%s) found an id the index does not name", mapped, miss)
					}
				}
			}
		})
	}
}

// TestInterpolateBounds: the guess stays inside [lo, hi) at the extremes.
func TestInterpolateBounds(t *testing.T) {
	max := ^uint64(0)
	for _, c := range []struct {
		lo, hi        uint32
		key, kLo, kHi uint64
		want          uint32
	}{
		{0, 10, 0, 0, max, 0},
		{0, 10, max, 0, max, 9},
		{0, 10, max - 1, 0, max, 9},
		{0, 10, max / 2, 0, max, 4},
		{5, 6, 7, 3, 9, 5},
		{0, 1 << 31, max - 1, 0, max, 1<<31 - 1},
		{3, 9, 5, 5, 5, 3}, // empty key range
		{3, 9, 4, 5, 9, 3}, // key below the range
		{3, 9, 10, 5, 9, 8},
	} {
		if got := interpolate(c.lo, c.hi, c.key, c.kLo, c.kHi); got != c.want {
			t.Errorf("interpolate(%d, %d, %d, %d, %d) = %d, want %d", c.lo, c.hi, c.key, c.kLo, c.kHi, got, c.want)
		}
	}
}
