package ctxpkg

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Compact removes every space, tab, LF and CR outside JSON string literals,
// copying everything else (escapes included) unchanged, as lean-ctx does
// before hashing the content text. It does not validate.
func Compact(text []byte) []byte {
	out := make([]byte, 0, len(text))
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inStr {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(text) {
					i++
					out = append(out, text[i])
				}
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inStr = true
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// ContentHash returns the lowercase hex SHA-256 of compacted content text
// and its length in bytes (integrity.content_hash and byte_size).
func ContentHash(compacted []byte) (string, uint64) {
	sum := sha256.Sum256(compacted)
	return hex.EncodeToString(sum[:]), uint64(len(compacted))
}

// CompositeHash is integrity.sha256: hex(SHA-256("{name}:{version}:{contentHash}")).
func CompositeHash(name, version, contentHash string) string {
	sum := sha256.Sum256([]byte(name + ":" + version + ":" + contentHash))
	return hex.EncodeToString(sum[:])
}

// Seal serialises Content compactly (serde-exact), stores that text in
// ContentText and sets Manifest.Integrity from it. Call it after the last
// change to Content, Name or Version and before signing.
func (p *Package) Seal() error {
	text, err := p.Content.AppendJSON(nil)
	if err != nil {
		return err
	}
	p.ContentText = text
	h, n := ContentHash(text)
	p.Manifest.Integrity = Integrity{
		SHA256:      CompositeHash(p.Manifest.Name, p.Manifest.Version, h),
		ContentHash: h,
		ByteSize:    n,
	}
	return nil
}

// Integrity errors. Each failure is an *IntegrityError whose text is
// lean-ctx's import message and which matches (errors.Is) one of these.
var (
	ErrContentHashMismatch = errors.New("integrity check failed: content_hash mismatch")
	ErrSHA256Mismatch      = errors.New("integrity check failed: sha256 mismatch")
	ErrByteSizeMismatch    = errors.New("integrity check failed: byte_size mismatch")
)

// IntegrityError is one failed integrity check. Error() is lean-ctx's import
// text; Verify() is the text `pack verify` lists.
type IntegrityError struct {
	Kind     error  // ErrContentHashMismatch, ErrSHA256Mismatch or ErrByteSizeMismatch
	Manifest string // the manifest's value
	Computed string // the value computed from the content text
}

func (e *IntegrityError) Error() string {
	switch e.Kind {
	case ErrContentHashMismatch:
		return fmt.Sprintf("integrity check failed: content_hash mismatch (expected %s, got %s)", e.Manifest, e.Computed)
	case ErrSHA256Mismatch: // "expected" is the computed value here, as in lean-ctx
		return fmt.Sprintf("integrity check failed: sha256 mismatch (expected %s, got %s)", e.Computed, e.Manifest)
	default:
		return fmt.Sprintf("integrity check failed: byte_size mismatch (expected %s, got %s)", e.Manifest, e.Computed)
	}
}

// VerifyText is the `pack verify` wording of the failure.
func (e *IntegrityError) VerifyText() string {
	switch e.Kind {
	case ErrContentHashMismatch:
		return fmt.Sprintf("content_hash mismatch: manifest says %s, content hashes to %s", e.Manifest, e.Computed)
	case ErrSHA256Mismatch:
		return fmt.Sprintf("package sha256 mismatch: manifest says %s, recomputed %s", e.Manifest, e.Computed)
	default:
		return fmt.Sprintf("byte_size mismatch: manifest says %s, content is %s bytes", e.Manifest, e.Computed)
	}
}

func (e *IntegrityError) Unwrap() error { return e.Kind }

// IntegrityErrors runs the three checks against ContentText and returns
// every failure in lean-ctx's import order (content_hash, sha256,
// byte_size); `pack verify` lists them in the order content_hash,
// byte_size, sha256. ErrNoContent when ContentText is nil.
func (p *Package) IntegrityErrors() ([]*IntegrityError, error) {
	if p.ContentText == nil {
		return nil, ErrNoContent
	}
	h, n := ContentHash(p.ContentText)
	in := &p.Manifest.Integrity
	var out []*IntegrityError
	if h != in.ContentHash {
		out = append(out, &IntegrityError{ErrContentHashMismatch, in.ContentHash, h})
	}
	if c := CompositeHash(p.Manifest.Name, p.Manifest.Version, h); c != in.SHA256 {
		out = append(out, &IntegrityError{ErrSHA256Mismatch, in.SHA256, c})
	}
	if n != in.ByteSize {
		out = append(out, &IntegrityError{ErrByteSizeMismatch, strconv.FormatUint(in.ByteSize, 10), strconv.FormatUint(n, 10)})
	}
	return out, nil
}

// VerifyIntegrity is the import check: nil, ErrNoContent, or the first
// *IntegrityError.
func (p *Package) VerifyIntegrity() error {
	errs, err := p.IntegrityErrors()
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
