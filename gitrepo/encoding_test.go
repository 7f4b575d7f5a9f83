package gitrepo_test

import (
	"testing"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/gitrepo"
)

func TestDecodeText(t *testing.T) {
	for _, c := range []struct {
		in, enc, want string
	}{
		{"café", "", "café"},                                     // valid UTF-8 is kept, whatever the header says
		{"café", "ISO-8859-1", "café"},                           // git re-coded it already
		{"caf\xe9", "ISO-8859-1", "café"},                        // git could not re-code it
		{"caf\xe9", "latin1", "café"},                            // another spelling
		{"\x80 caf\xe9 \x93q\x94", "windows-1252", "€ café “q”"}, // cp1252's high block
		{"\x81", "CP1252", "\uFFFD"},                             // unused in cp1252
		{"\xa4", "iso-8859-15", "€"},                             // latin-9 differs from latin-1 here
		{"caf\xe9", "", "caf\uFFFD"},                             // no header: invalid bytes replaced
		{"caf\xe9", "Shift_JIS", "caf\uFFFD"},                    // an encoding not decoded here
	} {
		got := gitrepo.DecodeText([]byte(c.in), c.enc)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("DecodeText(%q, %q) = %q, want %q", c.in, c.enc, got, c.want)
		}
	}
}
