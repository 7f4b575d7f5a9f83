package agents

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/git-ctx/git-ctx/formats/session"
)

// Claude is Claude Code's layout: <root>/projects/<encoded cwd>/<session id>.jsonl,
// root = $CLAUDE_CONFIG_DIR, else ~/.claude (else ~/.config/claude when
// only that exists).
type Claude struct{}

// Claude versions git-ctx was tested with (rc.8's window); others only warn.
const (
	claudeTestedLo = "2.1.219"
	claudeTestedHi = "2.1.220"
)

// Name implements Adapter.
func (Claude) Name() string { return session.AgentClaude }

// Root implements Adapter.
func (Claude) Root() (string, error) { return agentRoot("CLAUDE_CONFIG_DIR", ".claude", "claude") }

// EncodeProjectKey is Claude Code's directory name for a working directory:
// every UTF-16 unit that is not an ASCII letter or digit becomes '-'; a
// result over 200 characters is cut to 200 and suffixed with '-' and the
// base-36 absolute value of a JavaScript-style 32-bit string hash.
func EncodeProjectKey(p string) string {
	units := utf16.Encode([]rune(p))
	b := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = h*31 + int32(u)
		if u < 0x80 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= 200 {
		return string(b)
	}
	a := int64(h)
	if a < 0 {
		a = -a
	}
	return string(b[:200]) + "-" + strconv.FormatInt(a, 36)
}

func (p Project) keys() []string {
	ks := []string{EncodeProjectKey(filepath.Clean(p.Root))}
	if p.Resolved != "" && p.Resolved != p.Root {
		if k := EncodeProjectKey(filepath.Clean(p.Resolved)); k != ks[0] {
			ks = append(ks, k)
		}
	}
	return ks
}

// Discover implements Adapter: the *.jsonl files in the project's encoded
// directory (of the configured and of the resolved work tree).
func (c Claude) Discover(p Project) ([]Session, error) {
	root, err := c.Root()
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, key := range p.keys() {
		dir := filepath.Join(root, "projects", key)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		ents, err := listJSONL(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			abs := filepath.Join(dir, e.Name())
			out = append(out, Session{
				Agent: session.AgentClaude, ID: strings.TrimSuffix(e.Name(), ".jsonl"), Path: abs,
				Rel: path.Join("projects", key, e.Name()), ModTime: fi.ModTime(), Size: fi.Size(),
				Version: claudeVersion(abs),
			})
		}
	}
	sortNewest(out)
	return out, nil
}

// claudeVersion: the "version" member of the first records that carry one.
func claudeVersion(file string) string {
	lines, _ := firstLines(file, 16, 1<<20)
	for _, l := range lines {
		if v, _ := stringField(l, "version"); v != "" {
			return v
		}
	}
	return ""
}

// Destination implements Adapter: projects/<encode(root resolved)>/<id>.jsonl;
// the source machine's directory key is not reused.
func (Claude) Destination(archive, srcID, id, root string) (string, error) {
	r := root
	if res, err := filepath.EvalSymlinks(root); err == nil {
		r = res
	}
	rel := path.Join("projects", EncodeProjectKey(filepath.Clean(r)), id+".jsonl")
	return rel, checkRel(session.AgentClaude, rel)
}

// Rediscover implements Adapter: discovery names a file by its stem, so
// the planned path must be projects/<key>/<id>.jsonl and abs a regular file.
func (Claude) Rediscover(rel, abs, id string) error {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || parts[0] != "projects" || parts[2] != id+".jsonl" {
		return fmt.Errorf("%w: Claude Code would not find session %s at %s", ErrNoSession, id, rel)
	}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrNoSession, abs)
	}
	return nil
}

// RewriteID implements Adapter: every sessionId or session_id member equal
// to srcID becomes id.
func (Claude) RewriteID(srcID, id string) func([]byte) ([]byte, error) {
	if srcID == id {
		return nil
	}
	return func(line []byte) ([]byte, error) {
		return session.RewriteLine(line, func(k, v string) (string, bool) {
			if (k == "sessionId" || k == "session_id") && v == srcID {
				return id, true
			}
			return v, false
		})
	}
}

// VersionWarning implements Adapter.
func (Claude) VersionWarning(v string) string {
	return versionWarning("Claude Code", v, claudeTestedLo, claudeTestedHi)
}
