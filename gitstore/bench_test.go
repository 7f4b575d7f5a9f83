package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// seedStore makes a branch holding n checkpoints spread over 10 devices.
func seedStore(b *testing.B, layout Layout, n int) (*Store, []Device) {
	b.Helper()
	s, _, devs := seedStoreOpts(b, InitOptions{Layout: layout}, n)
	return s, devs
}

// seedStoreOpts is seedStore with the branch made by Init(opt) (its Device
// set to the first device), also returning the repository directory.
func seedStoreOpts(b *testing.B, opt InitOptions, n int) (*Store, string, []Device) {
	b.Helper()
	s, dir := newStore(b)
	ctx := context.Background()
	devs := make([]Device, 10)
	for i := range devs {
		devs[i] = device(b, fmt.Sprintf("device-%02d", i), byte(i+1))
	}
	opt.Device = devs[0]
	if _, err := s.Init(ctx, opt); err != nil {
		b.Fatal(err)
	}
	per := n / len(devs)
	for _, d := range devs {
		for done := 0; done < per; done += 1000 {
			k := min(1000, per-done)
			if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(k, d.ID)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s, dir, devs
}

// BenchmarkAppend measures one checkpoint append (seal, blobs, trees on the
// changed paths, commit, locked compare-and-swap via git update-ref) on a
// branch that already holds 1k or 10k checkpoints.
func BenchmarkAppend(b *testing.B) {
	isolate(b)
	for _, layout := range []Layout{LayoutCtxV1, LayoutGhyllV1} {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/%dk", layout, n/1000), func(b *testing.B) {
				s, devs := seedStore(b, layout, n)
				ctx := context.Background()
				req := AppendRequest{RepoID: repoID, Device: devs[3], Drafts: drafts(1, "bench")}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := s.Append(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAppendFanout measures one append on a ctx-v1 branch of 10k
// checkpoints at each fan-out depth (FORMAT §2.2), and reports the bytes
// of new (loose, compressed) objects it writes: the size of the trees on
// the record's path is what the depth changes.
func BenchmarkAppendFanout(b *testing.B) {
	isolate(b)
	for _, depth := range []int{FanoutOne, FanoutTwo} {
		b.Run(fmt.Sprintf("fanout=%d/10k", depth), func(b *testing.B) {
			_, dir, devs := seedStoreOpts(b, InitOptions{Layout: LayoutCtxV1, Fanout: depth}, 10000)
			git(b, dir, "config", "ctx.packEvery", "0")
			s := reopen(b, dir)
			ctx := context.Background()
			req := AppendRequest{RepoID: repoID, Device: devs[3], Drafts: drafts(1, "bench")}
			git(b, dir, "repack", "-adq")
			before := looseBytes(b, dir)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Append(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(looseBytes(b, dir)-before)/float64(b.N), "objB/op")
		})
	}
}

// looseBytes is the size on disk of dir's loose objects.
func looseBytes(b *testing.B, dir string) int64 {
	b.Helper()
	var n int64
	objs := filepath.Join(dir, ".git", "objects")
	err := filepath.WalkDir(objs, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && p != objs && len(e.Name()) != 2:
			return filepath.SkipDir // pack/, info/
		case !e.IsDir():
			info, err := e.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkVerifyBranch measures a whole-branch verify (View.Verify, as
// `git ctx verify` runs it) of a packed ctx-v1 branch of 10k checkpoints
// over 10 devices, reporting the process's CPU time per record (cpu-ns/record); "floor" is
// crypto/ed25519 verification of as many signatures on as many goroutines
// (GOMAXPROCS), the floor.
func BenchmarkVerifyBranch(b *testing.B) {
	isolate(b)
	dir, n := packedBranch(b)
	b.Run("verify", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			s := reopen(b, dir)
			v, err := s.View()
			if err != nil {
				b.Fatal(err)
			}
			rep, err := v.Verify()
			if err != nil || !rep.OK || rep.Verified() != n {
				b.Fatalf("verify: %v, ok %v, %d verified", err, rep != nil && rep.OK, rep.Verified())
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/record")
	})
	b.Run("floor", func(b *testing.B) {
		pub, priv, _ := ed25519.GenerateKey(nil)
		msg := bytes.Repeat([]byte("0123456789abcdef"), 4)
		sig := ed25519.Sign(priv, msg)
		cpu0 := cpuTime()
		for b.Loop() {
			var wg sync.WaitGroup
			w := runtime.GOMAXPROCS(0)
			for g := range w {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < n; i += w {
						if !ed25519.Verify(pub, msg, sig) {
							panic("floor: signature does not verify")
						}
					}
				}()
			}
			wg.Wait()
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/record")
	})
}

// packedBranch returns a repository holding a packed ctx-v1 branch of 10k
// checkpoints over 10 devices, and how many it holds. GITSTORE_VERIFY_N:
// another number of checkpoints (100000 for issue 18 item 4's scale).
// GITSTORE_VERIFY_BRANCH: where the branch is kept, and reused by the next
// run (to profile what a benchmark measures alone).
func packedBranch(b *testing.B) (dir string, n int) {
	b.Helper()
	n = 10000
	if s := os.Getenv("GITSTORE_VERIFY_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir = os.Getenv("GITSTORE_VERIFY_BRANCH")
	if dir != "" && fileExists(filepath.Join(dir, ".git")) {
		return dir, n
	}
	_, built, _ := seedStoreOpts(b, InitOptions{Layout: LayoutCtxV1}, n)
	git(b, built, "repack", "-adq")
	if dir == "" {
		return built, n
	}
	if out, err := exec.Command("cp", "-a", built, dir).CombinedOutput(); err != nil {
		b.Fatalf("keep the branch: %v\n%s", err, out)
	}
	return dir, n
}

// BenchmarkMergeTreeOfPackedBranch measures the tree a first pull's merge
// commit writes (Store.editTree of every file of a fetched branch onto an
// empty tree): every tree it computes is already in the fetched pack, so
// it writes nothing; what it costs is building, hashing and looking up
// each tree (about one per record with two fan-out levels).
func BenchmarkMergeTreeOfPackedBranch(b *testing.B) {
	isolate(b)
	dir, _ := packedBranch(b)
	s := reopen(b, dir)
	v, err := s.View()
	if err != nil {
		b.Fatal(err)
	}
	changes, err := s.Diff(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	edits := make(map[string]plumbing.Hash, len(changes))
	for _, c := range changes {
		edits[c.Path] = c.Hash
	}
	loose := func() int {
		n := 0
		filepath.WalkDir(filepath.Join(dir, ".git", "objects"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && len(filepath.Base(filepath.Dir(p))) == 2 {
				n++
			}
			return nil
		})
		return n
	}
	before := loose()
	for b.Loop() {
		if h, err := s.editTree(plumbing.ZeroHash, edits); err != nil || h != v.Root {
			b.Fatalf("merge tree %s, %v; the branch's tree is %s", h, err, v.Root)
		}
	}
	if after := loose(); after != before {
		b.Fatalf("the merge tree wrote %d loose objects the pack holds", after-before)
	}
	b.ReportMetric(float64(len(edits)), "paths")
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
