package dalek

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/formats/sigcheck"
)

// Algorithm is the only signature algorithm lean-ctx signs with and accepts
// (case-sensitive), in snapshots and packages alike.
const Algorithm = "ed25519"

// Errors of lean-ctx's signature checks, texts as lean-ctx's (snapshots and
// packages share them; their packages re-export them under the same names).
var (
	ErrUnsupportedAlgorithm = errors.New("unsupported signature algorithm") // ": {alg}"
	ErrPublicKeyHex         = errors.New("invalid public_key hex")          // ": {e}"
	ErrSignatureHex         = errors.New("invalid signature hex")           // ": {e}"
	ErrPublicKeyLength      = errors.New("public_key must be 32 bytes")
	ErrSignatureLength      = errors.New("signature must be 64 bytes")
	ErrInvalidPublicKey     = errors.New("invalid public key") // ": {e}"
	// ErrBadKey: a private key of the wrong size was given to Sign.
	ErrBadKey = errors.New("bad signing key")
)

// CheckAlgorithm is lean-ctx's first signature check: an algorithm other
// than Algorithm is the error "unsupported signature algorithm: {alg}".
func CheckAlgorithm(alg string) error {
	if alg != Algorithm {
		return fmt.Errorf("%w: %s", ErrUnsupportedAlgorithm, alg)
	}
	return nil
}

// DecodePublicKey decodes a signature's hex public key (DecodeHex), with
// the error "invalid public_key hex: {e}". Its length is not checked.
func DecodePublicKey(publicKeyHex string) (ed25519.PublicKey, error) {
	key, err := DecodeHex(publicKeyHex)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrPublicKeyHex, err)
	}
	return key, nil
}

// Verify checks a hex ed25519 signature over msg as lean-ctx does after the
// algorithm check, in its order: public_key hex, signature hex, key length,
// signature length, point decoding (errors with lean-ctx's texts), then the
// verification itself (true or false). lean-ctx trusts the key the
// signature carries; with a non-nil want, any other key gives false.
func Verify(publicKeyHex, signatureHex string, msg []byte, want ed25519.PublicKey) (bool, error) {
	key, err := DecodePublicKey(publicKeyHex)
	if err != nil {
		return false, err
	}
	value, err := DecodeHex(signatureHex)
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrSignatureHex, err)
	}
	if len(key) != ed25519.PublicKeySize {
		return false, ErrPublicKeyLength
	}
	if len(value) != ed25519.SignatureSize {
		return false, ErrSignatureLength
	}
	if !OnCurve(key) {
		return false, fmt.Errorf("%w: %s", ErrInvalidPublicKey, ErrNotAPoint)
	}
	if want != nil && !bytes.Equal(want, key) {
		return false, nil
	}
	return sigcheck.Verify(key, msg, value), nil
}

// Sign signs msg with priv and returns the public key and the signature as
// lowercase hex, as lean-ctx stores them; ErrBadKey for a key that is not
// ed25519.PrivateKeySize bytes.
func Sign(priv ed25519.PrivateKey, msg []byte) (publicKeyHex, signatureHex string, err error) {
	if err := CheckPrivateKey(priv); err != nil {
		return "", "", err
	}
	return hex.EncodeToString(priv.Public().(ed25519.PublicKey)), hex.EncodeToString(ed25519.Sign(priv, msg)), nil
}

// CheckPrivateKey returns ErrBadKey ("bad signing key: private key is {n}
// bytes, want 64") unless priv is ed25519.PrivateKeySize bytes.
func CheckPrivateKey(priv ed25519.PrivateKey) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: private key is %d bytes, want %d", ErrBadKey, len(priv), ed25519.PrivateKeySize)
	}
	return nil
}
