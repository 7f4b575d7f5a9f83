package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/inodetime"
)

// DirHashLimit is the largest object (in bytes) whose directory-store Version
// is the SHA-256 of its content ("sha256:<hex>"). Getting such an object reads
// it twice (once to hash it); larger objects, which are written once and only
// read, get a tag of their file's identity instead ("stat:<dev>.<ino>.<size>.
// <mtime ns>.<ctime ns>"), which changes whenever the file is replaced. The
// one object replaced in place, a profile's manifest, is at most about
// 4.1 MiB of ciphertext, well below the limit; a snapshot above it is
// neither hashed when written nor read twice when fetched.
var DirHashLimit int64 = 8 << 20

// lockDirName is the directory under the root that holds one lock file per
// key. Keys cannot start with '.', so it never collides with a key.
const lockDirName = ".ctx-locks"

// ErrSymlink is wrapped, after the path of the link, by the error of any
// directory-store operation that met a symbolic link below the store's root.
// The store follows no link there: whoever can write to a shared store
// directory could otherwise make a push write, and a pull read, anywhere the
// user can.
var ErrSymlink = fault.Sentinel(fault.Refused, "is a symbolic link: a directory store follows no link (refused)")

// dirStore is the directory store: each object is the plain file
// <root>/<key>. Every path below the root is reached one component at a
// time, each opened relative to its parent's descriptor without following a
// symbolic link (O_NOFOLLOW, openat and friends), so no entry planted in the
// store can lead outside it.
type dirStore struct {
	root      string
	hashLimit int64
}

// OpenDir returns the directory store rooted at the absolute path root,
// creating the directory (mode 0700) if missing.
func OpenDir(root string) (Store, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("store: directory store %q: path must be absolute", root)
	}
	root = filepath.Clean(root)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("store: directory store: %w", err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("store: directory store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("store: directory store %s: not a directory", root)
	}
	return &dirStore{root: root, hashLimit: DirHashLimit}, nil
}

// parseFileURL turns "file:///abs/path" or "file://localhost/abs/path" into
// "/abs/path".
func parseFileURL(spec string) (string, error) {
	u, err := url.Parse(spec)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return "", fmt.Errorf("store: bad store URL %q: want file:///absolute/path", redactSpec(spec))
	}
	if u.User != nil || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
		return "", fmt.Errorf("store: store URL %q: a host is not supported (want file:///absolute/path)", redactSpec(spec))
	}
	if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("store: store URL %q: path must be absolute (file:///absolute/path)", spec)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("store: store URL %q: query and fragment are not supported", spec)
	}
	return filepath.Clean(u.Path), nil
}

func (d *dirStore) Describe() string { return "directory store " + d.root }

// full is the path of the store entry rel (a slash path below the root), for
// messages only: the store never opens an entry by its full path.
func (d *dirStore) full(rel string) string {
	return filepath.Join(d.root, filepath.FromSlash(rel))
}

// linkError names the store entry rel as a symbolic link.
func (d *dirStore) linkError(rel string) error {
	return fmt.Errorf("%s %w", d.full(rel), ErrSymlink)
}

// dirFlags open a directory below the root: never through a link.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW

// openat opens name relative to the directory dirfd (close-on-exec),
// retrying when interrupted.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// isLinkAt reports whether name in the directory dirfd is a symbolic link.
func isLinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// existsAt reports whether name in the directory dirfd exists (a link
// counts; it is not followed).
func existsAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// missing reports whether err says a path component does not exist or is not
// a directory.
func missing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

// splitKey splits a key into its directory ("" for a top-level key) and its
// last segment.
func splitKey(key string) (dir, base string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// openDir opens the directory rel below the root ("" for the root itself)
// one component at a time, each relative to its parent's descriptor and
// without following a symbolic link, so that no link planted in the store
// can lead outside it; with create, missing components are made (mode 0700).
// A component that is a link is an error wrapping ErrSymlink naming it; one
// that is missing or not a directory is an *os.PathError wrapping ENOENT or
// ENOTDIR. The caller closes the descriptor.
func (d *dirStore) openDir(rel string, create bool) (int, error) {
	// The root itself is the configured path: it may be reached through
	// links the user made.
	fd, err := openat(unix.AT_FDCWD, d.root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: d.root, Err: err}
	}
	if rel == "" {
		return fd, nil
	}
	done := ""
	for _, name := range strings.Split(rel, "/") {
		done = path.Join(done, name)
		op := "open"
		next, err := openat(fd, name, dirFlags, 0)
		if err == unix.ENOENT && create {
			op = "mkdir"
			if err = unix.Mkdirat(fd, name, 0o700); err == nil || err == unix.EEXIST {
				op = "open"
				next, err = openat(fd, name, dirFlags, 0)
			}
		}
		if err != nil {
			if isLinkAt(fd, name) {
				err = d.linkError(done)
			} else {
				err = &os.PathError{Op: op, Path: d.full(done), Err: err}
			}
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// openObjectAt opens the object base in the directory dirfd (the store entry
// rel) without following a link and checks it is a regular file. It opens
// without blocking, so that a FIFO planted in the store cannot hang a read.
func (d *dirStore) openObjectAt(dirfd int, rel, base string) (*os.File, os.FileInfo, error) {
	fd, err := openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		switch {
		case isLinkAt(dirfd, base):
			return nil, nil, d.linkError(rel)
		case missing(err):
			return nil, nil, ErrNoObject
		}
		return nil, nil, &os.PathError{Op: "open", Path: d.full(rel), Err: err}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, &os.PathError{Op: "open", Path: d.full(rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.full(rel))
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, ErrNoObject
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errors.New("object is not a regular file")
	}
	return f, fi, nil
}

// statVersion is the identity tag of an open file.
func statVersion(fi os.FileInfo) Version {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Version(fmt.Sprintf("stat:%d.%d", fi.Size(), fi.ModTime().UnixNano()))
	}
	ctime, _ := inodetime.Nanos(fi)
	return Version(fmt.Sprintf("stat:%d.%d.%d.%d.%d", st.Dev, st.Ino, st.Size,
		fi.ModTime().UnixNano(), ctime))
}

func hashVersion(h hash.Hash) Version {
	return Version("sha256:" + hex.EncodeToString(h.Sum(nil)))
}

// version computes the Version of the open file f and leaves its offset at 0.
func (d *dirStore) version(ctx context.Context, f *os.File, fi os.FileInfo) (Version, error) {
	if fi.Size() > d.hashLimit {
		return statVersion(fi), nil
	}
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return "", err
	}
	if n != fi.Size() {
		return "", fmt.Errorf("object changed size while read (%d bytes, expected %d)", n, fi.Size())
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return hashVersion(h), nil
}

func (d *dirStore) Get(ctx context.Context, key string) (io.ReadCloser, Version, error) {
	if err := ValidKey(key); err != nil {
		return nil, "", fmt.Errorf("store: get: %w", err)
	}
	dir, base := splitKey(key)
	dfd, err := d.openDir(dir, false)
	if err != nil {
		if missing(err) {
			err = ErrNoObject
		}
		return nil, "", fmt.Errorf("store: get %s: %w", key, err)
	}
	f, fi, err := d.openObjectAt(dfd, key, base)
	unix.Close(dfd)
	if err != nil {
		return nil, "", fmt.Errorf("store: get %s: %w", key, err)
	}
	v, err := d.version(ctx, f, fi)
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("store: get %s: %w", key, err)
	}
	return &sizedReader{f: f, key: key, want: fi.Size()}, v, nil
}

// sizedReader reports a short file (truncated in place after it was opened)
// as an error rather than a clean EOF.
type sizedReader struct {
	f    *os.File
	key  string
	want int64
	got  int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	s.got += int64(n)
	if err == io.EOF && s.got != s.want {
		return n, fmt.Errorf("store: get %s: object is %d bytes, expected %d: %w", s.key, s.got, s.want, io.ErrUnexpectedEOF)
	}
	return n, err
}

func (s *sizedReader) Close() error { return s.f.Close() }

// writeTemp streams body into a new temporary file (atomicfile) in the
// directory dirfd (the store directory dir), fsyncs it and returns it open,
// with the SHA-256 of what it wrote. Closing it removes it unless it was
// published.
func (d *dirStore) writeTemp(ctx context.Context, dirfd int, dir string, body io.Reader) (*atomicfile.Temp, hash.Hash, error) {
	t, err := atomicfile.DirFD(dirfd, d.full(dir)).CreateTemp(0o600)
	if err != nil {
		return nil, nil, err
	}
	h := &boundedHash{Hash: sha256.New(), limit: d.hashLimit}
	_, err = io.Copy(io.MultiWriter(t.File, h), ctxReader{ctx, body})
	if err == nil {
		err = t.File.Sync()
	}
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	return t, h, nil
}

// boundedHash hashes what is written to it while the total stays within
// limit, and nothing after: an object larger than the limit has a stat
// Version, so hashing it would be wasted work.
type boundedHash struct {
	hash.Hash
	n, limit int64
}

func (b *boundedHash) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if b.n <= b.limit {
		b.Hash.Write(p)
	}
	return len(p), nil
}

// syncDirFd fsyncs the open directory dirfd (the store directory dir) so a
// rename or link in it is durable.
func (d *dirStore) syncDirFd(dirfd int, dir string) error {
	if err := unix.Fsync(dirfd); err != nil {
		return &os.PathError{Op: "sync", Path: d.full(dir), Err: err}
	}
	return nil
}

// newVersion is the Version of a file we just published through f.
func (d *dirStore) newVersion(f *os.File, h hash.Hash) (Version, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Size() > d.hashLimit {
		return statVersion(fi), nil
	}
	return hashVersion(h), nil
}

func (d *dirStore) Create(ctx context.Context, key string, body io.Reader) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", fmt.Errorf("store: create: %w", err)
	}
	v, err := d.create(ctx, key, body)
	if err != nil {
		return "", fmt.Errorf("store: create %s: %w", key, err)
	}
	return v, nil
}

func (d *dirStore) create(ctx context.Context, key string, body io.Reader) (Version, error) {
	dir, base := splitKey(key)
	dfd, err := d.openDir(dir, true)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return "", fmt.Errorf("a parent of the key is an object: %w", err)
		}
		return "", err
	}
	defer unix.Close(dfd)
	if existsAt(dfd, base) {
		return "", ErrExists // early answer; the publish below decides
	}
	t, h, err := d.writeTemp(ctx, dfd, dir, body)
	if err != nil {
		return "", err
	}
	defer t.Close()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// The publish removes the temporary name before the fstat below: the
	// link count is part of the ctime.
	if err := d.publishNoReplace(ctx, key, dfd, t, base); err != nil {
		return "", err
	}
	if err := d.syncDirFd(dfd, dir); err != nil {
		return "", err
	}
	return d.newVersion(t.File, h)
}

// publishNoReplace makes t appear as base (in the directory dirfd) only if
// base does not exist, atomically even between processes (atomicfile:
// link(2), else renameat2 with RENAME_NOREPLACE). Where neither is supported
// it checks and renames under the key's lock.
func (d *dirStore) publishNoReplace(ctx context.Context, key string, dirfd int, t *atomicfile.Temp, base string) error {
	err := t.PublishNew(base)
	if errors.Is(err, atomicfile.ErrExists) {
		return ErrExists
	}
	if !errors.Is(err, atomicfile.ErrUnsupported) {
		return err
	}
	unlock, err := d.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if existsAt(dirfd, base) {
		return ErrExists
	}
	return t.Replace(base)
}

// lock takes the key's lock file (flock, exclusive), waiting until it is free
// or ctx ends. Lock files live in <root>/.ctx-locks/ and are never removed;
// neither the directory nor the file is opened through a link.
func (d *dirStore) lock(ctx context.Context, key string) (func(), error) {
	lfd, err := d.openDir(lockDirName, true)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	defer unix.Close(lfd)
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:16]) + ".lock"
	rel := lockDirName + "/" + name
	fd, err := openat(lfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if isLinkAt(lfd, name) {
			return nil, fmt.Errorf("lock: %w", d.linkError(rel))
		}
		return nil, fmt.Errorf("lock: %w", &os.PathError{Op: "open", Path: d.full(rel), Err: err})
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lock: %w", err)
	}
	return flockWait(ctx, os.NewFile(uintptr(fd), d.full(rel)))
}

// flockFile takes an exclusive flock on path (created if missing), polling so
// the wait ends with ctx.
func flockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return flockWait(ctx, f)
}

// flockWait takes an exclusive flock on the open file f, polling so the wait
// ends with ctx; f is closed when the lock is released or not taken.
func flockWait(ctx context.Context, f *os.File) (func(), error) {
	wait := time.Millisecond
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", filepath.Base(f.Name()), err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

func (d *dirStore) Update(ctx context.Context, key string, body io.Reader, v Version) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", fmt.Errorf("store: update: %w", err)
	}
	nv, err := d.update(ctx, key, body, v)
	if err != nil {
		return "", fmt.Errorf("store: update %s: %w", key, err)
	}
	return nv, nil
}

func (d *dirStore) update(ctx context.Context, key string, body io.Reader, v Version) (Version, error) {
	if v == "" {
		return "", fmt.Errorf("%w: empty version", ErrVersionMismatch)
	}
	dir, base := splitKey(key)
	dfd, err := d.openDir(dir, false)
	if err != nil {
		if missing(err) {
			return "", fmt.Errorf("%w: %w", ErrVersionMismatch, ErrNoObject)
		}
		return "", err
	}
	defer unix.Close(dfd)
	t, h, err := d.writeTemp(ctx, dfd, dir, body)
	if err != nil {
		return "", err
	}
	defer t.Close()
	unlock, err := d.lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	cur, fi, err := d.openObjectAt(dfd, key, base)
	if errors.Is(err, ErrNoObject) {
		return "", fmt.Errorf("%w: %w", ErrVersionMismatch, ErrNoObject)
	}
	if err != nil {
		return "", err
	}
	cv, err := d.version(ctx, cur, fi)
	cur.Close()
	if err != nil {
		return "", err
	}
	if cv != v {
		return "", ErrVersionMismatch
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Renaming over base replaces the directory entry: were it a link, the
	// link would go, never its target.
	if err := t.Replace(base); err != nil {
		return "", err
	}
	if err := d.syncDirFd(dfd, dir); err != nil {
		return "", err
	}
	return d.newVersion(t.File, h)
}

func (d *dirStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	start := strings.TrimSuffix(prefix, "/")
	fd, err := d.openDir(start, false)
	if err != nil {
		if missing(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("store: list %s: %w", prefix, err)
	}
	var keys []string
	if err := d.walk(ctx, fd, start, &keys); err != nil {
		return nil, fmt.Errorf("store: list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// walk adds to keys the keys of the regular files below the open directory
// fd (the store directory rel), then closes fd. Names starting with '.'
// (temp files, the lock directory, .DS_Store) are skipped; a symbolic link
// anywhere else is an error naming it; directories are opened relative to
// their parent without following links.
func (d *dirStore) walk(ctx context.Context, fd int, rel string, keys *[]string) error {
	dir := os.NewFile(uintptr(fd), d.full(rel))
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(name, ".") {
			continue
		}
		key := path.Join(rel, name)
		if len(key) > maxKeyLen {
			continue // nothing at or below it is a key
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue // removed meanwhile
			}
			return &os.PathError{Op: "stat", Path: d.full(key), Err: err}
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return d.linkError(key)
		case unix.S_IFREG:
			if ValidKey(key) == nil {
				*keys = append(*keys, key)
			}
		case unix.S_IFDIR:
			child, err := openat(fd, name, dirFlags, 0)
			if err != nil {
				if isLinkAt(fd, name) {
					return d.linkError(key)
				}
				if missing(err) {
					continue
				}
				return &os.PathError{Op: "open", Path: d.full(key), Err: err}
			}
			if err := d.walk(ctx, child, key, keys); err != nil {
				return err
			}
		}
	}
	return nil
}
