// Package atomicfile is the one way git-ctx writes a file that others may
// read at any moment: a reader sees the old state (no file, or the previous
// file) or the complete new file, never a part of it.
//
// The content goes to a temporary file beside the target (same directory,
// so the publish is a rename or link within one file system), created
// exclusively with the requested permissions (set exactly, whatever the
// umask), written, fsynced and only then published:
//
//   - without Replace, only while the name is free: link(2), which fails when
//     the name exists (a symbolic link included), else renameat2 with
//     RENAME_NOREPLACE where hard links are not supported; an existing
//     target is ErrExists and is left untouched;
//   - with Replace, by rename(2), which replaces the directory entry (a
//     symbolic link is replaced, never written through).
//
// The directory is fsynced after the publish so the new name is durable.
// Every error path removes the temporary file. Temporary files are named
// ".git-ctx-<random>.tmp" (IsTemp), hidden, and apart from every name
// git-ctx publishes.
//
// Write and WriteFile take a path. Dir and Temp are the same steps on an
// open directory, for callers that resolve every name relative to a
// directory they hold open (the directory session store) or that check the
// complete file before publishing it (a session restore).
package atomicfile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ctx/git-ctx/internal/fault"
	"golang.org/x/sys/unix"
)

// ErrExists means the target name was taken and the write was not asked to
// replace it: nothing was written.
var ErrExists = fault.Sentinel(fault.Refused, "already exists")

// ErrUnsupported means the file system supports neither hard links nor a
// rename that refuses to replace: Temp.PublishNew cannot publish only while
// the name is free. Write falls back to claiming the name (see Write); a
// caller of PublishNew decides for itself.
var ErrUnsupported = fault.Sentinel(fault.Failed, "no-replace publish not supported by the file system")

// Options says how a file is written.
type Options struct {
	// Perm is the permission bits of the new file, set exactly (the umask
	// does not apply); 0 means 0600.
	Perm fs.FileMode
	// Replace publishes over an existing file (rename); without it an
	// existing target is ErrExists.
	Replace bool
	// MkdirPerm, when non-zero, creates missing parent directories with
	// these permissions (before the umask, as os.MkdirAll).
	MkdirPerm fs.FileMode
	// NoSync skips the fsyncs of the file and the directory: for caches and
	// counters whose loss on a power failure is harmless, where the
	// publish must still never expose a half-written file.
	NoSync bool
}

// WriteFile writes data to path (see Write).
func WriteFile(path string, data []byte, opt Options) error {
	return Write(path, bytes.NewReader(data), opt)
}

// Write writes everything r yields to path, atomically (see the package
// documentation). Without opt.Replace an existing path is an error wrapping
// ErrExists; where the file system has neither hard links nor a no-replace
// rename, the name is claimed with an exclusive create and the complete
// file renamed over that claim (a reader may then briefly see an empty
// file, never a partial one).
func Write(path string, r io.Reader, opt Options) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if !opt.Replace {
		if _, err := os.Lstat(path); err == nil {
			return existsError(path) // early answer; the publish decides
		}
	}
	if opt.MkdirPerm != 0 {
		if err := os.MkdirAll(dir, opt.MkdirPerm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	d, err := OpenDir(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.Close()
	t, err := d.CreateTemp(opt.Perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer t.Close()
	if _, err := io.Copy(t.File, r); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !opt.NoSync {
		if err := t.File.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := t.publish(base, opt.Replace); err != nil {
		if errors.Is(err, ErrExists) {
			return existsError(path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !opt.NoSync {
		_ = d.Sync() // the file is in place; a failed directory sync is not a failed write
	}
	return nil
}

func existsError(path string) error {
	return fmt.Errorf("%s: %w", path, ErrExists)
}

// IsTemp reports whether name (a base name) is one of this package's
// temporary files.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, tempPrefix) && strings.HasSuffix(name, tempSuffix)
}

// Temps returns the base names of this package's temporary files in dir
// (IsTemp), in directory order: what an interrupted write left behind.
func Temps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

const (
	tempPrefix = ".git-ctx-"
	tempSuffix = ".tmp"
)

// Dir is an open directory in which files are written atomically; every
// name is resolved relative to it (no path is looked up again between the
// temporary file and its publish).
type Dir struct {
	fd    int
	path  string
	owned bool
}

// OpenDir opens the directory path.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path, owned: true}, nil
}

// DirFD uses the open directory fd (named path in errors), which the caller
// keeps and closes; Close on the result does not close it.
func DirFD(fd int, path string) *Dir {
	return &Dir{fd: fd, path: path}
}

// Close closes a directory opened by OpenDir.
func (d *Dir) Close() error {
	if !d.owned || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Sync fsyncs the directory, making a publish in it durable.
func (d *Dir) Sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return &os.PathError{Op: "sync", Path: d.path, Err: err}
	}
	return nil
}

// Temp is a temporary file in a Dir, not yet published. File is open for
// writing (and reading); the caller writes it and syncs it before a
// publish. Close closes File and removes the temporary name if it is still
// there, so `defer t.Close()` cleans up on every path.
type Temp struct {
	File *os.File
	dir  *Dir
	name string
	gone bool // the temporary name no longer exists
	// ownDir: the Temp opened dir itself (CreateTempIn) and closes it.
	ownDir bool
}

// CreateTempIn creates a new temporary file in the directory dir (see
// Dir.CreateTemp), holding dir open until Close.
func CreateTempIn(dir string, perm fs.FileMode) (*Temp, error) {
	d, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	t, err := d.CreateTemp(perm)
	if err != nil {
		d.Close()
		return nil, err
	}
	t.ownDir = true
	return t, nil
}

// CreateTemp creates a new temporary file in d, exclusively and without
// following a link, with permissions perm set exactly (0: 0600).
func (d *Dir) CreateTemp(perm fs.FileMode) (*Temp, error) {
	if perm == 0 {
		perm = 0o600
	}
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		name := tempPrefix + hex.EncodeToString(rnd[:]) + tempSuffix
		fd, err := openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST && attempt < 100 {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(d.path, name))
		t := &Temp{File: f, dir: d, name: name}
		if err := f.Chmod(perm.Perm()); err != nil {
			t.Close()
			return nil, err
		}
		return t, nil
	}
}

// openat is unix.Openat retried on EINTR.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Name returns the temporary file's name in its directory.
func (t *Temp) Name() string { return t.name }

// PublishNew makes the temporary file appear as base (a name in the same
// directory) only if base does not exist: ErrExists when it does. It fails
// with ErrUnsupported where the file system has neither hard links nor
// renameat2 with RENAME_NOREPLACE. Afterwards the temporary name is gone;
// File stays open. It does not sync the directory (Dir.Sync).
func (t *Temp) PublishNew(base string) error {
	err := unix.Linkat(t.dir.fd, t.name, t.dir.fd, base, 0)
	if err == nil {
		t.remove()
		return nil
	}
	if err == unix.EEXIST {
		return ErrExists
	}
	if !unsupported(err) {
		return &os.LinkError{Op: "link", Old: t.name, New: filepath.Join(t.dir.path, base), Err: err}
	}
	err = renameNoReplace(t.dir.fd, t.name, t.dir.fd, base)
	if err == nil {
		t.gone = true
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		return ErrExists
	}
	if unsupported(err) {
		return ErrUnsupported
	}
	return &os.LinkError{Op: "rename", Old: t.name, New: filepath.Join(t.dir.path, base), Err: err}
}

// Replace renames the temporary file over base (a name in the same
// directory), replacing whatever directory entry is there. Afterwards the
// temporary name is gone; File stays open. It does not sync the directory.
func (t *Temp) Replace(base string) error {
	if err := unix.Renameat(t.dir.fd, t.name, t.dir.fd, base); err != nil {
		return &os.LinkError{Op: "rename", Old: t.name, New: filepath.Join(t.dir.path, base), Err: err}
	}
	t.gone = true
	return nil
}

// publish is PublishNew (falling back to a claimed name) or Replace.
func (t *Temp) publish(base string, replace bool) error {
	if replace {
		return t.Replace(base)
	}
	err := t.PublishNew(base)
	if !errors.Is(err, ErrUnsupported) {
		return err
	}
	// Claim the name, then rename the complete file over our own claim.
	fd, cerr := openat(t.dir.fd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if cerr == unix.EEXIST {
		return ErrExists
	}
	if cerr != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(t.dir.path, base), Err: cerr}
	}
	unix.Close(fd)
	if err := t.Replace(base); err != nil {
		_ = unix.Unlinkat(t.dir.fd, base, 0)
		return err
	}
	return nil
}

// remove unlinks the temporary name (once).
func (t *Temp) remove() {
	if !t.gone {
		_ = unix.Unlinkat(t.dir.fd, t.name, 0)
		t.gone = true
	}
}

// Close closes File and removes the temporary name if it was not
// published (and closes the directory CreateTempIn opened). It is safe to
// call more than once.
func (t *Temp) Close() error {
	t.remove()
	if t.File == nil {
		return nil
	}
	err := t.File.Close()
	t.File = nil
	if t.ownDir {
		t.dir.Close()
	}
	return err
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EMLINK)
}
