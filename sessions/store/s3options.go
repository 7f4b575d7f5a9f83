package store

import "github.com/git-ctx/git-ctx/internal/fault"

// The S3 store keeps every object at <prefix>/<key> in one bucket of an
// S3-compatible service: with keys "profiles/<uuid>/manifest.age" and
// "profiles/<uuid>/snapshots/<uuid>.age" that is exactly Reinstate's
// layout below its default prefix "profiles/<profile uuid>" (with an empty
// bucket prefix) or below "<prefix>/profiles/<profile uuid>". Versions are
// the service's ETags; Create is a PutObject (or CompleteMultipartUpload)
// with If-None-Match: *, Update one with If-Match: <etag>. Before its first
// write in a process the store checks that the service honours both
// headers (probe), and refuses to write otherwise.

// Environment variables the S3 store reads besides the AWS SDK's own.
const (
	// EnvS3AccessKeyID and EnvS3SecretAccessKey are Reinstate's storage
	// credentials (both or neither); when set they take precedence over
	// the AWS credential chain.
	EnvS3AccessKeyID     = "REINSTATE_S3_ACCESS_KEY_ID"
	EnvS3SecretAccessKey = "REINSTATE_S3_SECRET_ACCESS_KEY"
	// EnvS3Endpoint overrides the S3 endpoint (before git config
	// ctx.sessionS3Endpoint); a custom endpoint is addressed path-style.
	EnvS3Endpoint = "AWS_ENDPOINT_URL_S3"
)

// DefaultPartSize is the S3 store's multipart part size: an object larger
// than this is uploaded in parts of this size, one part in memory at a time.
const DefaultPartSize = 16 << 20

var (
	// ErrNoConditionalWrites is returned by the first write to an S3
	// service that ignores If-None-Match or If-Match on PutObject: with it,
	// two pushes could silently lose a manifest update, so nothing is
	// written.
	ErrNoConditionalWrites = fault.Sentinel(fault.Remote, "the S3 service does not honour conditional writes")
	// ErrS3Credentials is returned when REINSTATE_S3_ACCESS_KEY_ID and
	// REINSTATE_S3_SECRET_ACCESS_KEY are not both set or both unset, or the
	// store URL or endpoint carries credentials.
	ErrS3Credentials = fault.Sentinel(fault.Config, "S3 credentials")
)

// S3Options configure the S3 store beyond its URL.
type S3Options struct {
	// Endpoint is the configured endpoint URL (git config
	// ctx.sessionS3Endpoint); AWS_ENDPOINT_URL_S3 takes precedence.
	Endpoint string
	// PartSize overrides DefaultPartSize (at least 5 MiB; tests).
	PartSize int64
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// ErrS3NotLinked is returned by OpenS3 in a build without the S3 store
// (tag ctx_lean: the shipped git-ctx, which leaves the AWS SDK out for a
// faster start; docs/ARCHITECTURE.md, "Two executables"). Its caller hands
// the command to the companion executable git-ctx-full, which has it.
var ErrS3NotLinked = fault.Sentinel(fault.Config, "the S3 session store is not linked into this build")
