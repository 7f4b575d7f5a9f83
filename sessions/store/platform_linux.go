package store

import "syscall"

// changeTimeNanos is the inode change time of st.
func changeTimeNanos(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }
