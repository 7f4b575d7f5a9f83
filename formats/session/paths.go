package session

import (
	"strings"
	"unicode/utf8"
)

// Agents this format knows.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// CheckSafePath reports whether p may be used as an artifact path or TAR
// entry name: a relative, already-clean, forward-slash path. It is stricter
// than rc.8, which cleans first and so accepts "projects/a/../b.jsonl".
//
// Rules, in the order checked (each has its own sentinel, all of which also
// match ErrUnsafePath):
//   - empty                                  ErrPathInvalid
//   - any backslash                          ErrPathBackslash
//   - leading "/" or a drive letter "X:"     ErrPathAbsolute
//   - longer than MaxPathLen                 ErrPathTooLong
//   - a ".." component                       ErrPathTraversal
//   - an empty or "." component (so no "//",
//     leading "./" or trailing "/")          ErrPathInvalid
//   - a component over MaxPathComponentLen   ErrPathTooLong
//   - invalid UTF-8, a control character
//     (< 0x20, 0x7f) or ':' (Windows drive
//     and alternate-data-stream syntax)      ErrPathInvalid
func CheckSafePath(p string) error {
	if p == "" {
		return &pathError{ErrPathInvalid, p}
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return &pathError{ErrPathBackslash, p}
	}
	if p[0] == '/' || hasDriveLetter(p) {
		return &pathError{ErrPathAbsolute, p}
	}
	if len(p) > MaxPathLen {
		return &pathError{ErrPathTooLong, p}
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return &pathError{ErrPathTraversal, p}
		}
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			return &pathError{ErrPathInvalid, p}
		}
		if len(c) > MaxPathComponentLen {
			return &pathError{ErrPathTooLong, p}
		}
	}
	if !utf8.ValidString(p) {
		return &pathError{ErrPathInvalid, p}
	}
	for i := 0; i < len(p); i++ {
		if b := p[i]; b < 0x20 || b == 0x7f || b == ':' {
			return &pathError{ErrPathInvalid, p}
		}
	}
	return nil
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && isASCIILetter(p[0]) && p[1] == ':'
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// CheckAdapterPath applies the agent's layout rules on top of CheckSafePath
// and the credential denylist: the first component is "projects" (Claude) or
// "sessions" (Codex), there are at least two components (three for a Claude
// restore, which needs projects/<key>/<id>.jsonl), and the last component
// ends in ".jsonl".
func CheckAdapterPath(agent, p string, restore bool) error {
	if err := CheckSafePath(p); err != nil {
		return err
	}
	if IsCredentialPath(p) {
		return ErrCredentialPath
	}
	var top string
	min := 2
	switch agent {
	case AgentClaude:
		top = "projects"
		if restore {
			min = 3
		}
	case AgentCodex:
		top = "sessions"
	default:
		return ErrUnknownAgent
	}
	parts := strings.Split(p, "/")
	if parts[0] != top || len(parts) < min || !strings.HasSuffix(parts[len(parts)-1], ".jsonl") {
		return &pathError{ErrAdapterPath, p}
	}
	return nil
}

// credentialNames are denied case-insensitively as any path component.
var credentialNames = []string{
	".env",
	"auth.json", ".credentials.json", "credentials.json", "oauth.json",
	"tokens.json", "token.json", "secrets.json", "secret.json",
}

// IsCredentialName reports whether one file name is on the credential
// denylist (§12.2): ".env", ".env.*", auth.json, .credentials.json,
// credentials.json, oauth.json, tokens.json, token.json, secrets.json or
// secret.json, compared case-insensitively (Unicode simple folding, so
// look-alike case forms such as the Kelvin sign also match).
func IsCredentialName(name string) bool {
	for _, c := range credentialNames {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return len(name) >= 5 && strings.EqualFold(name[:5], ".env.")
}

// IsCredentialPath reports whether any component of p, split on "/" and
// also on "\" (so a Windows-style path cannot hide a name), is a credential
// name.
func IsCredentialPath(p string) bool {
	for _, c := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if IsCredentialName(c) {
			return true
		}
	}
	return false
}
