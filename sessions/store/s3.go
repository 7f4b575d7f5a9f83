//go:build !ctx_lean

package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// envEndpoint is the SDK's endpoint for every service, the last choice
// (after EnvS3Endpoint and the configured endpoint).
const envEndpoint = "AWS_ENDPOINT_URL"

// minPartSize is S3's smallest part (but the last); s3MaxParts its most
// parts.
const (
	minPartSize = 5 << 20
	s3MaxParts  = 10000
)

// s3Store is the S3 store. Safe for concurrent use.
type s3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or "a/b": no leading or trailing slash
	endpoint string // for Describe: scheme://host[:port] of a custom endpoint, or ""
	partSize int64
	secrets  []string // credential strings to keep out of every error

	probeMu sync.Mutex
	probed  bool // the probe passed
}

// parseS3URL splits "s3://BUCKET[/PREFIX]" into bucket and prefix (slashes
// trimmed, as Reinstate does).
func parseS3URL(spec string) (bucket, prefix string, err error) {
	rest := spec[len("s3://"):]
	if strings.ContainsAny(rest, "?#") {
		return "", "", fmt.Errorf("store: %q: an s3:// URL takes no query or fragment", redactSpec(spec))
	}
	host, path, _ := strings.Cut(rest, "/")
	if strings.Contains(host, "@") {
		return "", "", fmt.Errorf("%w: %s: credentials do not belong in the store URL; use REINSTATE_S3_ACCESS_KEY_ID and REINSTATE_S3_SECRET_ACCESS_KEY or the AWS credential chain", ErrS3Credentials, redactSpec(spec))
	}
	if err := validBucket(host); err != nil {
		return "", "", fmt.Errorf("store: %q: %w", spec, err)
	}
	prefix = strings.Trim(path, "/")
	if prefix != "" {
		if u, err := url.PathUnescape(prefix); err == nil {
			prefix = u
		}
		if err := ValidKey(prefix); err != nil {
			return "", "", fmt.Errorf("store: %q: bad prefix: %w", spec, err)
		}
	}
	return host, prefix, nil
}

// validBucket checks S3's bucket naming rules: 3 to 63 lowercase letters,
// digits, dots and hyphens, starting and ending with a letter or digit.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '.' || c == '-') && i > 0 && i < len(b)-1
		if !ok {
			return fmt.Errorf("bucket name %q: only lowercase letters, digits, '.' and '-' (not first or last)", b)
		}
	}
	return nil
}

// checkEndpoint accepts an http(s) URL without credentials, query or
// fragment and returns it without a trailing slash.
func checkEndpoint(ep, from string) (string, error) {
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %s is not an http:// or https:// URL", ErrConfigS3, from)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: %s carries credentials: remove them and use REINSTATE_S3_ACCESS_KEY_ID and REINSTATE_S3_SECRET_ACCESS_KEY or the AWS credential chain", ErrS3Credentials, from)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: %s must not have a query or fragment", ErrConfigS3, from)
	}
	return strings.TrimRight(ep, "/"), nil
}

// ErrConfigS3 is returned for an S3 store configuration that cannot work
// (a malformed endpoint).
var ErrConfigS3 = fault.Sentinel(fault.Config, "S3 store configuration")

// OpenS3 opens the S3 store named by spec ("s3://BUCKET[/PREFIX]"). It
// makes no request: a missing bucket or wrong credentials show on the
// first operation.
func OpenS3(ctx context.Context, spec string, opt S3Options) (Store, error) {
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	bucket, prefix, err := parseS3URL(spec)
	if err != nil {
		return nil, err
	}
	st := &s3Store{bucket: bucket, prefix: prefix, partSize: DefaultPartSize}
	if opt.PartSize > 0 {
		st.partSize = max(opt.PartSize, minPartSize)
	}
	endpoint, from := getenv(EnvS3Endpoint), EnvS3Endpoint
	if endpoint == "" {
		endpoint, from = opt.Endpoint, "git config ctx.sessionS3Endpoint"
	}
	if endpoint == "" {
		endpoint, from = getenv(envEndpoint), envEndpoint
	}
	if endpoint != "" {
		if endpoint, err = checkEndpoint(endpoint, from); err != nil {
			return nil, err
		}
		st.endpoint = endpoint
	}
	loadOpts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{}), config.WithClientLogMode(0)}
	id, secret := getenv(EnvS3AccessKeyID), getenv(EnvS3SecretAccessKey)
	switch {
	case id != "" && secret != "":
		loadOpts = append(loadOpts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, "")))
		st.secrets = append(st.secrets, secret)
	case id != "" || secret != "":
		return nil, fmt.Errorf("%w: set both %s and %s, or neither", ErrS3Credentials, EnvS3AccessKeyID, EnvS3SecretAccessKey)
	}
	for _, v := range []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		if s := getenv(v); s != "" {
			st.secrets = append(st.secrets, s)
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("%w: load the AWS configuration: %w", ErrConfigS3, st.scrub(err))
	}
	if cfg.Region == "" {
		// A custom endpoint needs some region to sign with; "auto" is what
		// Cloudflare R2 documents. AWS itself without a region: us-east-1.
		cfg.Region = "us-east-1"
		if endpoint != "" {
			cfg.Region = "auto"
		}
	}
	st.client = s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	return st, nil
}

// objectKey is the bucket key of a store key.
func (s *s3Store) objectKey(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// Describe names the bucket, prefix and custom endpoint (never credentials).
func (s *s3Store) Describe() string {
	d := "S3 store s3://" + s.bucket
	if s.prefix != "" {
		d += "/" + s.prefix
	}
	if s.endpoint != "" {
		d += " at " + s.endpoint
	}
	return d
}

// Get streams the object. The reader fails with io.ErrUnexpectedEOF when
// the body ends before the length the service announced.
func (s *s3Store) Get(ctx context.Context, key string) (io.ReadCloser, Version, error) {
	if err := ValidKey(key); err != nil {
		return nil, "", err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.objectKey(key))})
	if err != nil {
		if s3Code(err) == "NoSuchKey" {
			return nil, "", fmt.Errorf("%w: %s", ErrNoObject, key)
		}
		return nil, "", s.opError("get", key, err)
	}
	etag := aws.ToString(out.ETag)
	if etag == "" {
		out.Body.Close()
		return nil, "", fmt.Errorf("get %s from %s: the service sent no ETag", key, s.Describe())
	}
	want := int64(-1)
	if out.ContentLength != nil {
		want = *out.ContentLength
	}
	return &lengthReader{rc: out.Body, want: want, s: s}, Version(etag), nil
}

// lengthReader turns a body shorter or longer than its announced length into
// an error instead of a clean EOF.
type lengthReader struct {
	rc   io.ReadCloser
	want int64 // -1: unknown
	got  int64
	s    *s3Store
}

func (r *lengthReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.got += int64(n)
	if r.want >= 0 && r.got > r.want {
		return n, fmt.Errorf("object longer than the %d bytes announced", r.want)
	}
	if errors.Is(err, io.EOF) && r.want >= 0 && r.got < r.want {
		return n, fmt.Errorf("object cut short after %d of %d bytes: %w", r.got, r.want, io.ErrUnexpectedEOF)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.s.scrub(err)
	}
	return n, err
}

func (r *lengthReader) Close() error { return r.rc.Close() }

// Create writes the object only if the key is absent (If-None-Match: *).
func (s *s3Store) Create(ctx context.Context, key string, body io.Reader) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	if err := s.checkParents(ctx, key); err != nil {
		return "", err
	}
	if err := s.probe(ctx); err != nil {
		return "", err
	}
	v, err := s.put(ctx, s.objectKey(key), body, cond{ifNoneMatch: true})
	if errors.Is(err, errPrecondition) {
		return "", fmt.Errorf("%w: %s", ErrExists, key)
	}
	if err != nil {
		return "", s.opError("create", key, err)
	}
	return v, nil
}

// Update replaces the object only if its ETag is still v (If-Match).
func (s *s3Store) Update(ctx context.Context, key string, body io.Reader, v Version) (Version, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	if v == "" {
		return "", s.mismatch(ctx, key)
	}
	if err := s.probe(ctx); err != nil {
		return "", err
	}
	nv, err := s.put(ctx, s.objectKey(key), body, cond{ifMatch: string(v)})
	if errors.Is(err, errPrecondition) || s3Code(err) == "NoSuchKey" {
		return "", s.mismatch(ctx, key)
	}
	if err != nil {
		return "", s.opError("update", key, err)
	}
	return nv, nil
}

// mismatch is Update's failed precondition: also ErrNoObject when the
// object is absent.
func (s *s3Store) mismatch(ctx context.Context, key string) error {
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.objectKey(key))})
	if isNotFound(err) {
		return fmt.Errorf("%w: %w: %s", ErrVersionMismatch, ErrNoObject, key)
	}
	return fmt.Errorf("%w: %s", ErrVersionMismatch, key)
}

// checkParents refuses a key below an existing object ("a/b" exists, "a/b/c"
// is created): a directory or git store cannot hold both, and no layout
// needs it, so the S3 store keeps the same rule (one HEAD per parent; a
// concurrent create of the parent is not excluded).
func (s *s3Store) checkParents(ctx context.Context, key string) error {
	for i := strings.IndexByte(key, '/'); i > 0; i = nextSlash(key, i) {
		parent := key[:i]
		_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.objectKey(parent))})
		switch {
		case err == nil:
			return fmt.Errorf("%w: %q: %q is an object", ErrInvalidKey, key, parent)
		case !isNotFound(err):
			return s.opError("create", key, err)
		}
	}
	return nil
}

// List returns the keys under prefix, sorted; bucket keys that are not
// valid store keys (directory markers, others' files) are skipped.
func (s *s3Store) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, err
	}
	base := ""
	if s.prefix != "" {
		base = s.prefix + "/"
	}
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(base + prefix)})
	var keys []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.opError("list", prefix, err)
		}
		for _, o := range page.Contents {
			k, ok := strings.CutPrefix(aws.ToString(o.Key), base)
			if ok && strings.HasPrefix(k, prefix) && ValidKey(k) == nil {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}
