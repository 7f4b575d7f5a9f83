package ctxpkg

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/git-ctx/git-ctx/formats/dalek"
)

// SignatureAlgorithm is the only algorithm lean-ctx signs and accepts.
const SignatureAlgorithm = dalek.Algorithm

// SignPrefix starts the ctxpkg-sign-v1 signing input.
const SignPrefix = "ctxpkg-sign-v1:"

// Signature errors, texts as lean-ctx's. The errors of malformed signature
// material are package dalek's (dalek.ErrPublicKeyHex, …), shared with
// snapshots.
var (
	// ErrSignatureRejected is the import/verify text for a signature that
	// does not verify.
	ErrSignatureRejected = errors.New("signature verification failed — the package was modified after signing")
	// ErrBadKey: a private key of the wrong size was given to Sign.
	ErrBadKey = dalek.ErrBadKey
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
	msg := SigningMessage(m.Name, m.Version, m.Integrity.SHA256)
	pub, value, err := dalek.Sign(priv, []byte(msg))
	if err != nil {
		return err
	}
	m.Signature = &Signature{Algorithm: SignatureAlgorithm, PublicKey: pub, Value: value}
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
	if err := dalek.CheckAlgorithm(sig.Algorithm); err != nil {
		return false, err
	}
	msg := SigningMessage(m.Name, m.Version, m.Integrity.SHA256)
	return dalek.Verify(sig.PublicKey, sig.Value, []byte(msg), pub)
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
