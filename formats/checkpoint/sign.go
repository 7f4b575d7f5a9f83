package checkpoint

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/formats/sigcheck"
)

// Seal is SealRule under RuleSeedV1: what git-ctx does to every record it
// writes in a ctx-v1 branch.
func (cp *Checkpoint) Seal(priv ed25519.PrivateKey) error {
	return cp.SealRule(priv, RuleSeedV1)
}

// SealRule sets Version (when zero) to rule's Version, Hash under rule and
// Signature with priv (ed25519 over the 64 ASCII bytes of Hash). Under
// RuleGhyllV2 (a ghyll-v1 branch) the record is then what ghyll's own code
// writes and verifies: "emb" and unknown members are written by MarshalFile
// but are outside the hash, so nothing vouches for them.
//
// Every string of the record is first made valid UTF-8 (each invalid byte
// becomes U+FFFD): JSON cannot carry invalid bytes, so a hash over them
// would never match the record read back from its file.
func (cp *Checkpoint) SealRule(priv ed25519.PrivateKey, rule Rule) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("%w: private key is %d bytes", ErrBadKey, len(priv))
	}
	v := rule.Version()
	if v == 0 {
		return fmt.Errorf("unknown canonicalisation rule %q", rule)
	}
	if cp.Version == 0 {
		cp.Version = v
	}
	cp.MakeValidUTF8()
	h, err := cp.ComputeHash(rule)
	if err != nil {
		return err
	}
	cp.Hash = h
	cp.Signature = hex.EncodeToString(ed25519.Sign(priv, []byte(h)))
	return nil
}

// Version is the format version of records written under r: 1 for
// RuleSeedV1 (WriteVersion), 2 for RuleGhyllV2 (what ghyll's code writes),
// 0 for an unknown rule.
func (r Rule) Version() int {
	switch r {
	case RuleSeedV1:
		return WriteVersion
	case RuleGhyllV2:
		return 2
	}
	return 0
}

// MatchRule returns the first rule under which the stored hash equals the
// recomputed one: RuleSeedV1, then RuleGhyllV2. It wraps ErrHashMismatch
// when neither matches.
func (cp *Checkpoint) MatchRule() (Rule, error) {
	var firstErr error
	for _, r := range []Rule{RuleSeedV1, RuleGhyllV2} {
		ok, err := cp.hashIs(r, cp.Hash)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if ok {
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
	var sig [ed25519.SignatureSize]byte
	if !decodeLowerHex(sig[:], cp.Signature) {
		return fmt.Errorf("%w: sig is not 128 lowercase hex characters", ErrBadSignature)
	}
	if !sigcheck.Verify(pub, []byte(cp.Hash), sig[:]) {
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

// MakeValidUTF8 replaces every invalid UTF-8 byte in the record's strings
// (lists and resumed_from included) with U+FFFD, which is what a JSON
// decoder reads back for such a byte. Lists are copied before they change.
// Unknown members are left as they are.
func (cp *Checkpoint) MakeValidUTF8() {
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	for _, p := range []*string{&cp.DeviceID, &cp.AuthorID, &cp.RepoRemote, &cp.Branch, &cp.SessionID,
		&cp.ActiveModel, &cp.Summary} {
		*p = valid(*p)
	}
	for _, l := range []*[]string{&cp.FilesTouched, &cp.ToolsUsed, &cp.InjectionSig} {
		for i, s := range *l {
			if !utf8.ValidString(s) {
				c := append([]string{}, (*l)...)
				c[i] = valid(s)
				*l = c
			}
		}
	}
	if r := cp.ResumedFrom; r != nil && (!utf8.ValidString(r.Session) || !utf8.ValidString(r.Hash)) {
		cp.ResumedFrom = &ResumedFrom{Session: valid(r.Session), Hash: valid(r.Hash)}
	}
}

// decodeLowerHex decodes s, exactly 2*len(dst) lowercase hex digits, into
// dst; false for anything else (what hex.DecodeString decodes to len(dst)
// bytes whose hex.EncodeToString is s again).
func decodeLowerHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := lowerHexDigit(s[2*i])
		lo, ok2 := lowerHexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func lowerHexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
