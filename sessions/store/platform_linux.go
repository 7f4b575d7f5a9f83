package store

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// changeTimeNanos is the inode change time of st.
func changeTimeNanos(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }

// renameNoReplace renames oldpath (in the directory olddirfd) to newpath (in
// newdirfd) unless newpath exists (renameat2 with RENAME_NOREPLACE).
func renameNoReplace(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, unix.RENAME_NOREPLACE)
}
