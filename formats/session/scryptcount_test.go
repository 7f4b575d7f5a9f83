package session

import (
	"bytes"
	"errors"
	"testing"
)

// TestScryptOpsCountsDerivations: one derivation per Encrypt and per
// Decrypt that reaches the key derivation (right or wrong passphrase), none
// for a file refused before it (work factor too high, not an age file).
func TestScryptOpsCountsDerivations(t *testing.T) {
	before := ScryptOps()
	ct := encrypt(t, []byte("hello"))
	if d := ScryptOps() - before; d != 1 {
		t.Fatalf("Encrypt ran %d derivations, want 1", d)
	}
	if _, err := decryptAll(ct, testPass); err != nil {
		t.Fatal(err)
	}
	if d := ScryptOps() - before; d != 2 {
		t.Fatalf("Encrypt+Decrypt ran %d derivations, want 2", d)
	}
	if _, err := decryptAll(ct, []byte("wrong")); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if d := ScryptOps() - before; d != 3 {
		t.Fatalf("after a wrong passphrase: %d derivations, want 3", d)
	}
	high := bytes.Replace(ct, []byte(" 10\n"), []byte(" 23\n"), 1)
	if _, err := decryptAll(high, testPass); !errors.Is(err, ErrWorkFactorTooHigh) {
		t.Fatalf("work factor 23: %v", err)
	}
	if _, err := decryptAll([]byte("not age\n"), testPass); err == nil {
		t.Fatal("garbage decrypted")
	}
	if d := ScryptOps() - before; d != 3 {
		t.Fatalf("refused files ran derivations: %d, want 3", d)
	}
}
