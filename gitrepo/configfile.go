package gitrepo

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// errConfigUnsure means a configuration cannot be read in process with
// certainty (includes, command-line settings, syntax this reader does not
// know); the caller asks git instead.
var errConfigUnsure = errors.New("configuration needs git")

// maxConfigFile bounds one configuration file read in process; larger files
// are left to git.
const maxConfigFile = 1 << 20

// readConfigInProcess reads the configuration git would show with
// `git config --list`, from the same files in the same order: system,
// global (XDG, then ~/.gitconfig, or $GIT_CONFIG_GLOBAL), the repository's
// config and, with extensions.worktreeConfig, the worktree's config.worktree.
// Values come out as git prints them (a key without "=" has the value "").
func readConfigInProcess(d discovery) (map[string][]string, error) {
	for _, k := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if _, set := os.LookupEnv(k); set {
			return nil, errConfigUnsure
		}
	}
	m := map[string][]string{}
	add := func(path string) error {
		if path == "" {
			return nil
		}
		b, err := readConfigFile(path)
		if err != nil {
			return err
		}
		return parseConfigFile(b, func(key, val string) { m[key] = append(m[key], val) })
	}
	if err := addUserConfig(add); err != nil {
		return nil, err
	}
	if err := addRepoConfig(d, m, add); err != nil {
		return nil, err
	}
	// A work tree placed elsewhere or a repository declared bare changes
	// what discovery means: let git answer.
	if len(m["core.worktree"]) > 0 || len(m["core.bare"]) > 0 && lastBool(m["core.bare"]) {
		return nil, errConfigUnsure
	}
	return m, nil
}

// addUserConfig adds the system file (unless GIT_CONFIG_NOSYSTEM) and the
// global ones: $GIT_CONFIG_GLOBAL, or the XDG file then ~/.gitconfig.
func addUserConfig(add func(path string) error) error {
	if !envBool("GIT_CONFIG_NOSYSTEM") {
		sys, err := systemConfigPath()
		if err != nil {
			return err
		}
		if err := add(sys); err != nil {
			return err
		}
	}
	if g, set := os.LookupEnv("GIT_CONFIG_GLOBAL"); set {
		if g == "" {
			return errConfigUnsure
		}
		return add(g)
	}
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		if err := add(filepath.Join(xdg, "git", "config")); err != nil {
			return err
		}
	}
	if home != "" {
		return add(filepath.Join(home, ".gitconfig"))
	}
	return nil
}

// addRepoConfig adds the repository's config to m and, when that file
// turns extensions.worktreeConfig on, the worktree's config.worktree.
func addRepoConfig(d discovery, m map[string][]string, add func(path string) error) error {
	local := map[string][]string{}
	b, err := readConfigFile(filepath.Join(d.commonDir, "config"))
	if err != nil {
		return err
	}
	if err := parseConfigFile(b, func(key, val string) {
		m[key] = append(m[key], val)
		local[key] = append(local[key], val)
	}); err != nil {
		return err
	}
	wt := local["extensions.worktreeconfig"]
	if len(wt) == 0 {
		return nil
	}
	on, known := parseBool(wt[len(wt)-1])
	if !known {
		return errConfigUnsure
	}
	if on {
		return add(filepath.Join(d.gitDir, "config.worktree"))
	}
	return nil
}

// readConfigFile returns a file's bytes; a missing file is empty.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, errConfigUnsure // unreadable: git's message is the right one
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.IsDir() || fi.Size() > maxConfigFile {
		return nil, errConfigUnsure
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, errConfigUnsure // short read or changed meanwhile: let git read it
	}
	return b, nil
}

// systemConfigPath is the system-wide file of the git executable that
// would run: $GIT_CONFIG_SYSTEM, else <prefix>/etc/gitconfig, with prefix
// /usr meaning /etc/gitconfig, as git's own build does. The prefix comes
// from GIT_EXEC_PATH (which git exports to its subcommands and hooks) or
// from the git found on PATH; when neither gives a known shape, git is
// asked instead.
func systemConfigPath() (string, error) {
	if p, set := os.LookupEnv("GIT_CONFIG_SYSTEM"); set {
		if p == "" {
			return "", errConfigUnsure
		}
		return p, nil
	}
	var prefix string
	if ep := os.Getenv("GIT_EXEC_PATH"); ep != "" {
		for _, suffix := range []string{"/lib/git-core", "/libexec/git-core"} {
			if p, ok := strings.CutSuffix(filepath.Clean(ep), suffix); ok {
				prefix = p
				break
			}
		}
	} else if git, err := lookGit(); err == nil {
		prefix = filepath.Dir(filepath.Dir(git))
		if runtime.GOOS == "darwin" && git == "/usr/bin/git" {
			prefix = "" // Apple's shim runs a git elsewhere
		}
	}
	switch prefix {
	case "":
		return "", errConfigUnsure
	case "/usr":
		return "/etc/gitconfig", nil
	}
	return filepath.Join(prefix, "etc", "gitconfig"), nil
}

// lookGit finds git on PATH without running it.
func lookGit() (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, "git")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fs.ErrNotExist
}

// envBool reads a boolean environment variable as git does.
func envBool(k string) bool {
	v, set := os.LookupEnv(k)
	if !set {
		return false
	}
	b, _ := parseBool(v)
	return b
}

// parseBool parses a git boolean; known is false for other text.
func parseBool(v string) (b, known bool) {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// lastBool is the last value of a boolean setting (true when not a known
// boolean, so that the caller hands over to git).
func lastBool(vals []string) bool {
	b, known := parseBool(vals[len(vals)-1])
	return b || !known
}

// parseConfigFile parses git's configuration file syntax and calls emit
// for each entry with the canonical key (section and name lower-cased,
// subsection as written) and the value as git would print it. Includes,
// unknown escapes and anything malformed return errConfigUnsure.
func parseConfigFile(b []byte, emit func(key, val string)) error {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	p := configParser{b: b}
	section := "" // "section" or "section.subsection", canonical
	for {
		c, ok := p.next()
		if !ok {
			return nil
		}
		switch {
		case c == '\n' || isConfigSpace(c):
			continue
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, err := p.sectionHeader()
			if err != nil {
				return err
			}
			lower := strings.ToLower(s)
			if lower == "include" || lower == "includeif" || strings.HasPrefix(lower, "include.") || strings.HasPrefix(lower, "includeif.") {
				return errConfigUnsure
			}
			section = s
		case isAlpha(c):
			if section == "" {
				return errConfigUnsure
			}
			name, val, err := p.entry(c)
			if err != nil {
				return err
			}
			emit(section+"."+name, val)
		default:
			return errConfigUnsure
		}
	}
}

// configParser walks a configuration file byte by byte, turning "\r\n"
// into "\n" as git does.
type configParser struct {
	b []byte
	i int
}

func (p *configParser) next() (byte, bool) {
	if p.i >= len(p.b) {
		return 0, false
	}
	c := p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	return c, true
}

func (p *configParser) unread() { p.i-- }

func (p *configParser) skipLine() {
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return
		}
	}
}

// sectionHeader reads after "[": `name]`, `name "sub"]` or the legacy
// `name.sub]` (lower-cased whole).
func (p *configParser) sectionHeader() (string, error) {
	var name []byte
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return "", errConfigUnsure
		}
		switch {
		case c == ']':
			if len(name) == 0 {
				return "", errConfigUnsure
			}
			return strings.ToLower(string(name)), nil
		case isConfigSpace(c):
			return p.subsection(strings.ToLower(string(name)))
		case isAlnum(c) || c == '-' || c == '.':
			name = append(name, c)
		default:
			return "", errConfigUnsure
		}
	}
}

// subsection reads ` "sub"]` after a section name.
func (p *configParser) subsection(name string) (string, error) {
	if name == "" || strings.Contains(name, ".") {
		return "", errConfigUnsure
	}
	c, ok := p.next()
	for ok && isConfigSpace(c) {
		c, ok = p.next()
	}
	if !ok || c != '"' {
		return "", errConfigUnsure
	}
	var sub []byte
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return "", errConfigUnsure
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, ok = p.next(); !ok || c == '\n' {
				return "", errConfigUnsure
			}
		}
		sub = append(sub, c)
	}
	if c, ok := p.next(); !ok || c != ']' {
		return "", errConfigUnsure
	}
	return name + "." + string(sub), nil
}

// entry reads `name [= value]` starting with its first character.
func (p *configParser) entry(first byte) (name, val string, err error) {
	n := []byte{toLower(first)}
	for {
		c, ok := p.next()
		if !ok {
			return string(n), "", nil
		}
		if isAlnum(c) || c == '-' {
			n = append(n, toLower(c))
			continue
		}
		p.unread()
		break
	}
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return string(n), "", nil
		}
		if c == ' ' || c == '\t' {
			continue
		}
		if c != '=' { // git refuses even a comment here
			return "", "", errConfigUnsure
		}
		break
	}
	v, err := p.value()
	return string(n), v, err
}

// value reads a value after "=", as git's parse_value: unquoted runs of
// white space become that many single spaces unless they end the value,
// quotes are dropped, comments end it outside quotes, and only the escapes
// \\ \" \n \t \b and backslash-newline are known.
func (p *configParser) value() (string, error) {
	var v []byte
	quoted := false
	spaces := 0
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			if quoted {
				return "", errConfigUnsure
			}
			return string(v), nil
		}
		if !quoted && (c == ';' || c == '#') {
			p.skipLine()
			return string(v), nil
		}
		if !quoted && isConfigSpace(c) {
			if len(v) > 0 {
				spaces++
			}
			continue
		}
		for ; spaces > 0; spaces-- {
			v = append(v, ' ')
		}
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			e, ok := p.next()
			if !ok {
				return "", errConfigUnsure
			}
			switch e {
			case '\n':
				// continuation: nothing added
			case 't':
				v = append(v, '\t')
			case 'b':
				v = append(v, '\b')
			case 'n':
				v = append(v, '\n')
			case '\\', '"':
				v = append(v, e)
			default:
				return "", errConfigUnsure
			}
		case 0:
			return "", errConfigUnsure
		default:
			v = append(v, c)
		}
	}
}

func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' } // git's isspace without \n
func isAlpha(c byte) bool       { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool       { return isAlpha(c) || c >= '0' && c <= '9' }
func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
