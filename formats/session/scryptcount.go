package session

import (
	"errors"
	"sync/atomic"

	"filippo.io/age"
)

// scryptOps counts scrypt derivations run through this package's age
// recipients and identities since the process started.
var scryptOps atomic.Int64

// ScryptOps returns how many scrypt derivations Encrypt and Decrypt have
// run in this process: one per file key wrapped (each Encrypt) and one per
// scrypt stanza tried (each Decrypt that reached the key derivation, with
// the right passphrase or not). It lets tests and benchmarks count the
// expensive operations a command performs; it holds no secret.
func ScryptOps() int64 { return scryptOps.Load() }

// countingRecipient is age's scrypt recipient at work factor logN,
// counting each wrap.
type countingRecipient struct {
	r    *age.ScryptRecipient
	logN int
}

func (c countingRecipient) Wrap(fileKey []byte) ([]*age.Stanza, error) {
	scryptOps.Add(1)
	prepareScryptMemory(c.logN)
	return c.r.Wrap(fileKey)
}

// WrapWithLabels keeps age's rule that a scrypt recipient is the only one.
func (c countingRecipient) WrapWithLabels(fileKey []byte) ([]*age.Stanza, []string, error) {
	scryptOps.Add(1)
	prepareScryptMemory(c.logN)
	return c.r.WrapWithLabels(fileKey)
}

// countingIdentity is age's scrypt identity, counting each unwrap that ran
// the key derivation (it succeeded, or the derived key did not open the
// stanza). logN is the stanza's work factor, read from the header.
type countingIdentity struct {
	id   *age.ScryptIdentity
	logN int
}

func (c countingIdentity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	prepareScryptMemory(c.logN)
	k, err := c.id.Unwrap(stanzas)
	if err == nil || errors.Is(err, age.ErrIncorrectIdentity) {
		scryptOps.Add(1)
	}
	return k, err
}
