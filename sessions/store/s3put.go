//go:build !ctx_lean

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// cond is the precondition of a write: create-if-absent or
// replace-if-ETag.
type cond struct {
	ifNoneMatch bool   // If-None-Match: *
	ifMatch     string // If-Match: <etag>
}

func (c cond) apply(ifNoneMatch, ifMatch **string) {
	if c.ifNoneMatch {
		*ifNoneMatch = aws.String("*")
	}
	if c.ifMatch != "" {
		*ifMatch = aws.String(c.ifMatch)
	}
}

// errPrecondition is a write refused by its precondition (412, or 409
// ConditionalRequestConflict: another conditional write to the key was in
// flight).
var errPrecondition = errors.New("precondition failed")

// put streams body to objKey under c: one PutObject when it fits in one
// part, else a multipart upload whose completion carries the condition.
// Memory: one part buffer, whatever the body's size. Returns the new ETag.
func (s *s3Store) put(ctx context.Context, objKey string, body io.Reader, c cond) (Version, error) {
	buf := make([]byte, s.partSize)
	n, err := io.ReadFull(body, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return s.putOne(ctx, objKey, buf[:n], c)
	case err != nil:
		return "", err
	}
	var one [1]byte
	m, err := io.ReadFull(body, one[:])
	switch {
	case errors.Is(err, io.EOF):
		return s.putOne(ctx, objKey, buf, c)
	case err != nil:
		return "", err
	}
	return s.putMultipart(ctx, objKey, buf, io.MultiReader(bytes.NewReader(one[:m]), body), c)
}

// putOne is a single conditional PutObject.
func (s *s3Store) putOne(ctx context.Context, objKey string, data []byte, c cond) (Version, error) {
	in := &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(objKey), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/octet-stream"),
	}
	c.apply(&in.IfNoneMatch, &in.IfMatch)
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return "", preconditionErr(err)
	}
	return s.etagOf(ctx, objKey, out.ETag)
}

// etagOf is the ETag a write returned, or a HEAD's when it returned none.
func (s *s3Store) etagOf(ctx context.Context, objKey string, etag *string) (Version, error) {
	if e := aws.ToString(etag); e != "" {
		return Version(e), nil
	}
	h, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(objKey)})
	if err != nil {
		return "", err
	}
	if e := aws.ToString(h.ETag); e != "" {
		return Version(e), nil
	}
	return "", errors.New("the service sent no ETag")
}

// putMultipart uploads first (a full part) and the rest of body in parts
// of s.partSize, then completes the upload under c. On any failure the
// upload is aborted, so no parts are left behind.
func (s *s3Store) putMultipart(ctx context.Context, objKey string, first []byte, rest io.Reader, c cond) (v Version, err error) {
	cr, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(objKey), ContentType: aws.String("application/octet-stream"),
	})
	if err != nil {
		return "", err
	}
	uploadID := cr.UploadId
	defer func() {
		if err != nil {
			// The caller's context may be what ended the upload.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(objKey), UploadId: uploadID})
		}
	}()
	var parts []types.CompletedPart
	buf := first
	for num := int32(1); ; num++ {
		if num > s3MaxParts {
			return "", fmt.Errorf("object larger than %d parts of %d bytes", s3MaxParts, s.partSize)
		}
		up, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: aws.String(s.bucket), Key: aws.String(objKey), UploadId: uploadID, PartNumber: aws.Int32(num),
			Body: bytes.NewReader(buf), ContentLength: aws.Int64(int64(len(buf))),
		})
		if err != nil {
			return "", err
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(num)})
		n, rerr := io.ReadFull(rest, first[:cap(first)])
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			return "", rerr
		}
		buf = first[:n]
	}
	in := &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(objKey), UploadId: uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	}
	c.apply(&in.IfNoneMatch, &in.IfMatch)
	out, err := s.client.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return "", preconditionErr(err)
	}
	return s.etagOf(ctx, objKey, out.ETag)
}

// preconditionErr maps a refused precondition to errPrecondition.
func preconditionErr(err error) error {
	switch s3Code(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return fmt.Errorf("%w: %w", errPrecondition, err)
	}
	switch httpStatus(err) {
	case 412, 409:
		return fmt.Errorf("%w: %w", errPrecondition, err)
	}
	return err
}
