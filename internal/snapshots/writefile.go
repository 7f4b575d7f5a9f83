package snapshots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-ctx/git-ctx/internal/workspace"
)

// WriteFileAtomic writes data to path (mode 0600) through a fsynced temporary
// file in the same directory, so path is never half-written. With replace it
// takes the place of whatever path was; without, an existing path (or one
// created meanwhile) is left untouched and the error wraps workspace.ErrOutputExists.
func WriteFileAtomic(path string, data []byte, replace bool) error {
	return writeAtomic(path, data, replace)
}

// writeAtomic writes data to path (mode 0600) through a temporary file in
// the same directory (created if missing), fsynced before it is published,
// so path is never half-written. With replace, a rename puts it in place of
// whatever path was (a symbolic link is replaced, never written through).
// Without, path must not exist: link(2) publishes the file only while the
// name is free, so a file created meanwhile is never clobbered, and an
// existing path is an error wrapping workspace.ErrOutputExists that names it. Where
// hard links are not supported the name is claimed with O_EXCL and the
// complete file renamed over the claim.
func writeAtomic(path string, data []byte, replace bool) error {
	if !replace {
		if _, err := os.Lstat(path); err == nil {
			return outputExists(path) // early answer; the publish below decides
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".git-ctx-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp, path)
	} else {
		err = publishNew(tmp, path)
	}
	if err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil { // make the new name durable
		d.Sync()
		d.Close()
	}
	return nil
}

// publishNew makes the complete file tmp appear at path only if path does
// not exist.
func publishNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return outputExists(path)
	}
	// No hard links here (some network and FAT file systems): claim the
	// name, then rename the complete file over our own claim.
	claim, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if cerr != nil {
		if errors.Is(cerr, fs.ErrExist) {
			return outputExists(path)
		}
		return err
	}
	claim.Close()
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

func outputExists(path string) error {
	return workspace.Tagged(fmt.Errorf("%s already exists: not replaced (--force replaces it)", path), workspace.ErrOutputExists)
}
