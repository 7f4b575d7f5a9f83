package store

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// changeTimeNanos is the inode change time of st.
func changeTimeNanos(st *syscall.Stat_t) int64 { return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec }

// renameNoReplace is not available here: the caller falls back to a
// check-and-rename under the key's lock.
func renameNoReplace(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.ENOTSUP
}
