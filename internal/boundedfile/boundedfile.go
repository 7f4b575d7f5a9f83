// Package boundedfile is the one way git-ctx reads a whole file a user
// names (an import, a package, a --from source): it must be a regular file
// and is refused when over its size limit before any byte is read, and
// again when it grows over the limit while being read.
//
// It reads only; the error kind of a refusal is the caller's (the
// capability's input error), so the message names the file and the limit
// and errors.Is finds the caller's kind.
package boundedfile

import (
	"fmt"
	"io"
	"os"
)

// Read returns the content of the regular file at path. A file that is not
// regular, or that is (or grows while read to) more than max bytes, is an
// error wrapping refused; nothing of an oversized file is read.
func Read(path string, max int64, refused error) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", refused, path)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%w: %s is %d bytes (limit %d)", refused, path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s grew over %d bytes while read", refused, path, max)
	}
	return data, nil
}
