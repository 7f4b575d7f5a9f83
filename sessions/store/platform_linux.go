package store

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// changeTimeNanos is the inode change time of st.
func changeTimeNanos(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }

// renameNoReplace renames oldpath to newpath unless newpath exists
// (renameat2 with RENAME_NOREPLACE).
func renameNoReplace(oldpath, newpath string) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
}
