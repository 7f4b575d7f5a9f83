package snapshot

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeyFileName is the publisher key file in <data_dir>/keys/, shared by
// snapshot and package signing.
const KeyFileName = "ctxpkg-ed25519.key"

// EncodeKeyFile returns the key file content for priv: the 32-byte seed as
// 64 lowercase hex characters, no newline.
func EncodeKeyFile(priv ed25519.PrivateKey) []byte {
	return []byte(hex.EncodeToString(priv.Seed()))
}

// ParseKeyFile reads key file content as lean-ctx does: surrounding
// whitespace is trimmed and exactly 64 hex characters (either case) must
// remain, else the error is "signing key file is corrupt (expected 64 hex
// chars, got {n} chars) — delete it to regenerate (this changes your
// publisher identity!)" with n the length in bytes of the trimmed text.
func ParseKeyFile(data []byte) (ed25519.PrivateKey, error) {
	text := strings.TrimSpace(string(data))
	seed, err := hex.DecodeString(text)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w (expected 64 hex chars, got %d chars) — delete it to regenerate (this changes your publisher identity!)", ErrKeyFileCorrupt, len(text))
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
