package chain

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
)

// PackagePlace says where a package named name@version belongs on the
// branch (want), or why the name or version cannot be stored there (err).
// gitstore supplies it: the paths are the layout's.
type PackagePlace func(name, version string) (want string, err error)

// CheckPackage verifies a stored package file found at path at: it parses,
// verifies (ctxpkg Package.Problems: validation, kind coherence, integrity,
// a signature when present), its manifest's name and version can be stored
// and place puts them at at. It returns the parsed package (nil when it
// does not parse), and a reason and a detail ("" when it verifies).
func CheckPackage(raw []byte, at string, place PackagePlace) (*ctxpkg.Package, Reason, string) {
	pkg, err := ctxpkg.ParseFile(raw)
	if err != nil {
		if errors.Is(err, ctxpkg.ErrTooLarge) {
			return nil, TooLarge, err.Error()
		}
		return nil, MalformedPackage, err.Error()
	}
	if probs := pkg.Problems(); len(probs) > 0 {
		texts := make([]string, len(probs))
		for i, e := range probs {
			texts[i] = ctxpkg.ProblemText(e)
		}
		return pkg, BadPackage, strings.Join(texts, "; ")
	}
	m := &pkg.Manifest
	want, err := place(m.Name, m.Version)
	if err != nil {
		return pkg, UnsafeName, err.Error()
	}
	if want != at {
		return pkg, PathMismatch, fmt.Sprintf("the manifest names %s@%s, which belongs at %s", m.Name, m.Version, want)
	}
	return pkg, "", ""
}
