package gitstore

import (
	"context"
	"fmt"
	"testing"
)

// seedStore makes a branch holding n checkpoints spread over 10 devices.
func seedStore(b *testing.B, layout Layout, n int) (*Store, []Device) {
	b.Helper()
	s, _ := newStore(b)
	ctx := context.Background()
	devs := make([]Device, 10)
	for i := range devs {
		devs[i] = device(b, fmt.Sprintf("device-%02d", i), byte(i+1))
	}
	if _, err := s.Init(ctx, InitOptions{Layout: layout, Device: devs[0]}); err != nil {
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
	return s, devs
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
