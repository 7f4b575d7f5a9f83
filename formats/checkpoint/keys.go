package checkpoint

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
)

// PEM block types of device keys. The bodies are the raw 32-byte public key
// and the 32-byte private seed, as ghyll writes them.
const (
	PublicKeyPEMType  = "ED25519 PUBLIC KEY"
	PrivateKeyPEMType = "ED25519 PRIVATE KEY"
)

// MaxKeyFileSize bounds a PEM key file.
const MaxKeyFileSize = 4096

// EncodePublicKey returns the PEM encoding of pub.
func EncodePublicKey(pub ed25519.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: PublicKeyPEMType, Bytes: pub})
}

// EncodePrivateKey returns the PEM encoding of the seed of priv.
func EncodePrivateKey(priv ed25519.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: PrivateKeyPEMType, Bytes: priv.Seed()})
}

// ParsePublicKey decodes a PEM public key. Like ghyll it takes the first PEM
// block; unlike ghyll it insists on the block type and on exactly 32 bytes,
// and refuses trailing non-whitespace.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	b, err := decodeOne(data, PublicKeyPEMType, ed25519.PublicKeySize)
	if err != nil {
		return nil, err
	}
	return ed25519.PublicKey(b), nil
}

// ReadPublicKey reads a PEM public key from r (a key file): at most
// MaxKeyFileSize+1 bytes, so a longer input is refused by ParsePublicKey
// without being read whole.
func ReadPublicKey(r io.Reader) (ed25519.PublicKey, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxKeyFileSize+1))
	if err != nil {
		return nil, err
	}
	return ParsePublicKey(data)
}

// ParsePrivateKey decodes a PEM private key (a 32-byte seed).
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	b, err := decodeOne(data, PrivateKeyPEMType, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(b), nil
}

func decodeOne(data []byte, typ string, size int) ([]byte, error) {
	if len(data) > MaxKeyFileSize {
		return nil, fmt.Errorf("%w: %d bytes is too large for a key file", ErrBadKey, len(data))
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrBadKey)
	}
	if block.Type != typ {
		return nil, fmt.Errorf("%w: PEM type %q, want %q", ErrBadKey, block.Type, typ)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("%w: unexpected PEM headers", ErrBadKey)
	}
	if len(block.Bytes) != size {
		return nil, fmt.Errorf("%w: %d key bytes, want %d", ErrBadKey, len(block.Bytes), size)
	}
	for _, c := range rest {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return nil, fmt.Errorf("%w: data after the PEM block", ErrBadKey)
		}
	}
	return block.Bytes, nil
}

// Fingerprint is a short, stable name for a public key: "SHA256:" and the
// first 16 hex characters of the SHA-256 of the raw key.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + hex.EncodeToString(sum[:8])
}
