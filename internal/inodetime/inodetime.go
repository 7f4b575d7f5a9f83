// Package inodetime reads the inode change time (ctime) from a file's stat
// data, which package syscall spells differently on each platform. A
// file's ctime changes with its contents and with any change to its inode,
// and unlike its mtime it cannot be set back, so a stat-data comparison
// that includes it notices a file rewritten with its old size and mtime.
package inodetime

import (
	"io/fs"
	"syscall"
)

// Nanos is fi's inode change time in nanoseconds since the Unix epoch, and
// false when fi carries no syscall.Stat_t.
func Nanos(fi fs.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return ofStat(st), true
}
