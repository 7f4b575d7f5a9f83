package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DirHashLimit is the largest object (in bytes) whose directory-store Version
// is the SHA-256 of its content ("sha256:<hex>"). Getting such an object reads
// it twice (once to hash it); larger objects, which are written once and only
// read, get a tag of their file's identity instead ("stat:<dev>.<ino>.<size>.
// <mtime ns>.<ctime ns>"), which changes whenever the file is replaced.
var DirHashLimit int64 = 64 << 20

// lockDirName is the directory under the root that holds one lock file per
// key. Keys cannot start with '.', so it never collides with a key.
const lockDirName = ".ctx-locks"

// dirStore is the directory store: each object is the plain file
// <root>/<key>.
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

func (d *dirStore) path(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}

// openObject opens the object file without following a symlink in its last
// component and checks it is a regular file.
func openObject(p string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, ErrNotFound
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, errors.New("object is a symbolic link (refused)")
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, ErrNotFound
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
	return Version(fmt.Sprintf("stat:%d.%d.%d.%d.%d", st.Dev, st.Ino, st.Size,
		fi.ModTime().UnixNano(), changeTimeNanos(st)))
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
	f, fi, err := openObject(d.path(key))
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

// writeTemp streams body into a new temp file in the key's directory (created
// if needed), fsyncs it and returns it open, with the SHA-256 of what it
// wrote.
func (d *dirStore) writeTemp(ctx context.Context, key string, body io.Reader) (*os.File, hash.Hash, error) {
	dir := filepath.Dir(d.path(key))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, fmt.Errorf("a parent of the key is an object: %w", err)
		}
		return nil, nil, err
	}
	f, err := os.CreateTemp(dir, ".ctx-tmp-*")
	if err != nil {
		return nil, nil, err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), ctxReader{ctx, body})
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	return f, h, nil
}

// syncDir fsyncs a directory so a rename or link in it is durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
	final := d.path(key)
	if _, err := os.Lstat(final); err == nil {
		return "", ErrExists // early answer; the publish below decides
	}
	f, h, err := d.writeTemp(ctx, key, body)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := publishNoReplace(ctx, d, key, tmp, final); err != nil {
		return "", err
	}
	os.Remove(tmp) // before the fstat: the link count is part of the ctime
	if err := syncDir(filepath.Dir(final)); err != nil {
		return "", err
	}
	return d.newVersion(f, h)
}

// publishNoReplace makes tmp appear at final only if final does not exist,
// atomically even between processes: link(2) fails with EEXIST when the name
// exists. Where hard links are not supported it uses renameat2 with
// RENAME_NOREPLACE, and failing that a check-and-rename under the key's lock.
func publishNoReplace(ctx context.Context, d *dirStore, key, tmp, final string) error {
	err := os.Link(tmp, final)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return ErrExists
	}
	if !isUnsupported(err) {
		return err
	}
	err = renameNoReplace(tmp, final)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		return ErrExists
	}
	if !isUnsupported(err) {
		return err
	}
	unlock, err := d.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(final); err == nil {
		return ErrExists
	}
	return os.Rename(tmp, final)
}

func isUnsupported(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EMLINK)
}

// lock takes the key's lock file (flock, exclusive), waiting until it is free
// or ctx ends. Lock files live in <root>/.ctx-locks/ and are never removed.
func (d *dirStore) lock(ctx context.Context, key string) (func(), error) {
	dir := filepath.Join(d.root, lockDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	return flockFile(ctx, filepath.Join(dir, hex.EncodeToString(sum[:16])+".lock"))
}

// flockFile takes an exclusive flock on path (created if missing), polling so
// the wait ends with ctx.
func flockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
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
			return nil, fmt.Errorf("lock %s: %w", filepath.Base(path), err)
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
	f, h, err := d.writeTemp(ctx, key, body)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tmp := f.Name()
	defer os.Remove(tmp)
	unlock, err := d.lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	final := d.path(key)
	cur, fi, err := openObject(final)
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("%w: %w", ErrVersionMismatch, ErrNotFound)
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
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return "", err
	}
	return d.newVersion(f, h)
}

func (d *dirStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	start := d.root
	if prefix != "" {
		start = d.path(strings.TrimSuffix(prefix, "/"))
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == start && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return fs.SkipAll
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == start {
			if !e.IsDir() {
				return fs.SkipAll
			}
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if ValidKey(key) == nil {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}
