package session

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Path tokens (§8.4). The part after a token always uses "/".
const (
	HomeToken   = "${HOME}"
	repoPrefix  = "${REPO:"
	workPrefix  = "${WORK:"
	tokenPrefix = "${"
)

// RepoToken returns "${REPO:<id>}".
func RepoToken(id string) string { return repoPrefix + id + "}" }

// WorkToken returns "${WORK:<alias>}".
func WorkToken(alias string) string { return workPrefix + alias + "}" }

var pathKeys = map[string]map[string]bool{
	AgentClaude: set("cwd", "path", "file", "filename", "filePath", "file_path",
		"projectPath", "project_path", "workingDirectory", "workdir"),
	AgentCodex: set("cwd", "path", "workdir", "workingDirectory", "filePath", "file_path"),
}

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// PathKeys returns the agent's allow-listed member keys, sorted (nil for an
// unknown agent). Keys match exactly and case-sensitively.
func PathKeys(agent string) []string {
	var ks []string
	for k := range pathKeys[agent] {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// IsPathKey reports whether key is on the agent's allow-list.
func IsPathKey(agent, key string) bool { return pathKeys[agent][key] }

// LooksLikePath is the §8.3 test: the value starts with "/" or "${", or has
// drive-letter form (ASCII letter, ':', then '\' or '/'). For Claude the
// value must also contain no newline (Codex has no such rule). Unknown
// agents: false.
func LooksLikePath(agent, v string) bool {
	switch agent {
	case AgentClaude:
		if strings.IndexByte(v, '\n') >= 0 {
			return false
		}
	case AgentCodex:
	default:
		return false
	}
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, tokenPrefix) || isDrivePath(v)
}

func isDrivePath(v string) bool {
	return len(v) >= 3 && isASCIILetter(v[0]) && v[1] == ':' && (v[2] == '\\' || v[2] == '/')
}

// Root maps a token ID (project ID or WORK alias) to a local directory.
type Root struct {
	ID string
	// Path is the configured root, absolute in the host's form. Expansion
	// uses it.
	Path string
	// Resolved is the symlink-resolved Path, if it differs (the caller
	// resolves; this package touches no file system). Normalisation matches
	// either.
	Resolved string
}

// PathMap is one device's view of where tokens point. It is plain data; the
// zero value maps nothing. IDs that are empty or contain '}' are ignored.
type PathMap struct {
	Home     string
	Projects []Root // ${REPO:<id>}
	Work     []Root // ${WORK:<alias>}
	// Windows selects Windows path rules (drive letters, '\' separators,
	// case-insensitive root matching); otherwise POSIX rules.
	Windows bool
}

// NormalizePath turns one path value into its portable form (export):
//
//  1. a value already starting with "${" is returned unchanged (it is a
//     token; rc.8 would clean it, which can corrupt "${HOME}/../x");
//  2. otherwise the path is cleaned with the host's rules;
//  3. the longest project root containing it (configured or resolved form)
//     gives "${REPO:<id>}" or "${REPO:<id>}/<rel>";
//  4. else the longest WORK root gives "${WORK:<alias>}[/<rel>]";
//  5. else Home gives "${HOME}[/<rel>]";
//  6. else the cleaned path, with '\' turned into '/' on Windows hosts and
//     for drive-letter paths (POSIX file names may contain '\', which rc.8
//     would turn into separators; here they are kept).
func (m *PathMap) NormalizePath(p string) string {
	if m == nil {
		m = &PathMap{}
	}
	if strings.HasPrefix(p, tokenPrefix) {
		return p
	}
	c := m.clean(p)
	if tok, rel, ok := m.longest(c, m.Projects, repoPrefix); ok {
		return tok + rel
	}
	if tok, rel, ok := m.longest(c, m.Work, workPrefix); ok {
		return tok + rel
	}
	if m.Home != "" {
		if rel, ok := m.within(c, m.clean(m.Home)); ok {
			return HomeToken + rel
		}
	}
	if m.Windows || isDrivePath(c) {
		return strings.ReplaceAll(c, `\`, "/")
	}
	return c
}

// longest finds the longest root containing c and returns its token and
// "/<rel>" (or "" when c is the root itself).
func (m *PathMap) longest(c string, roots []Root, prefix string) (string, string, bool) {
	best, bestRel, bestLen := "", "", -1
	for _, r := range roots {
		if !validTokenID(r.ID) {
			continue
		}
		for _, cand := range []string{r.Path, r.Resolved} {
			if cand == "" {
				continue
			}
			cr := m.clean(cand)
			if rel, ok := m.within(c, cr); ok && len(cr) > bestLen {
				best, bestRel, bestLen = prefix+r.ID+"}", rel, len(cr)
			}
		}
	}
	return best, bestRel, bestLen >= 0
}

func validTokenID(id string) bool { return id != "" && !strings.Contains(id, "}") }

// within reports whether c is root or below it, returning "" or "/<rel>"
// with '/' separators.
func (m *PathMap) within(c, root string) (string, bool) {
	if root == "" || len(c) < len(root) {
		return "", false
	}
	head := c[:len(root)]
	if m.Windows {
		if !strings.EqualFold(head, root) {
			return "", false
		}
	} else if head != root {
		return "", false
	}
	sep := byte('/')
	if m.Windows {
		sep = '\\'
	}
	rest := c[len(root):]
	switch {
	case rest == "":
		return "", true
	case root[len(root)-1] == sep: // "/" or `C:\`
	case rest[0] == sep:
		rest = rest[1:]
	default:
		return "", false
	}
	if rest == "" {
		return "", true
	}
	if m.Windows {
		rest = strings.ReplaceAll(rest, `\`, "/")
	}
	return "/" + rest, true
}

// ExpandPath turns a portable value back into a local path (restore):
//
//   - "${HOME}" or "${HOME}/<rel>": Home joined with rel (unchanged if Home
//     is empty);
//   - "${REPO:<id>}[/<rel>]" at the start of the value: the mapped
//     project's Path joined with rel; unchanged if <id> is not mapped. rc.8
//     matches the token anywhere in the value; only a leading token is
//     expanded here;
//   - "${WORK:<alias>}[/<rel>]" likewise;
//   - any other value starting with "${" is left unchanged;
//   - anything else: on Windows '/' becomes '\'; on POSIX the value is left
//     as it is (rc.8 cleans it, which is the identity on everything export
//     produced and can only alter foreign input).
func (m *PathMap) ExpandPath(v string) string {
	if m == nil {
		m = &PathMap{}
	}
	if v == HomeToken || strings.HasPrefix(v, HomeToken+"/") {
		if m.Home == "" {
			return v
		}
		return m.join(m.Home, v[len(HomeToken):])
	}
	for _, t := range []struct {
		prefix string
		roots  []Root
	}{{repoPrefix, m.Projects}, {workPrefix, m.Work}} {
		if !strings.HasPrefix(v, t.prefix) {
			continue
		}
		end := strings.IndexByte(v, '}')
		if end < 0 {
			return v
		}
		id, rest := v[len(t.prefix):end], v[end+1:]
		if id == "" || (rest != "" && rest[0] != '/') {
			return v
		}
		for _, r := range t.roots {
			if r.ID == id && validTokenID(id) {
				root := r.Path
				if root == "" {
					root = r.Resolved
				}
				if root == "" {
					return v
				}
				return m.join(root, rest)
			}
		}
		return v
	}
	if strings.HasPrefix(v, tokenPrefix) {
		return v
	}
	if m.Windows {
		return strings.ReplaceAll(v, "/", `\`)
	}
	return v
}

// join appends rel ("" or "/<rel>") to root and cleans the result.
func (m *PathMap) join(root, rel string) string {
	if m.Windows {
		return winClean(root + strings.ReplaceAll(rel, "/", `\`))
	}
	return path.Clean(root + rel)
}

func (m *PathMap) clean(p string) string {
	if m.Windows {
		return winClean(p)
	}
	return path.Clean(p)
}

// winClean cleans a Windows path lexically, as filepath.Clean does on
// Windows: '/' becomes '\', the volume (drive "C:" or UNC "\\host\share")
// is kept, and ".", ".." and repeated separators are resolved in the rest.
func winClean(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	n := winVolumeLen(p)
	vol, rest := p[:n], p[n:]
	if rest == "" {
		if n > 0 && strings.HasPrefix(vol, `\\`) {
			return vol + `\`
		}
		if n > 0 {
			return vol + "."
		}
		return "."
	}
	c := path.Clean(strings.ReplaceAll(rest, `\`, "/"))
	return vol + strings.ReplaceAll(c, "/", `\`)
}

func winVolumeLen(p string) int {
	if len(p) >= 2 && isASCIILetter(p[0]) && p[1] == ':' {
		return 2
	}
	if len(p) >= 5 && p[0] == '\\' && p[1] == '\\' && p[2] != '\\' {
		host := strings.IndexByte(p[2:], '\\')
		if host < 0 {
			return 0
		}
		host += 2
		if host+1 >= len(p) || p[host+1] == '\\' {
			return 0
		}
		share := strings.IndexByte(p[host+1:], '\\')
		if share < 0 {
			return len(p)
		}
		return host + 1 + share
	}
	return 0
}

// NormalizeLine rewrites one JSONL record for export: every string value of
// an allow-listed key (PathKeys) that LooksLikePath is replaced by
// m.NormalizePath(value). All other bytes are kept exactly (see
// RewriteLine); a record with nothing to rewrite comes back byte-identical
// (the same slice).
func NormalizeLine(agent string, m *PathMap, line []byte) ([]byte, error) {
	r, err := NewNormalizer(agent, m)
	if err != nil {
		return nil, err
	}
	return r.Line(line)
}

// ExpandLine rewrites one JSONL record for restore: like NormalizeLine with
// m.ExpandPath.
func ExpandLine(agent string, m *PathMap, line []byte) ([]byte, error) {
	r, err := NewExpander(agent, m)
	if err != nil {
		return nil, err
	}
	return r.Line(line)
}

// NewNormalizer returns a LineRewriter doing NormalizeLine record after
// record.
func NewNormalizer(agent string, m *PathMap) (*LineRewriter, error) {
	return pathRewriter(agent, m.NormalizePath)
}

// NewExpander returns a LineRewriter doing ExpandLine record after record.
func NewExpander(agent string, m *PathMap) (*LineRewriter, error) {
	return pathRewriter(agent, m.ExpandPath)
}

func pathRewriter(agent string, f func(string) string) (*LineRewriter, error) {
	keys := pathKeys[agent]
	if keys == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, agent)
	}
	return &LineRewriter{keys: keys, keyList: PathKeys(agent), fn: func(key, value string) (string, bool) {
		if !keys[key] || !LooksLikePath(agent, value) {
			return "", false
		}
		return f(value), true
	}}, nil
}
