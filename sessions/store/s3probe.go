//go:build !ctx_lean

package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ProbeDir is where the conditional-write probe writes, below the store's
// prefix: a name starting with "." is never a store key, so List never
// shows it, and Reinstate ignores keys outside its profile prefix.
const ProbeDir = ".git-ctx-probe"

// probe checks, once per process before the first write, that the service
// honours conditional writes, as Reinstate's init does. With a random
// object <prefix>/.git-ctx-probe/<32 hex>:
//
//  1. PutObject with If-None-Match: * must succeed (the key is new);
//  2. the same again must be refused (412): the service honours
//     If-None-Match;
//  3. PutObject with If-Match: <an ETag the object never had> must be
//     refused (412): the service honours If-Match;
//  4. PutObject with If-Match: <the object's ETag> must succeed.
//
// The object is deleted afterwards whatever the outcome. A service that
// accepts step 2 or 3 would let two concurrent pushes overwrite each
// other's manifest update: ErrNoConditionalWrites, and nothing of ours is
// written. Transport and permission errors are returned as they are (and
// the probe runs again on the next write).
func (s *s3Store) probe(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probed {
		return nil
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	key := ProbeDir + "/" + hex.EncodeToString(rnd[:])
	objKey := s.objectKey(key)
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		s.client.DeleteObject(dctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(objKey)})
	}()
	refuse := func(what string) error {
		return fmt.Errorf("%w: %s accepted a PutObject with %s on %s: refusing to write, since concurrent pushes could lose updates (use a service that supports conditional writes: AWS S3, Cloudflare R2, MinIO, SeaweedFS…)",
			ErrNoConditionalWrites, s.Describe(), what, key)
	}
	v1, err := s.putOne(ctx, objKey, []byte("ok"), cond{ifNoneMatch: true})
	if err != nil {
		if errors.Is(err, errPrecondition) {
			return fmt.Errorf("%w: %s refused to create a new probe object %s with If-None-Match: *", ErrNoConditionalWrites, s.Describe(), key)
		}
		return s.opError("probe: create", key, err)
	}
	switch _, err := s.putOne(ctx, objKey, []byte("no"), cond{ifNoneMatch: true}); {
	case err == nil:
		return refuse("If-None-Match: * over an existing object")
	case !errors.Is(err, errPrecondition):
		return s.opError("probe: create again", key, err)
	}
	switch _, err := s.putOne(ctx, objKey, []byte("no"), cond{ifMatch: `"00000000000000000000000000000000"`}); {
	case err == nil:
		return refuse("If-Match: <an ETag the object does not have>")
	case !errors.Is(err, errPrecondition):
		return s.opError("probe: update with a wrong ETag", key, err)
	}
	if _, err := s.putOne(ctx, objKey, []byte("ok"), cond{ifMatch: string(v1)}); err != nil {
		if errors.Is(err, errPrecondition) {
			return fmt.Errorf("%w: %s refused a PutObject with If-Match: <the object's own ETag> on %s", ErrNoConditionalWrites, s.Describe(), key)
		}
		return s.opError("probe: update", key, err)
	}
	s.probed = true
	return nil
}
