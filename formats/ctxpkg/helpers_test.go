package ctxpkg

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

func prettyOf(s string) []byte { return serdejson.Pretty([]byte(s)) }

// testKey is the tests' key of seed byte b repeated.
func testKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

// sealSigned seals p and, unless priv is nil, signs its manifest with priv.
func sealSigned(t testing.TB, p *Package, priv ed25519.PrivateKey) *Package {
	t.Helper()
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	if priv != nil {
		if err := p.Manifest.Sign(priv); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// sealedFile is the file form (MarshalFile) of p sealed and signed with
// priv (sealSigned).
func sealedFile(t testing.TB, p *Package, priv ed25519.PrivateKey) []byte {
	t.Helper()
	file, err := sealSigned(t, p, priv).MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return file
}
