//go:build ctx_lean

package store

import (
	"context"
	"fmt"
)

// OpenS3 in a build with the tag ctx_lean (the shipped git-ctx): the S3
// store and the AWS SDK are not linked, so it returns an error matching
// ErrS3NotLinked before it reads anything; the command is handed to
// git-ctx-full, which has the store.
func OpenS3(_ context.Context, spec string, _ S3Options) (Store, error) {
	return nil, fmt.Errorf("%w: %s", ErrS3NotLinked, redactSpec(spec))
}
