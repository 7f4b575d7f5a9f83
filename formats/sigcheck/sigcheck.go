// Package sigcheck is the one place git-ctx checks an ed25519 signature of
// a record, a timeline line, an adoption or a lean-ctx signature.
//
// Verify accepts exactly the signatures crypto/ed25519.Verify accepts (the
// rule ghyll and every other reader of these records applies): cofactorless
// verification ([S]B - [k]A must encode to the signature's R byte for byte,
// so a non-canonical R is rejected), S must be canonical (S < L), the public
// key may be any encoding of a curve point (small order and non-canonical
// encodings included, as the standard library accepts them) and k hashes
// the public key's bytes as given. It is computed by curve25519-voi with
// its VerifyOptionsStdLib preset, which implements that rule, and public
// keys' precomputed tables are kept for repeated keys (a branch has a few
// device keys and many records). Batch verification is not used: it is
// cofactored and would accept signatures the standard library rejects.
// TestDifferential and FuzzVerify compare Verify with crypto/ed25519.
package sigcheck

import (
	"sync"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// PublicKeySize and SignatureSize are ed25519's sizes in bytes.
const (
	PublicKeySize = 32
	SignatureSize = 64
)

// maxKeys bounds the table of expanded keys (~1.5 KiB each); the table is
// emptied when it is full.
const maxKeys = 1024

var (
	stdlib = &voi.Options{Verify: voi.VerifyOptionsStdLib}

	mu   sync.RWMutex
	keys = map[[PublicKeySize]byte]*voi.ExpandedPublicKey{}
)

// Verify reports whether sig is a valid ed25519 signature of msg by pub,
// with the acceptance rule of crypto/ed25519.Verify. Unlike that function
// it returns false, never panics, for a public key that is not
// PublicKeySize bytes.
func Verify(pub, msg, sig []byte) bool {
	if len(pub) != PublicKeySize || len(sig) != SignatureSize {
		return false
	}
	k := expanded(pub)
	if k == nil {
		return false // not a point: crypto/ed25519 rejects it too
	}
	return voi.VerifyExpandedWithOptions(k, msg, sig, stdlib)
}

// expanded returns pub's precomputed form, nil when pub does not decode to
// a curve point.
func expanded(pub []byte) *voi.ExpandedPublicKey {
	var id [PublicKeySize]byte
	copy(id[:], pub)
	mu.RLock()
	k, ok := keys[id]
	mu.RUnlock()
	if ok {
		return k
	}
	k, err := voi.NewExpandedPublicKey(voi.PublicKey(pub))
	if err != nil {
		k = nil
	}
	mu.Lock()
	if len(keys) >= maxKeys {
		clear(keys)
	}
	keys[id] = k
	mu.Unlock()
	return k
}
