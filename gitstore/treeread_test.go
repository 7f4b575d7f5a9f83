package gitstore

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestObjectIDerSameAsObjectID: the reused hash state gives objectID's id
// for every type and size, one object after another.
func TestObjectIDerSameAsObjectID(t *testing.T) {
	var o objectIDer
	for _, typ := range []plumbing.ObjectType{plumbing.BlobObject, plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject} {
		for _, n := range []int{0, 1, 9, 10, 63, 64, 65, 1000, 1 << 16} {
			data := bytes.Repeat([]byte{byte(n)}, n)
			if got, want := o.of(typ, data), objectID(typ, data); got != want {
				t.Fatalf("%s of %d bytes: %s, objectID %s", typ, n, got, want)
			}
		}
	}
}
