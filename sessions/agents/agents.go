// Package agents knows where AI agents (Claude Code, Codex) keep their
// session transcript files on this machine: which files belong to a project,
// the archive path a session travels under inside a snapshot TAR, and where
// a restored session goes. It is the file-system side of package sessions;
// it does not parse a single turn (package agentturn) nor install agent
// hooks (package hooks).
//
// It reads directories and the first lines of transcripts; it never writes.
// Symbolic links are never followed: a transcript that is a symlink, or that
// lies below a symlinked directory inside the agent's tree, is not listed.
package agents

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// ErrNoSession is returned when no session matches.
var ErrNoSession = fault.Sentinel(fault.Failed, "no agent session found")

// ErrUnknownAgent is returned for an agent name other than claude or codex.
var ErrUnknownAgent = fault.Sentinel(fault.Usage, "unknown agent (use claude or codex)")

// Session is one transcript on this machine.
type Session struct {
	Agent   string    // session.AgentClaude or session.AgentCodex
	ID      string    // the agent's session id
	Path    string    // absolute local path
	Rel     string    // archive path inside the agent root ("projects/…", "sessions/…")
	ModTime time.Time // last modification
	Size    int64
	// Version is the agent version the transcript records ("" if unknown).
	Version string
}

// Project is the work tree sessions are looked up for.
type Project struct {
	Root     string // absolute work-tree path
	Resolved string // Root with symlinks resolved ("" or equal when none)
}

// Adapter is one agent's file layout.
type Adapter interface {
	// Name is session.AgentClaude or session.AgentCodex.
	Name() string
	// Root is the agent's data directory (honouring CLAUDE_CONFIG_DIR /
	// CODEX_HOME).
	Root() (string, error)
	// Discover lists the project's sessions, most recently modified first.
	Discover(p Project) ([]Session, error)
	// Destination is the archive-relative path a session restores to in
	// the project at root (an absolute local path). archive is the path the
	// snapshot carries; id is the session id to write (a fork id for
	// keep-both).
	Destination(archive, srcID, id, root string) (string, error)
	// Rediscover finds the session with id at rel, as discovery would see
	// it at absolute path abs (which may be a temporary file about to be
	// renamed to Root/rel); it fails if discovery would not find it there.
	Rediscover(rel, abs, id string) error
	// RewriteID returns a record rewriter replacing the session id srcID
	// with id (for a fork), or nil when srcID == id.
	RewriteID(srcID, id string) func([]byte) ([]byte, error)
	// VersionWarning returns a warning when version is outside the range
	// git-ctx was tested with, else "". Never blocks (unlike rc.8).
	VersionWarning(version string) string
}

// For returns the adapter of agent.
func For(agent string) (Adapter, error) {
	switch agent {
	case session.AgentClaude:
		return Claude{}, nil
	case session.AgentCodex:
		return Codex{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, agent)
}

// All returns every adapter.
func All() []Adapter { return []Adapter{Claude{}, Codex{}} }

// agentRoot: the environment variable when set (absolute), else $HOME/<dot>,
// else $HOME/.config/<name> when only that exists.
func agentRoot(envVar, dot, name string) (string, error) {
	if v := os.Getenv(envVar); v != "" {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("%s=%q is not an absolute path: set it to an absolute path or unset it", envVar, v)
		}
		return filepath.Clean(v), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return "", fmt.Errorf("cannot locate the home directory: set HOME or %s", envVar)
	}
	primary := filepath.Join(home, dot)
	if _, err := os.Lstat(primary); err != nil {
		alt := filepath.Join(home, ".config", name)
		if fi, err := os.Lstat(alt); err == nil && fi.IsDir() {
			return alt, nil
		}
	}
	return primary, nil
}

// listJSONL lists the regular *.jsonl files directly in dir (symlinks and
// other types are skipped). A missing dir is an empty list.
func listJSONL(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []fs.DirEntry
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e)
		}
	}
	return out, nil
}

func sortNewest(list []Session) {
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].ModTime.Equal(list[j].ModTime) {
			return list[i].ModTime.After(list[j].ModTime)
		}
		return list[i].Rel < list[j].Rel
	})
}

// firstLines reads up to max bytes of whole lines from the start of file
// (at most n lines), for identity and version sniffing.
func firstLines(file string, n int, max int64) ([][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, max), 64<<10)
	var out [][]byte
	for len(out) < n {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			out = append(out, line)
		}
		if err != nil {
			break
		}
	}
	return out, nil
}

// versionIn reports whether v (x.y.z) lies in [lo, hi]; ok is false when v
// does not parse.
func versionIn(v, lo, hi string) (in, ok bool) {
	pv, ok1 := parseVersion(v)
	pl, _ := parseVersion(lo)
	ph, _ := parseVersion(hi)
	if !ok1 {
		return false, false
	}
	return cmpVersion(pv, pl) >= 0 && cmpVersion(pv, ph) <= 0, true
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func cmpVersion(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// stringField extracts a top-level (or payload.) string member from a JSON
// line; "" when absent or not a string.
func stringField(line []byte, key string) (top, payload string) {
	var v map[string]json.RawMessage
	if json.Unmarshal(line, &v) != nil {
		return "", ""
	}
	_ = json.Unmarshal(v[key], &top)
	var p map[string]json.RawMessage
	if json.Unmarshal(v["payload"], &p) == nil {
		_ = json.Unmarshal(p[key], &payload)
	}
	return top, payload
}

// within reports whether p is root or inside it (both cleaned, absolute).
func within(p, root string) bool {
	if root == "" || p == "" {
		return false
	}
	p, root = filepath.Clean(p), filepath.Clean(root)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// checkRel checks an archive-relative destination with the format's rules.
func checkRel(agent, rel string) error {
	if err := session.CheckAdapterPath(agent, rel, true); err != nil {
		return fmt.Errorf("destination %q: %w", rel, err)
	}
	return nil
}

// versionWarning is an adapter's VersionWarning: a warning naming agent when
// the version v it recorded is known and outside lo..hi (or unreadable).
func versionWarning(agent, v, lo, hi string) string {
	if v == "" {
		return ""
	}
	if in, ok := versionIn(v, lo, hi); !ok || !in {
		return fmt.Sprintf("%s %s is outside the versions tested with this format (%s to %s); continuing", agent, v, lo, hi)
	}
	return ""
}
