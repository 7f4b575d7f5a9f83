package main

import (
	"os/exec"
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

// TestRepackRunning: a process whose argv[0] is git and that has a
// "repack" argument counts as a repack running. (Its absence is not
// checked: other packages' tests run real repacks beside this one.)
func TestRepackRunning(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	// sh named "git", with "repack" as its $0: what /proc shows of `git repack`.
	cmd := &exec.Cmd{Path: sh, Args: []string{"git", "-c", "sleep 5", "repack"}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	running := repackRunning()
	cmd.Process.Kill()
	cmd.Wait()
	if !running {
		t.Error("repackRunning() = false beside a process git … repack")
	}
}
