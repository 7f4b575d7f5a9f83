package ctxpkg

import (
	"errors"
	"fmt"
)

// ErrExtension: "unsupported file extension '.{ext}' — expected .ctxpkg or
// .lctxpkg" ({ext} is "(none)" without an extension).
var ErrExtension = errors.New("unsupported file extension")

// CheckName returns nil when IsPackageName(name), else lean-ctx's error.
func CheckName(name string) error {
	if IsPackageName(name) {
		return nil
	}
	ext, ok := extension(name)
	if !ok {
		ext = "(none)"
	}
	return &RuleError{ErrExtension, fmt.Sprintf("unsupported file extension '.%s' — expected .ctxpkg or .lctxpkg", ext)}
}

// CheckImport runs lean-ctx's import checks on a parsed package, in its
// order, stopping at the first failing step: manifest validation (plus
// git-ctx's safe-name rule), kind coherence, the kind=addon refusal,
// integrity (first failure), signature policy. The file name and size
// checks are CheckName and ReadFile/ParseFile.
func (p *Package) CheckImport() error {
	if err := p.Manifest.Validate(); err != nil {
		return err
	}
	if err := p.CheckKind(); err != nil {
		return err
	}
	if err := p.Manifest.RefuseAddon(); err != nil {
		return err
	}
	if err := p.VerifyIntegrity(); err != nil {
		return err
	}
	return p.Manifest.CheckSignature()
}
