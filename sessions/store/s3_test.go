//go:build !ctx_lean

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/s3test"
)

// s3Env is a Getenv over the server's environment (s3test.Server.Env)
// with overrides.
func s3Env(srv *s3test.Server, over ...string) func(string) string {
	m := map[string]string{}
	for _, kv := range append(srv.Env(), over...) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// openS3 opens the S3 store at spec on srv (endpoint and credentials from
// the environment given, as a git-ctx process gets them).
func openS3(t testing.TB, srv *s3test.Server, spec string, partSize int64, over ...string) *s3Store {
	t.Helper()
	st, err := Open(context.Background(), spec, Options{S3: S3Options{PartSize: partSize, Getenv: s3Env(srv, over...)}})
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	return st.(*s3Store)
}

// s3Harness: two stores (two "machines") on a fresh bucket of the shared
// server, below a prefix; parts are read from the multipart ETag ("…-N").
func s3Harness() harness {
	return harness{
		writers: 8, parallel: true, splitCap: minPartSize,
		open: func(t *testing.T) (Store, Store) {
			srv := s3test.Shared(t)
			spec := "s3://" + srv.NewBucket(t) + "/team/sessions/"
			return openS3(t, srv, spec, minPartSize), openS3(t, srv, spec, minPartSize)
		},
		parts: func(t *testing.T, s Store, key string) int {
			st := s.(*s3Store)
			h, err := st.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(st.objectKey(key))})
			if err != nil {
				t.Fatal(err)
			}
			etag := strings.Trim(aws.ToString(h.ETag), `"`)
			_, n, ok := strings.Cut(etag, "-")
			if !ok {
				return 1
			}
			p, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("multipart ETag %q", etag)
			}
			return p
		},
	}
}

// TestS3Conformance runs the store conformance suite against a real
// S3-compatible server (SeaweedFS) on 127.0.0.1.
func TestS3Conformance(t *testing.T) {
	t.Parallel()
	runConformance(t, s3Harness())
}

// TestS3Layout: keys land in the bucket at <prefix>/<key> (Reinstate's
// profiles/<uuid>/manifest.age and …/snapshots/<uuid>.age below the
// prefix), with Content-Type application/octet-stream, and the probe
// leaves nothing behind.
func TestS3Layout(t *testing.T) {
	t.Parallel()
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	st := openS3(t, srv, "s3://"+bucket+"//org/team//", 0)
	ctx := testCtx(t)
	if _, err := st.Create(ctx, conformManifest, strings.NewReader("m")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, conformSnapshot, strings.NewReader("s")); err != nil {
		t.Fatal(err)
	}
	got := bucketKeys(t, srv, bucket, "")
	want := []string{"org/team/" + conformManifest, "org/team/" + conformSnapshot}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("bucket keys %q, want %q", got, want)
	}
	h, err := srv.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(want[0])})
	if err != nil || aws.ToString(h.ContentType) != "application/octet-stream" {
		t.Fatalf("content type %q: %v", aws.ToString(h.ContentType), err)
	}
	if d := st.Describe(); d != "S3 store s3://"+bucket+"/org/team at "+srv.Endpoint {
		t.Fatalf("describe: %q", d)
	}
	// Keys of others in the bucket (Reinstate's init probe "ok", a
	// directory marker) are not store keys of a listing.
	for _, k := range []string{"org/team/profiles/ok", "org/team/profiles/x/", "org/team/.hidden/y"} {
		if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("")}); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := st.List(ctx, "profiles/")
	if err != nil || fmt.Sprint(keys) != fmt.Sprint([]string{conformManifest, conformSnapshot, "profiles/ok"}) {
		t.Fatalf("list: %q %v", keys, err)
	}
}

// bucketKeys lists every key of bucket under prefix with the plain SDK.
func bucketKeys(t testing.TB, srv *s3test.Server, bucket, prefix string) []string {
	t.Helper()
	out, err := srv.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// TestS3LargeObjectStreams: a 23 MiB object from a reader that never
// holds it goes up in 5 MiB parts (multipart ETag "-5") and reads back
// byte for byte; a body that fails half-way leaves neither an object nor
// an unfinished multipart upload.
func TestS3LargeObjectStreams(t *testing.T) {
	t.Parallel()
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	st := openS3(t, srv, "s3://"+bucket, minPartSize)
	ctx := testCtx(t)
	const size = 23 << 20
	key := "profiles/p/snapshots/big.age"
	v, err := st.Create(ctx, key, genReader(size, 7))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.Trim(string(v), `"`), "-5") {
		t.Fatalf("version %q: not a 5-part upload", v)
	}
	if n, sum, err := readSum(ctx, st, key); err != nil || n != size || !bytes.Equal(sum, genSum(size, 7)) {
		t.Fatalf("read back %d bytes: %v", n, err)
	}
	// Create over it is refused even for a multipart body.
	if _, err := st.Create(ctx, key, genReader(size, 8)); !errors.Is(err, ErrExists) {
		t.Fatalf("multipart create over an object: %v", err)
	}
	// Update of a multipart object by its ETag.
	if _, err := st.Update(ctx, key, genReader(6<<20, 9), v); err != nil {
		t.Fatal(err)
	}

	failing := io.MultiReader(genReader(12<<20, 1), iotestErr{})
	if _, err := st.Create(ctx, "profiles/p/snapshots/failed.age", failing); err == nil {
		t.Fatal("create from a failing body succeeded")
	}
	if _, _, err := st.Get(ctx, "profiles/p/snapshots/failed.age"); !errors.Is(err, ErrNoObject) {
		t.Fatalf("failed upload left an object: %v", err)
	}
	ups, err := srv.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Fatalf("%d unfinished multipart uploads left", len(ups.Uploads))
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// TestS3Errors: wrong credentials, a missing bucket and a stopped server
// are store errors (not "no object": a pull must not read them as
// "nothing pushed yet"), and no message carries the secret.
func TestS3Errors(t *testing.T) {
	t.Parallel()
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	ctx := testCtx(t)
	const wrong = "Wr0ngSecretValue-never-printed-7f3a"
	cases := []struct {
		name, spec, hint string
		env              []string
	}{
		{"wrong secret", "s3://" + bucket, "credentials were refused", []string{EnvS3SecretAccessKey + "=" + wrong}},
		{"unknown key id", "s3://" + bucket, "credentials were refused", []string{EnvS3AccessKeyID + "=AKIAUNKNOWN", EnvS3SecretAccessKey + "=" + wrong}},
		{"missing bucket", "s3://no-such-bucket-" + strings.ToLower(bucket[2:]), "bucket does not exist", nil},
	}
	for _, c := range cases {
		st := openS3(t, srv, c.spec, 0, c.env...)
		errs := map[string]error{}
		_, errs["list"] = st.List(ctx, "profiles/")
		_, _, errs["get"] = st.Get(ctx, conformManifest)
		_, errs["create"] = st.Create(ctx, conformManifest, strings.NewReader("x"))
		_, errs["update"] = st.Update(ctx, conformManifest, strings.NewReader("x"), `"abc"`)
		for op, err := range errs {
			switch {
			case err == nil:
				t.Fatalf("%s: %s succeeded", c.name, op)
			case errors.Is(err, ErrNoObject) || errors.Is(err, ErrExists):
				t.Fatalf("%s: %s: %v reads as an object state", c.name, op, err)
			case strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), srv.SecretKey):
				t.Fatalf("%s: %s: the secret is in the error: %v", c.name, op, err)
			case op == "list" && !strings.Contains(err.Error(), c.hint):
				t.Fatalf("%s: %s: %v, want a hint %q", c.name, op, err, c.hint)
			}
		}
		t.Logf("%s: %v", c.name, errs["list"])
	}
	if keys := bucketKeys(t, srv, bucket, ""); len(keys) != 0 {
		t.Fatalf("refused writes left %q", keys)
	}

	// A stopped server (own server, so the shared one stays up).
	own := s3test.Start(t)
	st := openS3(t, own, "s3://"+own.NewBucket(t), 0)
	own.Stop()
	_, err := st.List(ctx, "profiles/")
	if err == nil || errors.Is(err, ErrNoObject) || strings.Contains(err.Error(), own.SecretKey) {
		t.Fatalf("stopped server: %v", err)
	}
	if _, err := st.Create(ctx, conformManifest, strings.NewReader("x")); err == nil {
		t.Fatal("create on a stopped server succeeded")
	}
}

// TestS3OpenSpecs: the URL and the configuration are checked before any
// request, and no message repeats a credential.
func TestS3OpenSpecs(t *testing.T) {
	ctx := context.Background()
	env := func(kv ...string) S3Options {
		m := map[string]string{"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}
		for _, s := range kv {
			k, v, _ := strings.Cut(s, "=")
			m[k] = v
		}
		return S3Options{Getenv: func(k string) string { return m[k] }}
	}
	for _, c := range []struct{ spec, bucket, prefix string }{
		{"s3://my-bucket", "my-bucket", ""},
		{"s3://my.bucket/", "my.bucket", ""},
		{"s3://abc/a/b", "abc", "a/b"},
		{"s3://abc//a/b/", "abc", "a/b"},
		{"s3://abc/with%20space", "abc", "with space"},
	} {
		st, err := Open(ctx, c.spec, Options{S3: env()})
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		s := st.(*s3Store)
		if s.bucket != c.bucket || s.prefix != c.prefix || s.endpoint != "" {
			t.Fatalf("%s: bucket %q prefix %q endpoint %q", c.spec, s.bucket, s.prefix, s.endpoint)
		}
	}
	for _, spec := range []string{"s3://", "s3://ab", "s3://UPPER", "s3://-lead", "s3://a_b_c", "s3://abc?x=1", "s3://abc/a/../b", "s3://abc/.hidden",
		"s3://AKIAEXAMPLE:topsecretvalue@bucket/x"} {
		_, err := Open(ctx, spec, Options{S3: env()})
		if err == nil {
			t.Fatalf("%s: accepted", spec)
		}
		if strings.Contains(err.Error(), "topsecretvalue") {
			t.Fatalf("%s: the secret is in the error: %v", spec, err)
		}
		t.Logf("%s: %v", spec, err)
	}
	// Endpoint: the environment first, then git config; path-style.
	st, err := Open(ctx, "s3://abc", Options{S3: S3Options{Endpoint: "https://s3.example.test/", Getenv: env().Getenv}})
	if err != nil || st.(*s3Store).endpoint != "https://s3.example.test" || !st.(*s3Store).client.Options().UsePathStyle {
		t.Fatalf("configured endpoint: %v %v", st, err)
	}
	if r := st.(*s3Store).client.Options().Region; r != "auto" {
		t.Fatalf("region with a custom endpoint and none configured: %q, want auto", r)
	}
	st, err = Open(ctx, "s3://abc", Options{S3: S3Options{Endpoint: "https://cfg.example.test", Getenv: env(EnvS3Endpoint+"=http://127.0.0.1:9", "AWS_REGION=auto").Getenv}})
	if err != nil || st.(*s3Store).endpoint != "http://127.0.0.1:9" || st.(*s3Store).client.Options().Region != "auto" {
		t.Fatalf("environment endpoint: %v %v", st, err)
	}
	for _, ep := range []string{"ftp://x", "https://AKIAEXAMPLE:topsecretvalue@s3.example.test", "https://h/?x=1", "not a url"} {
		_, err := Open(ctx, "s3://abc", Options{S3: S3Options{Endpoint: ep, Getenv: env().Getenv}})
		if k, _ := fault.KindOf(err); err == nil || k != fault.Config || strings.Contains(err.Error(), "topsecretvalue") {
			t.Fatalf("endpoint %q: %v", ep, err)
		}
	}
	// Reinstate's pair: both or neither.
	for _, kv := range []string{EnvS3AccessKeyID + "=AKIA", EnvS3SecretAccessKey + "=topsecretvalue"} {
		_, err := Open(ctx, "s3://abc", Options{S3: env(kv)})
		if !errors.Is(err, ErrS3Credentials) || strings.Contains(err.Error(), "topsecretvalue") {
			t.Fatalf("only %s: %v", kv, err)
		}
	}
}

// TestS3ProbeRefusesUnconditionalService: through a proxy that drops
// If-None-Match (or If-Match) from every request and signs it again, as a
// service that ignores conditional writes behaves, the first write is
// refused with ErrNoConditionalWrites, nothing of ours is written, and the
// probe object is deleted. Directly against the server the same store
// writes.
func TestS3ProbeRefusesUnconditionalService(t *testing.T) {
	t.Parallel()
	srv := s3test.Shared(t)
	ctx := testCtx(t)
	for _, drop := range []string{"If-None-Match", "If-Match"} {
		bucket := srv.NewBucket(t)
		proxy := httptest.NewServer(dropHeaderProxy(t, srv, drop))
		st := openS3(t, srv, "s3://"+bucket+"/pfx", 0, EnvS3Endpoint+"="+proxy.URL)
		_, err := st.Create(ctx, conformManifest, strings.NewReader("m"))
		if k, _ := fault.KindOf(err); !errors.Is(err, ErrNoConditionalWrites) || k != fault.Remote {
			t.Fatalf("dropping %s: create: %v, want ErrNoConditionalWrites", drop, err)
		}
		t.Logf("dropping %s: %v", drop, err)
		if _, err := st.Update(ctx, conformManifest, strings.NewReader("m"), `"x"`); !errors.Is(err, ErrNoConditionalWrites) {
			t.Fatalf("dropping %s: update: %v", drop, err)
		}
		if keys := bucketKeys(t, srv, bucket, ""); len(keys) != 0 {
			t.Fatalf("dropping %s: left %q in the bucket", drop, keys)
		}
		proxy.Close()
		direct := openS3(t, srv, "s3://"+bucket+"/pfx", 0)
		if _, err := direct.Create(ctx, conformManifest, strings.NewReader("m")); err != nil {
			t.Fatalf("direct create after the probe passes: %v", err)
		}
		if keys := bucketKeys(t, srv, bucket, ""); fmt.Sprint(keys) != fmt.Sprint([]string{"pfx/" + conformManifest}) {
			t.Fatalf("after a passing probe: %q", keys)
		}
	}
}

// dropHeaderProxy forwards to srv with header drop removed from PUT and
// POST requests, every request signed again with the server's credentials
// (SigV4 signs the host and the conditional headers).
func dropHeaderProxy(t *testing.T, srv *s3test.Server, drop string) http.Handler {
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	signer := v4.NewSigner()
	creds := aws.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		out := r.Out
		out.Host = target.Host
		if out.Method == http.MethodPut || out.Method == http.MethodPost {
			out.Header.Del(drop)
		}
		// The client signed for the proxy's host: sign every request again.
		out.Header.Del("Authorization")
		out.Header.Del("X-Amz-Date")
		payload := out.Header.Get("X-Amz-Content-Sha256")
		if err := signer.SignHTTP(context.Background(), creds, out, payload, "s3", "us-east-1", time.Now()); err != nil {
			t.Errorf("re-sign: %v", err)
		}
	}}
}
