package checkpoint

import (
	"bytes"
	"crypto/ed25519"
	"testing"
)

// FuzzParse: no input panics; whatever parses re-encodes, re-parses to the
// same canonical bytes, and a sealed record verifies after a file round trip.
// fuzz-smoke: 2000x
func FuzzParse(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.RecordJSON != nil {
			f.Add([]byte(v.RecordJSON))
		}
		if v.Input != nil {
			f.Add([]byte(v.Input))
		}
		if v.File != nil {
			f.Add([]byte(*v.File))
		}
	}
	f.Add([]byte(`{"v":1,"future":{"x":[1,2]},"sig":""}`))
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	pub := priv.Public().(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := Parse(data)
		if err != nil {
			return
		}
		_, _ = cp.Verify(pub)
		c1, err1 := cp.Canonical(RuleSeedV1)
		file, err := cp.MarshalFile()
		if err != nil {
			return
		}
		back, err := Parse(file)
		if err != nil {
			t.Fatalf("own file does not parse: %v\n%s", err, file)
		}
		c2, err2 := back.Canonical(RuleSeedV1)
		if (err1 == nil) != (err2 == nil) || !bytes.Equal(c1, c2) {
			t.Fatalf("canonical changed across a file round trip:\n%s\n%s", c1, c2)
		}
		if cp.DeviceID == "" || err1 != nil {
			return
		}
		back.ParentHash = ZeroHash
		if err := back.Seal(priv); err != nil {
			return
		}
		file, _ = back.MarshalFile()
		again, err := Parse(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := again.Verify(pub); err != nil {
			t.Fatalf("sealed record does not verify: %v\n%s", err, file)
		}
	})
}

// FuzzChainLine: no panic; an accepted line re-encodes to itself.
func FuzzChainLine(f *testing.F) {
	f.Add([]byte(`{"hash":"cadfdb7594b1ad5ab315fdb5c912328cdf4262a329cd8e74bef4ea83b37204aa","parent":"0000000000000000000000000000000000000000000000000000000000000000","ts":1712345678123456789}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseChainLine(data)
		if err != nil {
			return
		}
		if !bytes.Equal(bytes.TrimSuffix(data, []byte("\n")), bytes.TrimSuffix(e.MarshalLine(), []byte("\n"))) {
			t.Fatalf("accepted non-canonical line %q", data)
		}
	})
}

// FuzzKeys: no panic; accepted keys re-encode to the same key.
func FuzzKeys(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	f.Add(EncodePublicKey(priv.Public().(ed25519.PublicKey)))
	f.Add(EncodePrivateKey(priv))
	f.Fuzz(func(t *testing.T, data []byte) {
		if pub, err := ParsePublicKey(data); err == nil {
			if p2, err := ParsePublicKey(EncodePublicKey(pub)); err != nil || !p2.Equal(pub) {
				t.Fatal("public key round trip")
			}
		}
		if k, err := ParsePrivateKey(data); err == nil {
			if k2, err := ParsePrivateKey(EncodePrivateKey(k)); err != nil || !k2.Equal(k) {
				t.Fatal("private key round trip")
			}
		}
	})
}
