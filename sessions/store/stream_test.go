package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// genReader yields n deterministic pseudo-random bytes without holding them.
func genReader(n int64, seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return io.LimitReader(rand.NewChaCha8(s), n)
}

// genSum is the SHA-256 of genReader(n, seed)'s bytes.
func genSum(n int64, seed byte) []byte {
	h := sha256.New()
	io.Copy(h, genReader(n, seed))
	return h.Sum(nil)
}

// readSum reads key from s to its end and returns its length and SHA-256.
func readSum(ctx context.Context, s Store, key string) (int64, []byte, error) {
	rc, _, err := s.Get(ctx, key)
	if err != nil {
		return 0, nil, err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	return n, h.Sum(nil), err
}

// namedStore is a store under test and the name its messages use.
type namedStore struct {
	name string
	s    Store
}

// dirAndGit is a directory store and a git store that writes parts of at
// most partCap bytes to a fresh bare repository (one that keeps pushed
// packs when keep is set).
func dirAndGit(t testing.TB, partCap int64, keep bool) []namedStore {
	remote, ss := gitMachines(t, 1, partCap)
	if keep {
		keepPacks(t, remote)
	}
	dir, err := OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return []namedStore{{"dir", dir}, {"git", ss[0]}}
}

// peakHeap samples the heap while f runs and returns the largest HeapAlloc
// seen above the starting one.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
				peak = ms.HeapAlloc - base
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak
}

// TestStreamingMemory: creating and reading a 16 MiB object keeps the heap
// far below the object's size in both stores (the git store split into 512
// KiB parts).
func TestStreamingMemory(t *testing.T) {
	const size = 16 << 20
	const limit = 6 << 20
	want := genSum(size, 1)
	for _, c := range dirAndGit(t, 512<<10, false) {
		name, s := c.name, c.s
		ctx := testCtx(t)
		peak := peakHeap(func() {
			if _, err := s.Create(ctx, "profiles/p/snapshots/big.age", genReader(size, 1)); err != nil {
				t.Fatal(err)
			}
			if n, sum, err := readSum(ctx, s, "profiles/p/snapshots/big.age"); err != nil || n != size || !bytes.Equal(sum, want) {
				t.Fatalf("%s: read %d bytes, %v", name, n, err)
			}
		})
		t.Logf("%s store: peak heap growth %.1f MiB for a %d MiB object", name, float64(peak)/(1<<20), size>>20)
		if peak > limit {
			t.Errorf("%s store: heap grew by %d bytes for a %d-byte object", name, peak, size)
		}
	}
}

// BenchmarkCreateGet64MiB measures Create then Get of a 64 MiB object (MB/s
// counts the object once), the git store with its default part cap against
// a bare repository on the same disk that keeps pushed packs.
func BenchmarkCreateGet64MiB(b *testing.B) {
	const size = 64 << 20
	for _, c := range dirAndGit(b, MaxBlobSize, true) {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(size)
			cpu0 := cpuTime()
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				key := "profiles/p/snapshots/" + c.name + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + ".age"
				if _, err := c.s.Create(ctx, key, genReader(size, byte(i))); err != nil {
					b.Fatal(err)
				}
				rc, _, err := c.s.Get(ctx, key)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, rc); err != nil || n != size {
					b.Fatal(n, err)
				}
				rc.Close()
			}
			// CPU time of this process and its git children: a figure that
			// survives a busy machine better than MB/s.
			cpu := (cpuTime() - cpu0).Seconds() / float64(n)
			b.ReportMetric(cpu, "cpu-s/op")
			b.ReportMetric(float64(size)/1e6/cpu, "MB/cpu-s")
		})
	}
}
