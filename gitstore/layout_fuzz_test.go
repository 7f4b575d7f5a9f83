package gitstore

import (
	"errors"
	"testing"
)

// FuzzParseLayoutFile: a LAYOUT file comes from the branch, so from any
// teammate. Whatever it holds, ParseLayoutFile returns without panicking,
// either a layout and depth that LayoutFileContent writes back to the same
// reading, or ErrLayoutUnknown.
func FuzzParseLayoutFile(f *testing.F) {
	for _, s := range []string{"ctx-v1\n", "ctx-v1 fanout=2\n", "ghyll-v1\n", "ctx-v1 fanout=3\n", "ghyll-v1 fanout=2", " ctx-v1\t", "", "ctx-v2\n", "ctx-v1 fanout=2 x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		l, depth, err := ParseLayoutFile(content)
		if err != nil {
			if !errors.Is(err, ErrLayoutUnknown) {
				t.Fatalf("%q: error %v is not ErrLayoutUnknown", content, err)
			}
			return
		}
		l2, depth2, err := ParseLayoutFile(string(LayoutFileContent(l, depth)))
		if err != nil || l2 != l || depth2 != depth {
			t.Fatalf("%q read as %s depth %d, written back as %q: %s depth %d, %v", content, l, depth, LayoutFileContent(l, depth), l2, depth2, err)
		}
	})
}
