// Package vectorfile reads the repository's test vectors
// (testdata/vectors/*.json, copies of the shared lean-ctx and ghyll
// vectors) for the tests of the formats packages, and makes the ed25519
// key of a vector's seed. It is imported by tests only.
package vectorfile

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Dir is testdata/vectors as seen from a package directly under formats/
// (the working directory of its tests).
var Dir = filepath.Join("..", "..", "testdata", "vectors")

// Load decodes the vector file name (e.g. "snapshot.json") as a T with
// encoding/json, failing t when it cannot be read or decoded.
func Load[T any](t testing.TB, name string) T {
	t.Helper()
	var v T
	data, err := os.ReadFile(filepath.Join(Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// Key is the ed25519 key of a vector's seed_hex (32 bytes in hex), failing
// t when it is not one.
func Key(t testing.TB, seedHex string) ed25519.PrivateKey {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("seed_hex %q is not a %d-byte hex seed (%v)", seedHex, ed25519.SeedSize, err)
	}
	return ed25519.NewKeyFromSeed(seed)
}
