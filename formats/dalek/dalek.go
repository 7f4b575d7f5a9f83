// Package dalek reproduces what lean-ctx's Rust crates accept where Go's
// standard library behaves differently: whether a 32-byte ed25519 public
// key decompresses to a curve point (as curve25519-dalek decides, which
// crypto/ed25519 does not expose), and hex digits of either case (as the
// hex crate reads them, DecodeHex). On these it builds lean-ctx's ed25519
// signature checks with their error texts and its hex signing (Verify,
// Sign). The snapshot and package formats share it.
package dalek

import (
	"fmt"
	"math/big"
)

// ErrNotAPoint is the detail ed25519-dalek 2.2 displays for a public key
// that does not decompress (the exact text lean-ctx prints is unverified).
const ErrNotAPoint = "signature error: Cannot decompress Edwards point"

var (
	fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// curveD = -121665/121666 mod p.
	curveD = func() *big.Int {
		inv := new(big.Int).ModInverse(big.NewInt(121666), fieldP)
		d := new(big.Int).Mul(big.NewInt(-121665), inv)
		return d.Mod(d, fieldP)
	}()
	legendreExp = new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 1)
)

// OnCurve reports whether the 32-byte encoding decompresses to a point of
// edwards25519 the way curve25519-dalek decompresses it: the top bit is the
// sign of x, y is read from the low 255 bits and reduced mod p (non-canonical
// encodings are accepted), and x² = (y²-1)/(d·y²+1) must have a square root.
func OnCurve(enc []byte) bool {
	if len(enc) != 32 {
		return false
	}
	le := make([]byte, 32)
	for i := range 32 {
		le[31-i] = enc[i]
	}
	le[0] &= 0x7f
	y := new(big.Int).SetBytes(le)
	y.Mod(y, fieldP)
	y2 := new(big.Int).Mul(y, y)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	u.Mod(u, fieldP)
	v := new(big.Int).Mul(curveD, y2)
	v.Add(v, big.NewInt(1))
	v.Mod(v, fieldP)
	// u/v is a square iff u·v is (v ≠ 0 since d is not a square).
	uv := new(big.Int).Mul(u, v)
	uv.Mod(uv, fieldP)
	if uv.Sign() == 0 {
		return true
	}
	return new(big.Int).Exp(uv, legendreExp, fieldP).Cmp(big.NewInt(1)) == 0
}

// HexVal is the value of one hex digit of either case.
func HexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeHex decodes pairs of hex digits of either case as the hex crate
// does for lean-ctx, with its error texts: "odd-length hex string", or "hex
// decode at {i}: invalid digit found in string" (i the byte offset of the
// pair). Unlike Rust's from_str_radix it refuses '+'.
func DecodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, hexError("odd-length hex string")
	}
	out := make([]byte, len(s)/2)
	for i := 0; i < len(s); i += 2 {
		hi, ok1 := HexVal(s[i])
		lo, ok2 := HexVal(s[i+1])
		if !ok1 || !ok2 {
			return nil, hexError(fmt.Sprintf("hex decode at %d: invalid digit found in string", i))
		}
		out[i/2] = hi<<4 | lo
	}
	return out, nil
}

// hexError is a DecodeHex error: only its text matters.
type hexError string

func (e hexError) Error() string { return string(e) }
