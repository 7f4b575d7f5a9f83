// Package gitname decides whether a name may be one path component of a
// tree on the memory branch.
//
// git itself refuses some names: `git fsck --strict` (and so a remote with
// receive.fsckObjects) reports a tree entry that is empty, ".", "..", holds a
// "/", or is spelled so that some file system would open the repository's
// own ".git" directory: any letter case (".GIT"), an NTFS form (trailing dots
// or spaces ".git. ", an alternate data stream ".git::$INDEX_ALLOCATION",
// the 8.3 short name "git~1") or an HFS+ form (code points HFS+ ignores, such
// as U+200C, anywhere in ".git"). The same spellings of ".gitmodules",
// ".gitattributes", ".gitignore" and ".mailmap" change what git does with a
// checkout. Check refuses all of them, mirroring git's is_ntfs_dotgit,
// is_ntfs_dot_generic and is_hfs_dot_generic, plus a backslash (a directory
// separator on Windows).
package gitname

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// ErrUnsafe is wrapped by every error Check returns.
var ErrUnsafe = fault.Sentinel(fault.Refused, "unsafe path component")

// special lists the names git treats specially, without their leading dot,
// with the prefix of the fall-back NTFS short name Windows derives from
// each (git's own table; ".git" itself is handled apart).
var special = []struct{ name, shortPrefix string }{
	{"gitmodules", "gi7eba"},
	{"gitattributes", "gi7d29"},
	{"gitignore", "gi250a"},
	{"mailmap", "maba30"},
}

// Check returns nil when name can be one path component of a tree git-ctx
// writes or merges, and otherwise an error wrapping ErrUnsafe that says why.
func Check(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrUnsafe)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrUnsafe, name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("%w: %q holds a path separator or NUL", ErrUnsafe, name)
	case ntfsDotGit(name) || hfsDot(name, "git"):
		return fmt.Errorf("%w: %q is read as .git by git or a file system", ErrUnsafe, name)
	}
	for _, s := range special {
		if ntfsDotGeneric(name, s.name, s.shortPrefix) || hfsDot(name, s.name) {
			return fmt.Errorf("%w: %q is read as .%s by git or a file system", ErrUnsafe, name, s.name)
		}
	}
	return nil
}

// CheckPath applies Check to every "/"-separated component of p.
func CheckPath(p string) error {
	for _, c := range strings.Split(p, "/") {
		if err := Check(c); err != nil {
			return fmt.Errorf("path %q: %w", p, err)
		}
	}
	return nil
}

// lower folds one ASCII letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasFoldPrefix reports whether s starts with prefix (lower-case ASCII),
// ignoring ASCII letter case.
func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// ntfsTail reports whether s holds only spaces and dots, up to its end or
// an NTFS stream separator ":" (NTFS drops trailing dots and spaces).
func ntfsTail(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return true
		case ' ', '.':
		default:
			return false
		}
	}
	return true
}

// ntfsDotGit: ".git" or its short name "git~1", any case, followed only by
// dots and spaces (git's is_ntfs_dotgit).
func ntfsDotGit(name string) bool {
	switch {
	case hasFoldPrefix(name, ".git"):
		return ntfsTail(name[4:])
	case hasFoldPrefix(name, "git~1"):
		return ntfsTail(name[5:])
	}
	return false
}

// ntfsDotGeneric: "."+needle, its regular short name (the first 6 letters,
// "~" and 1 to 4) or a fall-back short name (up to 6 letters of prefix, "~",
// a digit 1 to 9 and more digits, 8 characters in all), any case, followed
// only by dots and spaces (git's is_ntfs_dot_generic).
func ntfsDotGeneric(name, needle, prefix string) bool {
	if len(name) > 0 && name[0] == '.' && hasFoldPrefix(name[1:], needle) {
		return ntfsTail(name[1+len(needle):])
	}
	if len(name) >= 8 && hasFoldPrefix(name, needle[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return ntfsTail(name[8:])
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		switch {
		case i >= len(name):
			return false
		case sawTilde:
			if name[i] < '0' || name[i] > '9' {
				return false
			}
		case name[i] == '~':
			i++
			if i >= len(name) || name[i] < '1' || name[i] > '9' {
				return false
			}
			sawTilde = true
		case i >= 6, name[i]&0x80 != 0, lower(name[i]) != prefix[i]:
			return false
		}
	}
	return ntfsTail(name[8:])
}

// hfsIgnored are the code points HFS+ drops from a name when comparing.
func hfsIgnored(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// hfsDot: "."+needle once the code points HFS+ ignores are dropped, any
// ASCII case (git's is_hfs_dot_generic). Malformed UTF-8 never matches.
func hfsDot(name, needle string) bool {
	want := "." + needle
	j := 0
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		i += size
		if hfsIgnored(r) {
			continue
		}
		if r > 127 || j >= len(want) || lower(byte(r)) != want[j] {
			return false
		}
		j++
	}
	return j == len(want)
}

// Display returns name as it may be printed on a terminal: unchanged when
// every character is printable, else Go-quoted (so that a hostile name's
// control characters or escape sequences are shown, never interpreted).
func Display(name string) string {
	for _, r := range name {
		if r < 0x20 || r == 0x7f || !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}
