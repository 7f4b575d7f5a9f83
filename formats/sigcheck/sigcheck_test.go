package sigcheck

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// std is the rule Verify must match: crypto/ed25519.Verify, which panics on
// a public key of the wrong size (Verify returns false).
func std(pub, msg, sig []byte) bool {
	if len(pub) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(pub, msg, sig)
}

// order8 is a point of order 8 (its multiples are the 8 small-order points).
const order8 = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"

var (
	groupOrder, _ = new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	fieldP        = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
)

func point(t testing.TB, enc []byte) *curve.EdwardsPoint {
	t.Helper()
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(enc); err != nil {
		t.Fatal(err)
	}
	var p curve.EdwardsPoint
	if _, err := p.SetCompressedY(&c); err != nil {
		t.Fatalf("decode %x: %v", enc, err)
	}
	return &p
}

func encode(p *curve.EdwardsPoint) []byte {
	var c curve.CompressedEdwardsY
	c.SetEdwardsPoint(p)
	return append([]byte(nil), c[:]...)
}

// smallOrder returns the 8 small-order points.
func smallOrder(t testing.TB) []*curve.EdwardsPoint {
	b, _ := hex.DecodeString(order8)
	g := point(t, b)
	var pts []*curve.EdwardsPoint
	acc := curve.NewEdwardsPoint().Identity()
	for range 8 {
		pts = append(pts, curve.NewEdwardsPoint().Set(acc))
		acc = curve.NewEdwardsPoint().Add(acc, g)
	}
	return pts
}

// le converts between little-endian 32-byte strings and integers.
func le(b []byte) *big.Int {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(r)
}

func toLE(n *big.Int) []byte {
	be := n.FillBytes(make([]byte, 32))
	out := make([]byte, 32)
	for i := range be {
		out[31-i] = be[i]
	}
	return out
}

// encodings returns enc and its non-canonical spellings: the sign bit
// flipped (non-canonical for x = 0) and, when y < 19, y + p.
func encodings(enc []byte) [][]byte {
	out := [][]byte{enc}
	flip := bytes.Clone(enc)
	flip[31] ^= 0x80
	out = append(out, flip)
	y := le(enc)
	y.SetBit(y, 255, 0)
	if y.Cmp(big.NewInt(19)) < 0 {
		hi := toLE(new(big.Int).Add(y, fieldP))
		hi[31] |= enc[31] & 0x80
		out = append(out, hi, append(hi[:31:31], hi[31]^0x80))
	}
	return out
}

func scalarOf(t testing.TB, n *big.Int) *scalar.Scalar {
	var s scalar.Scalar
	if _, err := s.SetBytesModOrder(toLE(new(big.Int).Mod(n, groupOrder))); err != nil {
		t.Fatal(err)
	}
	return &s
}

func challenge(r, a, msg []byte) *big.Int {
	h := sha512.New()
	h.Write(r)
	h.Write(a)
	h.Write(msg)
	return le(h.Sum(nil))
}

type tcase struct {
	name          string
	pub, msg, sig []byte
}

func check(t *testing.T, c tcase) bool {
	t.Helper()
	want := std(c.pub, c.msg, c.sig)
	if got := Verify(c.pub, c.msg, c.sig); got != want {
		t.Errorf("%s: Verify = %v, crypto/ed25519 = %v (pub %x sig %x msg %q)", c.name, got, want, c.pub, c.sig, c.msg)
	}
	return want
}

func TestDifferentialRandomAndMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		seed := make([]byte, 32)
		for j := range seed {
			seed[j] = byte(rng.Uint32())
		}
		priv := ed25519.NewKeyFromSeed(seed)
		pub := priv.Public().(ed25519.PublicKey)
		msg := make([]byte, rng.IntN(200))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		sig := ed25519.Sign(priv, msg)
		if !check(t, tcase{"valid", pub, msg, sig}) {
			t.Fatalf("case %d: a valid signature was rejected by crypto/ed25519", i)
		}
		for _, target := range [][]byte{pub, msg, sig} {
			if len(target) == 0 {
				continue
			}
			bit := rng.IntN(len(target) * 8)
			target[bit/8] ^= 1 << (bit % 8)
			check(t, tcase{"mutated", pub, msg, sig})
			target[bit/8] ^= 1 << (bit % 8)
		}
		// Non-canonical S: S + L verifies the same equation.
		s := new(big.Int).Add(le(sig[32:]), groupOrder)
		hi := append(bytes.Clone(sig[:32]), toLE(s)...)
		if check(t, tcase{"S+L", pub, msg, hi}) {
			t.Fatal("crypto/ed25519 accepted S + L")
		}
		check(t, tcase{"short sig", pub, msg, sig[:63]})
		check(t, tcase{"short pub", pub[:31], msg, sig})
	}
}

// TestDifferentialSmallOrder tries every small-order A and R, canonical or
// not, with S in {0, 1, L-1} and with R = [s]B for A of small order (which
// crypto/ed25519 accepts when [k]A is the identity).
func TestDifferentialSmallOrder(t *testing.T) {
	var encs [][]byte
	for _, p := range smallOrder(t) {
		encs = append(encs, encodings(encode(p))...)
	}
	ss := [][]byte{make([]byte, 32), toLE(big.NewInt(1)), toLE(new(big.Int).Sub(groupOrder, big.NewInt(1)))}
	accepted, rejected := 0, 0
	count := func(ok bool) {
		if ok {
			accepted++
		} else {
			rejected++
		}
	}
	for _, a := range encs {
		for _, r := range encs {
			for _, s := range ss {
				for _, msg := range [][]byte{nil, []byte("m"), []byte("git-ctx")} {
					count(check(t, tcase{"small A, small R", a, msg, append(bytes.Clone(r), s...)}))
				}
			}
		}
		for i := range 16 {
			s := big.NewInt(int64(1000 + i))
			rb := encode(curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarOf(t, s)))
			for _, msg := range [][]byte{[]byte("a"), []byte("b")} {
				count(check(t, tcase{"small A, R=[s]B", a, msg, append(rb, toLE(s)...)}))
			}
		}
	}
	if accepted == 0 || rejected == 0 {
		t.Fatalf("small-order cases: %d accepted, %d rejected by crypto/ed25519; want both", accepted, rejected)
	}
}

// TestDifferentialTorsion signs with keys and nonces that carry a torsion
// component: a cofactored verifier (batch verification) accepts all of
// these, crypto/ed25519 only those where the component cancels.
func TestDifferentialTorsion(t *testing.T) {
	torsion := smallOrder(t)
	rng := rand.New(rand.NewPCG(3, 4))
	accepted, rejected := 0, 0
	for i := range 200 {
		a := new(big.Int).SetUint64(rng.Uint64())
		a.Lsh(a, 64).Add(a, new(big.Int).SetUint64(rng.Uint64()))
		r := new(big.Int).SetUint64(rng.Uint64() | 1)
		A := curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarOf(t, a))
		R := curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarOf(t, r))
		ta, tr := torsion[i%8], torsion[(i/8)%8]
		if i%3 == 0 {
			tr = torsion[0] // torsion on A only
		}
		A = curve.NewEdwardsPoint().Add(A, ta)
		R = curve.NewEdwardsPoint().Add(R, tr)
		pub, rb := encode(A), encode(R)
		msg := []byte{byte(i), byte(i >> 8)}
		k := challenge(rb, pub, msg)
		s := new(big.Int).Mod(new(big.Int).Add(r, new(big.Int).Mul(k, a)), groupOrder)
		if check(t, tcase{"torsion", pub, msg, append(rb, toLE(s)...)}) {
			accepted++
		} else {
			rejected++
		}
	}
	if accepted == 0 || rejected == 0 {
		t.Fatalf("torsion cases: %d accepted, %d rejected by crypto/ed25519; want both", accepted, rejected)
	}
}

// TestKeyTableBounded fills the expanded-key table past its bound.
func TestKeyTableBounded(t *testing.T) {
	for i := range maxKeys + 10 {
		pub := make([]byte, 32)
		pub[0], pub[1] = byte(i), byte(i>>8)
		check(t, tcase{"many keys", pub, []byte("m"), make([]byte, 64)})
	}
	mu.RLock()
	n := len(keys)
	mu.RUnlock()
	if n > maxKeys {
		t.Fatalf("%d keys held, bound %d", n, maxKeys)
	}
}

func FuzzVerify(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	pub := priv.Public().(ed25519.PublicKey)
	f.Add([]byte(pub), []byte("m"), ed25519.Sign(priv, []byte("m")))
	id := toLE(big.NewInt(1))
	f.Add(id, []byte("x"), append(encode(curve.ED25519_BASEPOINT_POINT), toLE(big.NewInt(1))...))
	b, _ := hex.DecodeString(order8)
	f.Add(b, []byte(""), append(bytes.Clone(b), make([]byte, 32)...))
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		want := std(pub, msg, sig)
		if got := Verify(pub, msg, sig); got != want {
			t.Fatalf("Verify = %v, crypto/ed25519 = %v (pub %x sig %x)", got, want, pub, sig)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	pub := priv.Public().(ed25519.PublicKey)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4)
	sig := ed25519.Sign(priv, msg)
	b.Run("crypto-ed25519", func(b *testing.B) {
		for b.Loop() {
			ed25519.Verify(pub, msg, sig)
		}
	})
	b.Run("sigcheck", func(b *testing.B) {
		for b.Loop() {
			Verify(pub, msg, sig)
		}
	})
}
