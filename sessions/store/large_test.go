package store

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLargeObjectRSS (opt-in: STORE_LARGE_MIB=1024) creates and reads back
// an object of that many MiB in both stores, the git store with its default
// part cap, and reports throughput and peak RSS of this process and of the
// largest git child.
func TestLargeObjectRSS(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("STORE_LARGE_MIB"))
	if mib <= 0 {
		t.Skip("set STORE_LARGE_MIB to run")
	}
	size := int64(mib) << 20
	want := genSum(size, 9)
	for _, c := range dirAndGit(t, MaxBlobSize, true) {
		ctx := t.Context()
		cpu0 := cpuTime()
		start := time.Now()
		if _, err := c.s.Create(ctx, "profiles/p/snapshots/large.age", genReader(size, 9)); err != nil {
			t.Fatal(err)
		}
		mid := time.Now()
		cpu1 := cpuTime()
		if n, sum, err := readSum(ctx, c.s, "profiles/p/snapshots/large.age"); err != nil || n != size || !bytes.Equal(sum, want) {
			t.Fatalf("%s: read %d bytes: %v", c.name, n, err)
		}
		end := time.Now()
		cpu2 := cpuTime()
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
		mb := float64(size) / 1e6
		t.Logf("%s store, %d MiB: create %.1f MB/s (%.1f s CPU incl. git), get %.1f MB/s (%.1f s CPU); peak RSS self %s, largest child %d MiB so far",
			c.name, mib, mb/mid.Sub(start).Seconds(), (cpu1 - cpu0).Seconds(), mb/end.Sub(mid).Seconds(), (cpu2 - cpu1).Seconds(),
			vmHWM(), ru.Maxrss>>10)
	}
}

// vmHWM is this process's peak resident set size from /proc.
func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// cpuTime is the user+system CPU time of this process and its reaped
// children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
