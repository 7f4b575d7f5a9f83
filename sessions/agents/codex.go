package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/git-ctx/git-ctx/formats/session"
)

// Codex is the Codex CLI's layout: <root>/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl,
// root = $CODEX_HOME, else ~/.codex (else ~/.config/codex when only that
// exists). A session's identity is the file name's trailing UUID (forks
// replay their parent's session_meta, so the first record is not unique);
// its project is the first record's payload.cwd.
type Codex struct{}

// Codex versions git-ctx was tested with (rc.8's window); others only warn.
const (
	codexTestedLo = "0.133.0"
	codexTestedHi = "0.145.0"
)

var trailingUUID = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at start
	return regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)
})

// Name implements Adapter.
func (Codex) Name() string { return session.AgentCodex }

// Root implements Adapter.
func (Codex) Root() (string, error) { return agentRoot("CODEX_HOME", ".codex", "codex") }

// CodexSessionID is the id of a rollout file: its trailing UUID, else
// payload.id / id of its first record, else the file name stem.
func CodexSessionID(name string, first []byte) string {
	if m := trailingUUID().FindStringSubmatch(name); m != nil {
		return strings.ToLower(m[1])
	}
	if top, pl := stringField(first, "id"); pl != "" || top != "" {
		if pl != "" {
			return pl
		}
		return top
	}
	return strings.TrimSuffix(name, ".jsonl")
}

// Discover implements Adapter: every regular *.jsonl under sessions/ whose
// first record's cwd is the work tree or inside it.
func (c Codex) Discover(p Project) ([]Session, error) {
	root, err := c.Root()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(root, "sessions")
	var out []Session
	err = filepath.WalkDir(base, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && abs == base {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		lines, _ := firstLines(abs, 1, session.MaxRecordSize)
		if len(lines) == 0 {
			return nil
		}
		top, pl := stringField(lines[0], "cwd")
		cwd := pl
		if cwd == "" {
			cwd = top
		}
		if !within(cwd, p.Root) && !within(cwd, p.Resolved) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return nil
		}
		_, ver := stringField(lines[0], "cli_version")
		out = append(out, Session{
			Agent: session.AgentCodex, ID: CodexSessionID(d.Name(), lines[0]), Path: abs,
			Rel: filepath.ToSlash(rel), ModTime: fi.ModTime(), Size: fi.Size(), Version: ver,
		})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list Codex sessions in %s: %w", base, err)
	}
	sortNewest(out)
	return out, nil
}

// Destination implements Adapter: the archive path itself (Codex files are
// not grouped by project); for a fork the trailing UUID (or the whole stem)
// of the file name is replaced by id.
func (Codex) Destination(archive, srcID, id, root string) (string, error) {
	rel := archive
	if id != srcID {
		dir, name := path.Split(archive)
		if m := trailingUUID().FindStringSubmatchIndex(name); m != nil {
			name = name[:m[2]] + id + ".jsonl"
		} else {
			name = id + ".jsonl"
		}
		rel = dir + name
	}
	return rel, checkRel(session.AgentCodex, rel)
}

// Rediscover implements Adapter: the file must be a regular file under
// sessions/ whose name yields id.
func (Codex) Rediscover(rel, abs, id string) error {
	if !strings.HasPrefix(rel, "sessions/") {
		return fmt.Errorf("%w: Codex would not find %s", ErrNoSession, rel)
	}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrNoSession, abs)
	}
	lines, _ := firstLines(abs, 1, session.MaxRecordSize)
	var first []byte
	if len(lines) > 0 {
		first = lines[0]
	}
	if got := CodexSessionID(path.Base(rel), first); got != strings.ToLower(id) && got != id {
		return fmt.Errorf("%w: Codex would name %s session %s, not %s", ErrNoSession, rel, got, id)
	}
	return nil
}

// RewriteID implements Adapter: in session_meta records, an id member
// equal to srcID becomes id.
func (Codex) RewriteID(srcID, id string) func([]byte) ([]byte, error) {
	if srcID == id {
		return nil
	}
	return func(line []byte) ([]byte, error) {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &head) != nil || head.Type != "session_meta" {
			return line, nil
		}
		return session.RewriteLine(line, func(k, v string) (string, bool) {
			if k == "id" && v == srcID {
				return id, true
			}
			return v, false
		})
	}
}

// VersionWarning implements Adapter.
func (Codex) VersionWarning(v string) string {
	return versionWarning("Codex", v, codexTestedLo, codexTestedHi)
}
