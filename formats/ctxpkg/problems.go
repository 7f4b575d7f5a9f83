package ctxpkg

import "errors"

// Problems runs every verification of a parsed package in `pack verify`'s
// order (reference §7.3) and returns each failure it finds: the manifest
// validation failures (one per rule; the later steps are skipped when any
// fails), the kind coherence failures (likewise), every integrity failure
// (content_hash, byte_size, sha256) and the signature check when a signature
// is present. Nil means the package verifies. Unlike CheckImport it does not
// refuse kind=addon (that is an import policy, not a verification).
func (p *Package) Problems() []error {
	var out []error
	collect := func(err error) bool {
		if err == nil {
			return false
		}
		var ve *ValidationError
		if errors.As(err, &ve) {
			for _, e := range ve.Errs {
				out = append(out, e)
			}
		} else {
			out = append(out, err)
		}
		return true
	}
	if collect(p.Manifest.Validate()) || collect(p.CheckKind()) {
		return out
	}
	ies, err := p.IntegrityErrors()
	if err != nil {
		return append(out, err)
	}
	for _, k := range []error{ErrContentHashMismatch, ErrByteSizeMismatch, ErrSHA256Mismatch} {
		for _, ie := range ies {
			if ie.Kind == k {
				out = append(out, ie)
			}
		}
	}
	collect(p.Manifest.CheckSignature())
	return out
}

// ProblemText is the text `pkg verify` lists for one failure: the `pack
// verify` wording for integrity failures, the error text otherwise.
func ProblemText(err error) string {
	var ie *IntegrityError
	if errors.As(err, &ie) {
		return ie.VerifyText()
	}
	return err.Error()
}
