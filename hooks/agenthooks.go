package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// Agent hook commands.
const (
	ClaudeStopCommand = "git-ctx hook claude-stop"
	// ClaudeSessionStartCommand prints the session-start briefing.
	ClaudeSessionStartCommand = "git-ctx hook session-start"
	CodexNotifyLine           = `notify = ["git-ctx", "hook", "codex-notify"]`
)

// claudeHooks are the Claude Code hooks install adds: the event, the
// command and its time box in seconds.
var claudeHooks = []struct {
	event, command string
	timeout        int
}{
	{"Stop", ClaudeStopCommand, 30},
	{"SessionStart", ClaudeSessionStartCommand, 15},
}

// ClaudeSettingsPath is the project's local Claude Code settings file.
func ClaudeSettingsPath(top string) string {
	return filepath.Join(top, ".claude", "settings.local.json")
}

// CodexConfigPath is Codex's configuration ($CODEX_HOME/config.toml, default
// ~/.codex/config.toml). Codex reads notify only from there.
func CodexConfigPath() (string, error) {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return filepath.Join(h, "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".codex", "config.toml"), nil
}

// backupPaths: where install keeps the original bytes of an agent file and
// the bytes it wrote, so uninstall can restore the original exactly when
// nobody changed the file since.
func backupPaths(stateDir, name string) (orig, ours string) {
	return filepath.Join(stateDir, "hooks-backup", name+".orig"), filepath.Join(stateDir, "hooks-backup", name+".ours")
}

const absentMarker = "git-ctx: the file did not exist\n"

func saveBackup(stateDir, name string, orig []byte, existed bool, ours []byte) error {
	o, w := backupPaths(stateDir, name)
	if err := os.MkdirAll(filepath.Dir(o), 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(o); errors.Is(err, fs.ErrNotExist) {
		if !existed {
			orig = []byte(absentMarker)
		}
		if err := os.WriteFile(o, orig, 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(w, ours, 0o600)
}

// restoreBackup puts the original back when the file still holds exactly
// what install wrote; it reports whether it did.
func restoreBackup(stateDir, name, path string) (bool, error) {
	o, w := backupPaths(stateDir, name)
	orig, err1 := os.ReadFile(o)
	ours, err2 := os.ReadFile(w)
	cur, err3 := os.ReadFile(path)
	if err1 != nil || err2 != nil || err3 != nil || !bytes.Equal(cur, ours) {
		return false, nil
	}
	if string(orig) == absentMarker {
		if err := os.Remove(path); err != nil {
			return false, err
		}
		os.Remove(filepath.Dir(path)) // only succeeds if install left it empty
	} else if err := writeFileAtomic(path, orig, 0o644); err != nil {
		return false, err
	}
	os.Remove(o)
	os.Remove(w)
	// Only succeed when nothing else is kept there.
	os.Remove(filepath.Dir(o))
	os.Remove(stateDir)
	return true, nil
}

// writeFileAtomic replaces (or creates) path with data (atomicfile),
// keeping the permissions of an existing file (else mode).
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.WriteFile(path, data, atomicfile.Options{Perm: mode, Replace: true, MkdirPerm: 0o755})
}

// object is a JSON object that keeps its members' order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(data []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) compact() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, o.vals[k]) == nil {
			b.Write(c.Bytes())
		} else {
			b.Write(o.vals[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (o *object) pretty() []byte {
	var b bytes.Buffer
	json.Indent(&b, o.compact(), "", "  ")
	b.WriteByte('\n')
	return b.Bytes()
}

type hookGroup struct {
	Matcher *string   `json:"matcher,omitempty"`
	Hooks   []hookCmd `json:"hooks"`
}

type hookCmd struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// groupHasOurs: a hook group in Claude's settings runs command. Keys match
// exactly, as Claude Code reads them ({"HOOKS": …} runs nothing).
func groupHasOurs(raw json.RawMessage, command string) bool {
	g, err := parseObject(raw)
	if err != nil {
		return false
	}
	var hooks []json.RawMessage
	if json.Unmarshal(g.vals["hooks"], &hooks) != nil {
		return false
	}
	for _, h := range hooks {
		var cmd string
		if o, err := parseObject(h); err == nil && json.Unmarshal(o.vals["command"], &cmd) == nil && strings.TrimSpace(cmd) == command {
			return true
		}
	}
	return false
}

// InstallClaude merges a Stop hook (a checkpoint per turn) and a
// SessionStart hook (the briefing) running git-ctx into the project's
// .claude/settings.local.json, keeping every other setting; a hook already
// there is not added twice.
func InstallClaude(top, stateDir string) (string, error) {
	path := ClaudeSettingsPath(top)
	orig, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	root, err := parseObject(orig)
	if err != nil {
		return "", fmt.Errorf("%s is not a JSON object (%v): fix it, then install again", path, err)
	}
	hooksObj, err := parseObject(root.vals["hooks"])
	if err != nil {
		return "", fmt.Errorf("%s: \"hooks\" is not an object: fix it, then install again", path)
	}
	var added []string
	for _, h := range claudeHooks {
		var groups []json.RawMessage
		if raw, ok := hooksObj.vals[h.event]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return "", fmt.Errorf("%s: hooks.%s is not a list: fix it, then install again", path, h.event)
			}
		}
		if slices.ContainsFunc(groups, func(g json.RawMessage) bool { return groupHasOurs(g, h.command) }) {
			continue
		}
		ours, _ := json.Marshal(hookGroup{Hooks: []hookCmd{{Type: "command", Command: h.command, Timeout: h.timeout}}})
		raw, _ := json.Marshal(append(groups, ours))
		hooksObj.set(h.event, raw)
		added = append(added, h.event)
	}
	if len(added) == 0 {
		return "claude: the Stop and SessionStart hooks already run git-ctx (" + path + ")", nil
	}
	root.set("hooks", hooksObj.compact())
	out := root.pretty()
	if err := saveBackup(stateDir, "claude-settings.local.json", orig, existed, out); err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return "", err
	}
	msg := "claude: " + added[0] + " hook added to " + path
	if len(added) > 1 {
		msg += " (and the " + strings.Join(added[1:], ", ") + " hook: the session-start briefing)"
	}
	return msg, nil
}

// UninstallClaude removes the hooks InstallClaude added: the original
// file comes back byte for byte when nothing else changed it; otherwise only
// git-ctx's entry is taken out.
func UninstallClaude(top, stateDir string) (string, error) {
	path := ClaudeSettingsPath(top)
	if ok, err := restoreBackup(stateDir, "claude-settings.local.json", path); err != nil || ok {
		return "claude: restored " + path, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "claude: not installed", nil
	}
	if err != nil {
		return "", err
	}
	root, err := parseObject(data)
	if err != nil {
		return "", fmt.Errorf("%s is not a JSON object: remove the git-ctx Stop hook by hand", path)
	}
	hooksObj, err := parseObject(root.vals["hooks"])
	if err != nil {
		return "claude: not installed", nil
	}
	removed := false
	for _, h := range claudeHooks {
		var groups, kept []json.RawMessage
		if json.Unmarshal(hooksObj.vals[h.event], &groups) != nil {
			continue
		}
		for _, g := range groups {
			if !groupHasOurs(g, h.command) {
				kept = append(kept, g)
			}
		}
		if len(kept) == len(groups) {
			continue
		}
		removed = true
		if len(kept) == 0 {
			hooksObj.del(h.event)
		} else {
			raw, _ := json.Marshal(kept)
			hooksObj.set(h.event, raw)
		}
	}
	if !removed {
		return "claude: not installed", nil
	}
	if len(hooksObj.keys) == 0 {
		root.del("hooks")
	} else {
		root.set("hooks", hooksObj.compact())
	}
	if err := writeFileAtomic(path, root.pretty(), 0o644); err != nil {
		return "", err
	}
	return "claude: removed git-ctx's hooks from " + path, nil
}

// ClaudeInstalled reports whether the project's settings run git-ctx on Stop.
func ClaudeInstalled(top string) bool {
	data, err := os.ReadFile(ClaudeSettingsPath(top))
	return err == nil && bytes.Contains(data, []byte(ClaudeStopCommand))
}

var notifyLineRE = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at start
	return regexp.MustCompile(`(?m)^[ \t]*notify[ \t]*=.*$`)
})

// codexStateDir keeps the backups of Codex's configuration beside it: the
// file belongs to the user, not to a repository, so any repository's
// uninstall must find the original.
func codexStateDir(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), ".git-ctx-backup")
}

// codexUsers records the repositories that installed Codex's notify.
func codexUsers(configPath string) usersFile {
	return usersFile(filepath.Join(codexStateDir(configPath), "users"))
}

// InstallCodex registers git-ctx as Codex's notify program for the
// repository repo (see repoKey). Codex reads notify only from the user's
// own configuration, shared by every repository, so nothing is written
// unless opt.Global. A notify that runs something else is left alone
// unless opt.Force.
func InstallCodex(repo string, opt Options) (string, error) {
	path, err := CodexConfigPath()
	if err != nil {
		return "", err
	}
	if !opt.Global {
		return "", fmt.Errorf("%w: Codex reads its notify program only from %s, your own configuration for every repository: pass --global to install it there",
			ErrShared, path)
	}
	stateDir := codexStateDir(path)
	orig, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var out []byte
	if loc := notifyLineRE().FindIndex(topLevel(orig)); loc != nil {
		line := string(orig[loc[0]:loc[1]])
		if strings.Contains(line, "git-ctx") {
			if err := codexUsers(path).add(repo); err != nil {
				return "", err
			}
			return "codex: notify already runs git-ctx (" + path + ")", nil
		}
		if !opt.Force {
			return "", fmt.Errorf("%w: %s already sets %s; Codex runs one notify program: pass --force to replace it, or call '%s' from yours", ErrManaged, path, strings.TrimSpace(line), "git-ctx hook codex-notify JSON")
		}
		out = append(append(append([]byte{}, orig[:loc[0]]...), CodexNotifyLine...), orig[loc[1]:]...)
	} else {
		// Top-level keys must come before the first [table].
		out = append([]byte(CodexNotifyLine+"\n"), orig...)
	}
	if err := saveBackup(stateDir, "codex-config.toml", orig, existed, out); err != nil {
		return "", err
	}
	if err := codexUsers(path).add(repo); err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return "", err
	}
	return "codex: notify set in " + path + " (your configuration for every repository)", nil
}

// topLevel returns data cut at the first TOML table header, so that only
// top-level keys are matched.
func topLevel(data []byte) []byte {
	if i := regexp.MustCompile(`(?m)^[ \t]*\[`).FindIndex(data); i != nil {
		return data[:i[0]]
	}
	return data
}

// UninstallCodex undoes InstallCodex for the repository repo: while other
// repositories that installed it remain, the notify stays; a notify this
// repository did not install (or one an older git-ctx installed without
// recording who) is left alone unless opt.Global.
func UninstallCodex(repo string, opt Options) (string, error) {
	path, err := CodexConfigPath()
	if err != nil {
		return "", err
	}
	if !CodexInstalled() {
		return "codex: not installed", nil
	}
	users := codexUsers(path)
	if msg, keep, err := users.release(repo, path, "the notify", opt.Global); keep {
		return msg, err
	}
	if err := users.write(nil); err != nil {
		return "", err
	}
	stateDir := codexStateDir(path)
	if ok, err := restoreBackup(stateDir, "codex-config.toml", path); err != nil || ok {
		return "codex: restored " + path, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	loc := notifyLineRE().FindIndex(topLevel(data))
	end := loc[1]
	if end < len(data) && data[end] == '\n' {
		end++
	}
	out := append(append([]byte{}, data[:loc[0]]...), data[end:]...)
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return "", err
	}
	return "codex: removed git-ctx's notify from " + path, nil
}

// CodexInstalled reports whether Codex's notify runs git-ctx.
func CodexInstalled() bool {
	path, err := CodexConfigPath()
	if err != nil {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	loc := notifyLineRE().FindIndex(topLevel(data))
	return loc != nil && strings.Contains(string(data[loc[0]:loc[1]]), "git-ctx")
}
