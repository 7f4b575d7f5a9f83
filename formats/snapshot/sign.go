package snapshot

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"

	"github.com/git-ctx/git-ctx/formats/dalek"
	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// SigningMessage returns the message lean-ctx signs for id: the lowercase hex
// SHA-256 of "ctxsnapshot-sign-v1:" + id. Its 64 ASCII bytes are what the
// Ed25519 signature covers (not the 32-byte digest).
func SigningMessage(id string) string {
	sum := sha256.Sum256([]byte(SignPrefix + id))
	return hex.EncodeToString(sum[:])
}

// Sign sets SnapshotID to ComputeID and Signature to an Ed25519 signature by
// priv over SigningMessage(SnapshotID), with the public key and signature as
// lowercase hex, as lean-ctx's signing does. Any previous signature is
// replaced. A SnapshotID the body hashes to in the Ryu float era (see
// IntegrityEra) is kept: signing never renames a snapshot an older lean-ctx
// wrote.
func (s *Snapshot) Sign(priv ed25519.PrivateKey) error {
	if err := dalek.CheckPrivateKey(priv); err != nil {
		return err
	}
	id, err := s.ComputeID()
	if err != nil {
		return err
	}
	if _, err := s.eraOf(id); err != nil {
		s.SnapshotID = id
	}
	pub, value, err := dalek.Sign(priv, []byte(SigningMessage(s.SnapshotID)))
	s.Signature = &Signature{Algorithm: SignatureAlgorithm, PublicKey: pub, Value: value}
	return err
}

// VerifyIntegrity reports whether the body still hashes to SnapshotID
// (string equality, so an uppercase id never matches) in either float era
// (IntegrityEra). It returns ErrIntegrity when it does not, or an
// ErrUnencodable error.
func (s *Snapshot) VerifyIntegrity() error {
	_, err := s.IntegrityEra()
	return err
}

// IntegrityEra reports which serde_json float era's rendering of the body
// hashes to SnapshotID: serdejson.Zmij (current lean-ctx, and everything
// git-ctx writes) or serdejson.Ryu (a lean-ctx built with serde_json before
// 1.0.147, which wrote 1e16 where zmij writes 1e+16). The Ryu rendering is
// tried only when the Zmij one does not match and the body holds a float the
// eras write differently, so a snapshot without such a float has one id.
// ErrIntegrity when neither matches, or an ErrUnencodable error.
func (s *Snapshot) IntegrityEra() (serdejson.Era, error) {
	id, err := s.ComputeID()
	if err != nil {
		return serdejson.Zmij, err
	}
	return s.eraOf(id)
}

// eraOf is IntegrityEra given the body's current (Zmij) id.
func (s *Snapshot) eraOf(current string) (serdejson.Era, error) {
	if current == s.SnapshotID {
		return serdejson.Zmij, nil
	}
	if s.eraSensitive() {
		if legacy, err := s.computeID(serdejson.Ryu); err == nil && legacy == s.SnapshotID {
			return serdejson.Ryu, nil
		}
	}
	return serdejson.Zmij, ErrIntegrity
}

// Verify checks s as lean-ctx's verify does, in its order:
//
//  1. no signature: false;
//  2. algorithm other than "ed25519": error "unsupported signature algorithm: {alg}";
//  3. recomputed id differs from snapshot_id (in both float eras, see
//     IntegrityEra): false;
//  4. public_key not hex: error "invalid public_key hex: {e}";
//  5. value not hex: error "invalid signature hex: {e}";
//  6. error "public_key must be 32 bytes", then "signature must be 64 bytes";
//  7. public_key not a curve point: error "invalid public key: {e}";
//  8. the Ed25519 verification of value over SigningMessage(snapshot_id).
//
// {e} is "odd-length hex string" or "hex decode at {i}: invalid digit found
// in string" (i = byte offset of the pair). A tampered body, a wrong key or
// a bad signature give false with no error.
//
// If pub is non-nil, the snapshot must also be signed by exactly that key
// (checked after step 7): a snapshot carrying any other key verifies false.
// With a nil pub this is lean-ctx's trust model, which has no key list.
func (s *Snapshot) Verify(pub ed25519.PublicKey) (bool, error) {
	sig := s.Signature
	if sig == nil {
		return false, nil
	}
	if err := dalek.CheckAlgorithm(sig.Algorithm); err != nil {
		return false, err
	}
	if err := s.VerifyIntegrity(); err == ErrIntegrity {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return dalek.Verify(sig.PublicKey, sig.Value, []byte(SigningMessage(s.SnapshotID)), pub)
}

// SignerKey decodes the public key the signature carries (nil when there is
// no signature), with Verify's hex error. Its length is not checked: a key
// that is not 32 bytes is returned as decoded.
func (s *Snapshot) SignerKey() (ed25519.PublicKey, error) {
	if s.Signature == nil {
		return nil, nil
	}
	return dalek.DecodePublicKey(s.Signature.PublicKey)
}

// CheckImport parses data and checks it as lean-ctx's snapshot import does
// before storing anything: a parse failure is "parse snapshot: {e}"; a body
// that does not hash to its id is ErrIntegrity; a signed snapshot must
// verify (malformed signature material is Verify's error, a false result is
// ErrSignatureRejected). Unsigned snapshots are returned without error; the
// caller reports them as carrying no provenance.
func CheckImport(data []byte) (*Snapshot, error) {
	s, err := ParseFile(data)
	if err != nil {
		return nil, err
	}
	if err := s.VerifyIntegrity(); err != nil {
		return nil, err
	}
	if s.Signature == nil {
		return s, nil
	}
	ok, err := s.Verify(nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrSignatureRejected
	}
	return s, nil
}
