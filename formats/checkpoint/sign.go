package checkpoint

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
)

// Seal sets Version (when zero), Hash under RuleSeedV1 and Signature with
// priv. It is what git-ctx does to every record it writes.
func (cp *Checkpoint) Seal(priv ed25519.PrivateKey) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: private key is %d bytes", ErrBadKey, len(priv))
	}
	if cp.Version == 0 {
		cp.Version = WriteVersion
	}
	h, err := cp.ComputeHash(RuleSeedV1)
	if err != nil {
		return err
	}
	cp.Hash = h
	cp.Signature = hex.EncodeToString(ed25519.Sign(priv, []byte(h)))
	return nil
}

// MatchRule returns the first rule under which the stored hash equals the
// recomputed one: RuleSeedV1, then RuleGhyllV2. It wraps ErrHashMismatch
// when neither matches.
func (cp *Checkpoint) MatchRule() (Rule, error) {
	var firstErr error
	for _, r := range []Rule{RuleSeedV1, RuleGhyllV2} {
		h, err := cp.ComputeHash(r)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if h == cp.Hash {
			return r, nil
		}
	}
	if firstErr != nil {
		return "", fmt.Errorf("%w: %v", ErrHashMismatch, firstErr)
	}
	return "", fmt.Errorf("%w: stored hash %s matches neither rule", ErrHashMismatch, short(cp.Hash))
}

// VerifySignature checks sig: ed25519 over the 64 ASCII bytes of Hash.
func (cp *Checkpoint) VerifySignature(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: public key is %d bytes", ErrBadKey, len(pub))
	}
	// Lowercase only: an uppercase spelling would verify too, giving one
	// record two different files under the same hash.
	sig, err := hex.DecodeString(cp.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || hex.EncodeToString(sig) != cp.Signature {
		return fmt.Errorf("%w: sig is not 128 lowercase hex characters", ErrBadSignature)
	}
	if !ed25519.Verify(pub, []byte(cp.Hash), sig) {
		return fmt.Errorf("%w: signature does not match the device key", ErrBadSignature)
	}
	return nil
}

// Verify checks shape, hash (either rule) and signature, in that order, and
// returns the rule that matched.
func (cp *Checkpoint) Verify(pub ed25519.PublicKey) (Rule, error) {
	if err := cp.CheckShape(); err != nil {
		return "", err
	}
	rule, err := cp.MatchRule()
	if err != nil {
		return "", err
	}
	if err := cp.VerifySignature(pub); err != nil {
		return rule, err
	}
	return rule, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
