package gitrepo

import (
	"strings"
	"unicode/utf8"
)

// decodeText returns b as valid UTF-8. Text that is already valid UTF-8 is
// kept as it is. Otherwise, when enc (a commit's encoding header) names
// ISO-8859-1, ISO-8859-15 or Windows-1252, b is decoded from it; any other
// invalid byte becomes U+FFFD.
func decodeText(b []byte, enc string) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var table func(byte) rune
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(enc))) {
	case "iso88591", "latin1", "l1", "iso885911987", "cp819", "ibm819":
		table = func(c byte) rune { return rune(c) }
	case "iso885915", "latin9", "latin0":
		table = latin9
	case "windows1252", "cp1252", "ms1252":
		table = cp1252
	default:
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/2)
	for _, c := range b {
		sb.WriteRune(table(c))
	}
	return sb.String()
}

// cp1252High maps Windows-1252's bytes 0x80–0x9F; 0 marks the five unused
// ones (decoded as U+FFFD).
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

func cp1252(c byte) rune {
	if c >= 0x80 && c <= 0x9F {
		if r := cp1252High[c-0x80]; r != 0 {
			return r
		}
		return utf8.RuneError
	}
	return rune(c)
}

// latin9 is ISO-8859-15: Latin-1 with eight positions changed.
func latin9(c byte) rune {
	switch c {
	case 0xA4:
		return 0x20AC
	case 0xA6:
		return 0x0160
	case 0xA8:
		return 0x0161
	case 0xB4:
		return 0x017D
	case 0xB8:
		return 0x017E
	case 0xBC:
		return 0x0152
	case 0xBD:
		return 0x0153
	case 0xBE:
		return 0x0178
	}
	return rune(c)
}
