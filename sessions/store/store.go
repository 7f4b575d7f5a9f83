// Package store keeps the objects of encrypted agent sessions (Reinstate v1
// manifests and snapshots) in an object store with conditional writes: a
// directory store ("file:///abs/path", for shared drives and tests), a git
// store on the ghyll/sessions branch of a git remote, where a rejected
// (non-fast-forward) push is the failed precondition, and an S3 store
// ("s3://bucket/prefix", Reinstate's own backend: If-None-Match and If-Match
// on PutObject, checked by a probe before the first write). All stream
// object bodies: memory use does not grow with an object's size.
//
// The package knows nothing of the objects' contents (they are age
// ciphertexts, encrypted and decrypted by the caller); it only moves bytes
// and enforces create-if-absent and update-if-version-matches.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Version is an opaque tag of one stored state of an object; never "" for an
// object that exists. Two reads of the same stored state give the same
// Version; callers only compare versions for equality and pass them back to
// Update.
type Version string

var (
	// ErrNoObject is returned by Get (and Update) for a key with no object.
	ErrNoObject = fault.Sentinel(fault.Failed, "object not found")
	// ErrExists is returned by Create for a key that already holds an object.
	ErrExists = fault.Sentinel(fault.Conflict, "object already exists")
	// ErrVersionMismatch is returned by Update when the object's current
	// version is not the one given (the precondition failed); an Update of an
	// absent object returns an error matching both ErrVersionMismatch and
	// ErrNoObject.
	ErrVersionMismatch = fault.Sentinel(fault.Conflict, "object changed (version mismatch)")
	// ErrInvalidKey is returned for a key (or List prefix) that is not a safe
	// relative slash path.
	ErrInvalidKey = fault.Sentinel(fault.Refused, "invalid object key")
)

// Store is an object store with conditional writes. Implementations are safe
// for concurrent use by several goroutines and by several processes.
type Store interface {
	// Get streams the object; the caller closes the reader. Reading to io.EOF
	// means the whole object arrived (and, where the store can check it,
	// verified); a damaged object makes Read return an error instead of EOF.
	Get(ctx context.Context, key string) (io.ReadCloser, Version, error)
	// Create writes the object only if the key is absent (ErrExists
	// otherwise). The body is streamed: memory use does not grow with its
	// size.
	Create(ctx context.Context, key string, body io.Reader) (Version, error)
	// Update replaces the object only if its current version is v
	// (ErrVersionMismatch otherwise).
	Update(ctx context.Context, key string, body io.Reader, v Version) (Version, error)
	// List returns the keys of the objects under prefix, sorted. The prefix is
	// "" (everything) or a directory ending in "/", like "profiles/".
	List(ctx context.Context, prefix string) ([]string, error)
	// Describe returns a one-line description for messages; it never holds
	// secrets or credentials.
	Describe() string
}

// Options for Open.
type Options struct {
	Repo   *gitrepo.Repo // the local repository (needed by the git store)
	Remote string        // git remote name for the git store (the caller resolves the default memory remote)
	S3     S3Options     // the S3 store's endpoint and settings
}

// Open chooses a store from spec:
//
//   - "file:///abs/path" (or "file://localhost/abs/path"): a directory store
//     rooted at /abs/path. Relative paths ("file://rel", "file:rel") are
//     refused, since a relative root would depend on the current directory;
//     percent-escapes in the path are decoded. The directory is created if
//     missing.
//   - "" or "git": the git store on branch ghyll/sessions of opt.Remote.
//   - "git:REMOTE": the git store on branch ghyll/sessions of remote REMOTE.
//   - "s3://BUCKET[/PREFIX]": the S3 store (OpenS3) in BUCKET of an
//     S3-compatible service, objects below PREFIX.
//
// Anything else is an error.
func Open(ctx context.Context, spec string, opt Options) (Store, error) {
	switch {
	case spec == "" || spec == "git":
		return openGit(ctx, opt.Repo, opt.Remote)
	case strings.HasPrefix(spec, "git:"):
		return openGit(ctx, opt.Repo, strings.TrimPrefix(spec, "git:"))
	case strings.HasPrefix(spec, "s3://"):
		return OpenS3(ctx, spec, opt.S3)
	case strings.HasPrefix(strings.ToLower(spec), "file:"):
		root, err := parseFileURL(spec)
		if err != nil {
			return nil, err
		}
		return OpenDir(root)
	}
	return nil, fmt.Errorf("store: unknown session store %q: want file:///absolute/path, git, git:REMOTE or s3://BUCKET[/PREFIX]", redactSpec(spec))
}

// redactSpec drops anything that could be a credential (user info of a URL)
// from a store spec before it appears in a message.
func redactSpec(spec string) string {
	if i := strings.Index(spec, "://"); i >= 0 {
		rest := spec[i+3:]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if sl := strings.IndexByte(rest, '/'); sl < 0 || at < sl {
				return spec[:i+3] + "***@" + rest[at+1:]
			}
		}
	}
	return spec
}

// maxKeyLen is the longest key, in bytes.
const maxKeyLen = 1024

// ValidKey reports whether key is a safe object key: a relative slash path of
// one or more segments, each non-empty, not starting with "." (which also
// excludes "." and ".."), without backslashes, control characters or NUL,
// at most 1024 bytes. It returns an error wrapping ErrInvalidKey when not.
func ValidKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	for _, seg := range strings.Split(key, "/") {
		if err := validSegment(seg); err != nil {
			return fmt.Errorf("%w: %q: %v", ErrInvalidKey, key, err)
		}
	}
	return nil
}

func validSegment(seg string) error {
	switch {
	case seg == "":
		return errors.New("empty segment")
	case seg[0] == '.':
		return errors.New("segment starts with '.'")
	case len(seg) > 255:
		return errors.New("segment longer than 255 bytes")
	}
	for _, r := range seg {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return errors.New("control character")
		case r == '\\':
			return errors.New("backslash")
		case r == 0xfffd:
			return errors.New("invalid UTF-8")
		}
	}
	return nil
}

// validPrefix checks a List prefix: "" or a valid key followed by "/".
func validPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if !strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("%w: list prefix %q must end with '/'", ErrInvalidKey, prefix)
	}
	if err := ValidKey(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("list prefix: %w", err)
	}
	return nil
}

// ContextReader returns r stopping with ctx's error once ctx is done, so a
// long copy from it ends with the context.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

// ctxReader stops a long copy when its context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
