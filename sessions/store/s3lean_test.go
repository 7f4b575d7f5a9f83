//go:build ctx_lean

package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestLeanOpenS3NotLinked: in the lean build an s3:// spec is refused with
// ErrS3NotLinked (what cmd/git-ctx hands to git-ctx-full), without any
// credential of the URL in the message.
func TestLeanOpenS3NotLinked(t *testing.T) {
	_, err := Open(context.Background(), "s3://user:secret@bucket/prefix", Options{})
	if !errors.Is(err, ErrS3NotLinked) {
		t.Fatalf("Open(s3://…) in the lean build: %v, want ErrS3NotLinked", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error carries the URL's credentials: %v", err)
	}
}
