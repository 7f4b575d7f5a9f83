package ctxpkg

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// SignatureAlgorithm is the only algorithm lean-ctx signs and accepts.
const SignatureAlgorithm = "ed25519"

// SignPrefix starts the ctxpkg-sign-v1 signing input.
const SignPrefix = "ctxpkg-sign-v1:"

// Signature errors, texts as lean-ctx's.
var (
	ErrUnsupportedAlgorithm = errors.New("unsupported signature algorithm") // ": {alg}"
	ErrPublicKeyHex         = errors.New("invalid public_key hex")          // ": {e}"
	ErrSignatureHex         = errors.New("invalid signature hex")           // ": {e}"
	ErrPublicKeyLength      = errors.New("public_key must be 32 bytes")
	ErrSignatureLength      = errors.New("signature must be 64 bytes")
	ErrInvalidPublicKey     = errors.New("invalid public key") // ": {e}"
	// ErrSignatureRejected is the import/verify text for a signature that
	// does not verify.
	ErrSignatureRejected = errors.New("signature verification failed — the package was modified after signing")
	// ErrBadKey: a private key of the wrong size was given to Sign.
	ErrBadKey = errors.New("bad signing key")
)

// SigningMessage is hex(SHA-256("ctxpkg-sign-v1:{name}:{version}:{sha256}"));
// Ed25519 signs its 64 ASCII bytes.
func SigningMessage(name, version, integritySHA256 string) string {
	sum := sha256.Sum256([]byte(SignPrefix + name + ":" + version + ":" + integritySHA256))
	return hex.EncodeToString(sum[:])
}

// Sign sets Manifest.Signature to an Ed25519 signature by priv over
// SigningMessage of the manifest's name, version and integrity.sha256
// (lowercase hex key and value). It does not recompute the integrity: call
// Seal first for a package built here.
func (m *Manifest) Sign(priv ed25519.PrivateKey) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: private key is %d bytes, want %d", ErrBadKey, len(priv), ed25519.PrivateKeySize)
	}
	msg := SigningMessage(m.Name, m.Version, m.Integrity.SHA256)
	m.Signature = &Signature{
		Algorithm: SignatureAlgorithm,
		PublicKey: hex.EncodeToString(priv.Public().(ed25519.PublicKey)),
		Value:     hex.EncodeToString(ed25519.Sign(priv, []byte(msg))),
	}
	return nil
}

// VerifySignature checks the signature as lean-ctx does, in its order:
// absent → false; algorithm ≠ "ed25519" → error; public_key hex, value hex,
// key length, signature length, point decoding → errors with lean-ctx's
// texts; then the Ed25519 verification → true/false. Any key it carries is
// trusted (lean-ctx has no trust list); pass pub to also require that key
// (another key then gives false).
func (m *Manifest) VerifySignature(pub ed25519.PublicKey) (bool, error) {
	sig := m.Signature
	if sig == nil {
		return false, nil
	}
	if sig.Algorithm != SignatureAlgorithm {
		return false, fmt.Errorf("%w: %s", ErrUnsupportedAlgorithm, sig.Algorithm)
	}
	key, err := decodeHex(sig.PublicKey)
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrPublicKeyHex, err)
	}
	value, err := decodeHex(sig.Value)
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrSignatureHex, err)
	}
	if len(key) != ed25519.PublicKeySize {
		return false, ErrPublicKeyLength
	}
	if len(value) != ed25519.SignatureSize {
		return false, ErrSignatureLength
	}
	if !dalek.OnCurve(key) {
		return false, fmt.Errorf("%w: %s", ErrInvalidPublicKey, dalek.ErrNotAPoint)
	}
	if pub != nil && !bytes.Equal(pub, key) {
		return false, nil
	}
	msg := SigningMessage(m.Name, m.Version, m.Integrity.SHA256)
	return ed25519.Verify(ed25519.PublicKey(key), []byte(msg), value), nil
}

// CheckSignature applies lean-ctx's import policy: unsigned is accepted
// (nil); malformed material is VerifySignature's error; a signature that
// does not verify is ErrSignatureRejected.
func (m *Manifest) CheckSignature() error {
	if m.Signature == nil {
		return nil
	}
	ok, err := m.VerifySignature(nil)
	if err != nil {
		return err
	}
	if !ok {
		return ErrSignatureRejected
	}
	return nil
}

// decodeHex is dalek.DecodeHex: lean-ctx's hex reading and error texts.
var decodeHex = dalek.DecodeHex
