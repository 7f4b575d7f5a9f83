package cache_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// benchWords are the words of bench/ctxbench's summaries.
var benchWords = strings.Fields(`auth token refresh cache session decision migrate schema index query
	router handler retry backoff timeout deadline config parser lexer build release deploy rollback
	feature flag metric trace span logger error panic recover goroutine channel mutex lock queue
	worker pool batch stream buffer encode decode json yaml proto grpc http client server tls cert`)

// benchRows makes n rows shaped as bench/ctxbench's records (20 devices,
// summaries of 6–17 words, one file, two tools), chained per device.
func benchRows(n int) []cache.Row {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	const devices = 20
	rows := make([]cache.Row, 0, n)
	parent := make([]string, devices)
	for i := 0; i < n; i++ {
		d := i % devices
		sum := sha256.Sum256([]byte(fmt.Sprint(i)))
		h := hex.EncodeToString(sum[:])
		words := make([]string, 6+r.IntN(12))
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		p := parent[d]
		if p == "" {
			p = checkpoint.ZeroHash
		}
		cp := &checkpoint.Checkpoint{Version: 1, Hash: h, ParentHash: p, DeviceID: fmt.Sprintf("bench-dev-%d", d),
			AuthorID: "bench@example.org", Timestamp: int64(1_700_000_000_000_000_000 + i), RepoRemote: "example.org/repo",
			Branch: "main", SessionID: fmt.Sprintf("s-%d-%d", d, i/devices/50), Turn: (i/devices)%50 + 1,
			ActiveModel: "claude-sonnet", Summary: strings.Join(words, " "),
			FilesTouched: []string{fmt.Sprintf("pkg/%s/%s.go", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))])},
			ToolsUsed:    []string{"Edit", "Bash"}, Signature: strings.Repeat("ab", 64)}
		parent[d] = h
		rows = append(rows, cache.Row{CP: cp, RepoID: strings.Repeat("ab", 32), Seq: i / devices, Verified: true, Rule: checkpoint.RuleSeedV1})
	}
	return rows
}

// BenchmarkRebuildRows is the SQLite side of a reindex alone: a new cache
// file filled with 10k (and 100k) rows, no branch reads, no verification;
// it reports the process's CPU per row:
//
//	go test -tags sqlite_fts5 -run '^$' -bench 'BenchmarkRebuildRows/10k' -benchtime 5x ./cache
func BenchmarkRebuildRows(b *testing.B) {
	b.Run("10k", func(b *testing.B) { benchRebuildRows(b, 10000) })
	b.Run("100k", func(b *testing.B) { benchRebuildRows(b, 100000) })
}

func benchRebuildRows(b *testing.B, n int) {
	rows := benchRows(n)
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		err := cache.Rebuild(b.Context(), dir, func(w *cache.Writer) error {
			for _, r := range rows {
				if err := w.AddCheckpoint(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N*len(rows)), "cpu-µs/row")
}

// processCPU is the user and system time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
