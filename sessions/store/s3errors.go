//go:build !ctx_lean

package store

import (
	"errors"
	"fmt"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// s3Code is the S3 error code of err ("NoSuchKey", "AccessDenied", …), or "".
func s3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// httpStatus is the HTTP status of a failed S3 response, or 0.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// isNotFound reports a missing object (not a missing bucket).
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	switch s3Code(err) {
	case "NoSuchKey", "NotFound":
		return true
	case "NoSuchBucket":
		return false
	}
	return httpStatus(err) == 404 && s3Code(err) == ""
}

// s3Error is a failed S3 operation, its text scrubbed of credentials. It
// wraps the SDK's error so callers can still inspect it.
type s3Error struct {
	msg string
	err error
}

func (e *s3Error) Error() string { return e.msg }
func (e *s3Error) Unwrap() error { return e.err }

// opError describes a failed operation on key (kind Remote) with a hint for
// the common causes, never a credential.
func (s *s3Store) opError(op, key string, err error) error {
	hint := ""
	switch code := s3Code(err); {
	case code == "NoSuchBucket":
		hint = ": the bucket does not exist (create it, or fix the store URL)"
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied" || code == "InvalidToken" || code == "ExpiredToken":
		hint = ": the credentials were refused (check REINSTATE_S3_ACCESS_KEY_ID/REINSTATE_S3_SECRET_ACCESS_KEY or the AWS credential chain)"
	case strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role found"):
		hint = ": no credentials found (set REINSTATE_S3_ACCESS_KEY_ID and REINSTATE_S3_SECRET_ACCESS_KEY, or configure the AWS credential chain)"
	}
	return fault.Wrap(fault.Remote, s.scrub(fmt.Errorf("%s %s in %s%s: %w", op, key, s.Describe(), hint, err)))
}

// scrub returns err with every credential string the store knows replaced
// by "***" in its text (the SDK's messages do not carry secrets, but a
// server's error message is the server's choice).
func (s *s3Store) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, sec := range s.secrets {
		if len(sec) >= 4 {
			clean = strings.ReplaceAll(clean, sec, "***")
		}
	}
	if clean == msg {
		return err
	}
	return &s3Error{msg: clean, err: err}
}
