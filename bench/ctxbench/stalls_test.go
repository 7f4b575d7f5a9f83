package main

import (
	"testing"
	"time"
)

// TestSlowestCommits: the slowest k timings, slowest first, each with its
// 1-based position in the series and what ran beside it.
func TestSlowestCommits(t *testing.T) {
	ds := []time.Duration{10 * time.Millisecond, 566 * time.Millisecond, 20 * time.Millisecond, 90 * time.Millisecond}
	beside := []commitSurroundings{{}, {repack: true, iowait: 3}, {}, {iowait: 1}}
	got := slowestCommits(ds, beside, 2)
	want := "566.0 ms (commit 2, beside a repack, I/O wait 3 ticks), 90.0 ms (commit 4, no repack beside it, I/O wait 1 ticks)"
	if got != want {
		t.Errorf("slowestCommits = %q, want %q", got, want)
	}
	if got := slowestCommits(ds[:1], beside[:1], 3); got != "10.0 ms (commit 1, no repack beside it, I/O wait 0 ticks)" {
		t.Errorf("slowestCommits of one = %q", got)
	}
}
