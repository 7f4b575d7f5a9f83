package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// harness gives a conformance test two handles on one fresh store ("two
// machines" for the git store, two opens of one directory for the directory
// store).
type harness struct {
	open func(t *testing.T) (a, b Store)
	// parts reports how many parts the object at key is stored in (0 = the
	// store does not split).
	parts func(t *testing.T, s Store, key string) int
	// splitCap is the part size the store was opened with (0 = no splitting).
	splitCap int64
	// parallel runs the subtests in parallel.
	parallel bool
	// writers is the number of concurrent writers in the concurrency tests.
	writers int
}

// testCtx bounds one store operation against a hang, not for speed: under
// -race on a loaded 2-core machine a git fetch of the git store took over
// 30 s, so the bound is generous.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustGet(t *testing.T, s Store, key string) ([]byte, Version) {
	t.Helper()
	rc, v, err := s.Get(testCtx(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if v == "" {
		t.Fatalf("get %s: empty version", key)
	}
	return b, v
}

func runConformance(t *testing.T, h harness) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, harness)
	}{
		{"Basic", conformBasic},
		{"BadKeys", conformBadKeys},
		{"MultiPart", conformMultiPart},
		{"ConcurrentCreate", conformConcurrentCreate},
		{"ConcurrentUpdate", conformConcurrentUpdate},
	} {
		t.Run(c.name, func(t *testing.T) {
			if h.parallel {
				t.Parallel()
			}
			c.f(t, h)
		})
	}
}

func conformBasic(t *testing.T, h harness) {
	ctx := testCtx(t)
	a, b := h.open(t)
	conformBasicAbsent(t, ctx, a, conformManifest)
	v1 := conformBasicCreate(t, ctx, a, b, conformManifest, conformSnapshot)
	conformBasicUpdate(t, ctx, a, b, conformManifest, v1)
	conformBasicList(t, ctx, a, b, conformManifest, conformSnapshot)
	// A key below an object is not a valid place for another object.
	if _, err := a.Create(ctx, conformManifest+"/x", bytes.NewReader([]byte("x"))); err == nil {
		t.Fatal("create below an object succeeded")
	}
	if a.Describe() == "" {
		t.Fatal("empty description")
	}
}

// The keys conformBasic works with.
const (
	conformManifest = "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/manifest.age"
	conformSnapshot = "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/snapshots/7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6.age"
)

// conformBasicAbsent: an empty store has no man, lists nothing and refuses
// to update man.
func conformBasicAbsent(t *testing.T, ctx context.Context, a Store, man string) {
	t.Helper()
	if _, _, err := a.Get(ctx, man); !errors.Is(err, ErrNoObject) {
		t.Fatalf("get absent: %v, want ErrNoObject", err)
	}
	if keys, err := a.List(ctx, "profiles/"); err != nil || len(keys) != 0 {
		t.Fatalf("list empty: %v %v", keys, err)
	}
	if _, err := a.Update(ctx, man, bytes.NewReader([]byte("x")), "sha256:00"); !errors.Is(err, ErrVersionMismatch) || !errors.Is(err, ErrNoObject) {
		t.Fatalf("update absent: %v", err)
	}
}

// conformBasicCreate: man is created once (a second create, from the other
// client, is refused) and read back; snap is created empty. Returns man's
// version.
func conformBasicCreate(t *testing.T, ctx context.Context, a, b Store, man, snap string) Version {
	t.Helper()
	v1, err := a.Create(ctx, man, bytes.NewReader([]byte("manifest one")))
	if err != nil || v1 == "" {
		t.Fatalf("create: %q %v", v1, err)
	}
	if _, err := b.Create(ctx, man, bytes.NewReader([]byte("other"))); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	got, gv := mustGet(t, b, man)
	if string(got) != "manifest one" || gv != v1 {
		t.Fatalf("get: %q %q, want %q %q", got, gv, "manifest one", v1)
	}
	if _, err := a.Create(ctx, snap, bytes.NewReader(nil)); err != nil {
		t.Fatalf("create empty snapshot: %v", err)
	}
	if got, _ := mustGet(t, a, snap); len(got) != 0 {
		t.Fatalf("empty object read back as %d bytes", len(got))
	}
	return v1
}

// conformBasicUpdate: an update from the current version succeeds; stale
// or empty versions are refused.
func conformBasicUpdate(t *testing.T, ctx context.Context, a, b Store, man string, v1 Version) {
	t.Helper()
	v2, err := b.Update(ctx, man, bytes.NewReader([]byte("manifest two")), v1)
	if err != nil || v2 == "" || v2 == v1 {
		t.Fatalf("update: %q %v (v1 %q)", v2, err, v1)
	}
	if _, err := a.Update(ctx, man, bytes.NewReader([]byte("stale")), v1); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("stale update: %v, want ErrVersionMismatch", err)
	}
	if _, err := a.Update(ctx, man, bytes.NewReader([]byte("stale")), ""); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("update with empty version: %v, want ErrVersionMismatch", err)
	}
	got, gv := mustGet(t, a, man)
	if string(got) != "manifest two" || gv != v2 {
		t.Fatalf("after update: %q %q", got, gv)
	}
}

// conformBasicList: listing by prefix, all, and a missing prefix.
func conformBasicList(t *testing.T, ctx context.Context, a, b Store, man, snap string) {
	t.Helper()
	keys, err := a.List(ctx, "profiles/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{man, snap}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("list: %q, want %q", keys, want)
	}
	keys, err = b.List(ctx, "profiles/0b6a3a5e-6f3b-4a57-9d2c-1f0e0c1d2e3f/snapshots/")
	if err != nil || len(keys) != 1 || keys[0] != snap {
		t.Fatalf("list snapshots: %q %v", keys, err)
	}
	if keys, err := b.List(ctx, ""); err != nil || len(keys) != 2 {
		t.Fatalf("list all: %q %v", keys, err)
	}
	if keys, err := b.List(ctx, "nothing/"); err != nil || len(keys) != 0 {
		t.Fatalf("list missing prefix: %q %v", keys, err)
	}
}

func conformBadKeys(t *testing.T, h harness) {
	ctx := testCtx(t)
	a, _ := h.open(t)
	for _, k := range []string{"", "/abs", "a/../b", "..", "a//b", "a/", "a\\b", "a/./b", "a\x00b", "a\nb", "a\x7fb", ".hidden", "a/.ctx-locks"} {
		if _, _, err := a.Get(ctx, k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("get %q: %v, want ErrInvalidKey", k, err)
		}
		if _, err := a.Create(ctx, k, bytes.NewReader([]byte("x"))); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("create %q: %v, want ErrInvalidKey", k, err)
		}
		if _, err := a.Update(ctx, k, bytes.NewReader([]byte("x")), "v"); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("update %q: %v, want ErrInvalidKey", k, err)
		}
	}
	for _, p := range []string{"/", "a", "../", "a//", "/a/"} {
		if _, err := a.List(ctx, p); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("list %q: %v, want ErrInvalidKey", p, err)
		}
	}
}

// patterned returns n deterministic pseudo-random bytes.
func patterned(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func conformMultiPart(t *testing.T, h harness) {
	ctx := testCtx(t)
	a, b := h.open(t)
	c := h.splitCap
	if c == 0 {
		c = 1024
	}
	for i, n := range []int64{c, c + 1, 3*c + 17} {
		key := fmt.Sprintf("profiles/p/snapshots/s%d.age", i)
		data := patterned(int(n), uint64(i+1))
		v, err := a.Create(ctx, key, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("create %d bytes: %v", n, err)
		}
		got, gv := mustGet(t, b, key)
		if !bytes.Equal(got, data) || gv != v {
			t.Fatalf("%d bytes: round trip differs (got %d bytes, version %q vs %q)", n, len(got), gv, v)
		}
		if h.parts != nil {
			want := int((n + c - 1) / c)
			if n <= c {
				want = 1
			}
			if p := h.parts(t, b, key); p != want {
				t.Fatalf("%d bytes: %d parts, want %d", n, p, want)
			}
		}
	}
	// Update from a single blob to a split object and back.
	key := "profiles/p/manifest.age"
	v, err := a.Create(ctx, key, bytes.NewReader([]byte("small")))
	if err != nil {
		t.Fatal(err)
	}
	big := patterned(int(2*c+5), 99)
	if v, err = b.Update(ctx, key, bytes.NewReader(big), v); err != nil {
		t.Fatal(err)
	}
	if got, gv := mustGet(t, a, key); !bytes.Equal(got, big) || gv != v {
		t.Fatal("update to split object: round trip differs")
	}
	if v, err = a.Update(ctx, key, bytes.NewReader([]byte("small again")), v); err != nil {
		t.Fatal(err)
	}
	if got, gv := mustGet(t, b, key); string(got) != "small again" || gv != v {
		t.Fatal("update back to one blob: round trip differs")
	}
	keys, err := b.List(ctx, "profiles/p/")
	if err != nil || len(keys) != 4 {
		t.Fatalf("list: %q %v", keys, err)
	}
}

// concurrently runs fn(i, s) for i in [0, n) at once, s alternating
// between the two stores a and b, and waits for all.
func concurrently(n int, a, b Store, fn func(i int, s Store)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			fn(i, s)
		}()
	}
	wg.Wait()
}

func conformConcurrentCreate(t *testing.T, h harness) {
	ctx := testCtx(t)
	a, b := h.open(t)
	n := h.writers
	errs := make([]error, n)
	concurrently(n, a, b, func(i int, s Store) {
		_, errs[i] = s.Create(ctx, fmt.Sprintf("profiles/p/snapshots/c%d.age", i), bytes.NewReader([]byte(fmt.Sprint("body ", i))))
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	keys, err := a.List(ctx, "profiles/p/snapshots/")
	if err != nil || len(keys) != n {
		t.Fatalf("list: %q %v", keys, err)
	}
	for i := range n {
		got, _ := mustGet(t, b, fmt.Sprintf("profiles/p/snapshots/c%d.age", i))
		if string(got) != fmt.Sprint("body ", i) {
			t.Fatalf("object %d: %q", i, got)
		}
	}
	// The same key from everyone: exactly one wins.
	var wins, exists int
	var mu sync.Mutex
	concurrently(n, a, b, func(i int, s Store) {
		_, err := s.Create(ctx, "profiles/p/same.age", bytes.NewReader([]byte(fmt.Sprint("same ", i))))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			wins++
		case errors.Is(err, ErrExists):
			exists++
		default:
			t.Errorf("create same %d: %v", i, err)
		}
	})
	if wins != 1 || exists != n-1 {
		t.Fatalf("same key: %d wins, %d ErrExists", wins, exists)
	}
}

func conformConcurrentUpdate(t *testing.T, h harness) {
	ctx := testCtx(t)
	a, b := h.open(t)
	key := "profiles/p/manifest.age"
	v0, err := a.Create(ctx, key, bytes.NewReader([]byte("base")))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var winners []int
	var winV Version
	concurrently(h.writers, a, b, func(i int, s Store) {
		v, err := s.Update(ctx, key, bytes.NewReader([]byte(fmt.Sprint("update ", i))), v0)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			winners = append(winners, i)
			winV = v
		case errors.Is(err, ErrVersionMismatch):
		default:
			t.Errorf("update %d: %v", i, err)
		}
	})
	if len(winners) != 1 {
		t.Fatalf("winners: %v, want exactly one", winners)
	}
	got, gv := mustGet(t, b, key)
	if string(got) != fmt.Sprint("update ", winners[0]) || gv != winV {
		t.Fatalf("after concurrent updates: %q %q", got, gv)
	}
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s) }
