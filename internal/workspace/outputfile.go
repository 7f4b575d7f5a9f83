package workspace

import (
	"errors"
	"fmt"

	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// WriteOutput writes a file a command was asked to produce (-o, --out, or
// its default name): mode 0600, atomically through internal/atomicfile, the
// parent directory created if missing. Without replace (the user's
// --force) an existing path, or one created meanwhile, is left untouched
// and the error wraps ErrOutputExists and names the path.
func WriteOutput(path string, data []byte, replace bool) error {
	err := atomicfile.WriteFile(path, data, atomicfile.Options{Replace: replace, MkdirPerm: 0o755})
	if errors.Is(err, atomicfile.ErrExists) {
		return Tagged(fmt.Errorf("%s already exists: not replaced (--force replaces it)", path), ErrOutputExists)
	}
	return err
}
