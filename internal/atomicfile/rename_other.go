//go:build !linux

package atomicfile

import "golang.org/x/sys/unix"

// renameNoReplace is not available here: PublishNew reports ErrUnsupported
// when hard links are not supported either.
func renameNoReplace(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.ENOTSUP
}
