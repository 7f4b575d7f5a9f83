package atomicfile

import "golang.org/x/sys/unix"

// renameNoReplace renames oldpath (in olddirfd) to newpath (in newdirfd)
// unless newpath exists (renameat2 with RENAME_NOREPLACE).
func renameNoReplace(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, unix.RENAME_NOREPLACE)
}
