package dalek

import (
	"crypto/ed25519"
	"encoding/hex"
	"testing"
)

func TestOnCurve(t *testing.T) {
	for i := byte(1); i < 20; i++ {
		seed := make([]byte, 32)
		seed[0] = i
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		if !OnCurve(pub) {
			t.Fatalf("a real public key %x is not on the curve", pub)
		}
	}
	// y = 2 gives a non-square x²: not a point.
	notAPoint, _ := hex.DecodeString("0200000000000000000000000000000000000000000000000000000000000000")
	if OnCurve(notAPoint) {
		t.Fatal("y=2 accepted")
	}
	if OnCurve(make([]byte, 31)) {
		t.Fatal("31 bytes accepted")
	}
}

func TestHexVal(t *testing.T) {
	for c, want := range map[byte]byte{'0': 0, '9': 9, 'a': 10, 'F': 15} {
		if v, ok := HexVal(c); !ok || v != want {
			t.Errorf("%q: %d %v", c, v, ok)
		}
	}
	for _, c := range []byte{'g', '+', ' ', 0xff} {
		if _, ok := HexVal(c); ok {
			t.Errorf("%q accepted", c)
		}
	}
}

// TestDecodeHex: either case decodes; an odd length and a bad digit give
// lean-ctx's texts, the offset being the pair's.
func TestDecodeHex(t *testing.T) {
	if b, err := DecodeHex("00fFaB"); err != nil || string(b) != "\x00\xff\xab" {
		t.Fatalf("DecodeHex(00fFaB) = %x, %v", b, err)
	}
	for in, want := range map[string]string{
		"abc":  "odd-length hex string",
		"00+1": "hex decode at 2: invalid digit found in string",
		"0g":   "hex decode at 0: invalid digit found in string",
	} {
		if _, err := DecodeHex(in); err == nil || err.Error() != want {
			t.Errorf("DecodeHex(%q): %v, want %q", in, err, want)
		}
	}
}
