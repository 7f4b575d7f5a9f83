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
	"strings"
	"sync"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// MCPServerName is the name git-ctx's MCP server is registered under.
const MCPServerName = "git-ctx"

// mcpEntry is how an agent starts the server: `git ctx mcp`, in the
// project's directory.
var mcpEntry = struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}{"git", []string{"ctx", "mcp"}}

// ErrMalformedConfig: an agent's configuration file that registration
// would change does not parse; nothing was written.
var ErrMalformedConfig = fault.Sentinel(fault.Config, "agent configuration file is malformed")

// ErrOtherServer: the agent's configuration registers another server
// under git-ctx's name; nothing was written (--force replaces it).
var ErrOtherServer = fault.Sentinel(fault.Conflict, "another MCP server is registered as git-ctx")

// MCPConfigPath is the project's MCP configuration for Claude Code.
func MCPConfigPath(top string) string { return filepath.Join(top, ".mcp.json") }

// MCPState is what a project's .mcp.json says of git-ctx's server.
type MCPState struct {
	Path       string
	Exists     bool
	Registered bool   // a "git-ctx" server is there
	Ours       bool   // and it runs `git ctx mcp`
	Problem    string // why the file cannot be read ("" when it can)
}

// readMCPConfig reads .mcp.json: its root object and its mcpServers object
// (both empty when the file is missing).
func readMCPConfig(path string) (data []byte, root, servers *object, err error) {
	data, err = os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, err
	}
	if len(data) > 1<<20 {
		return nil, nil, nil, fmt.Errorf("%w: %s is larger than 1 MiB", ErrMalformedConfig, path)
	}
	if root, err = parseObject(data); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s is not a JSON object (%v): fix it, then run this again", ErrMalformedConfig, path, err)
	}
	if servers, err = parseObject(root.vals["mcpServers"]); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: \"mcpServers\" is not an object: fix it, then run this again", ErrMalformedConfig, path)
	}
	return data, root, servers, nil
}

// isOurs: the registered entry runs `git ctx mcp`. Keys match exactly, as
// they do for the agents that read the file: encoding/json's case-folding
// would take {"COMMAND": …} for a command the agent never sees.
func isOurs(raw json.RawMessage) bool {
	e, err := parseObject(raw)
	if err != nil {
		return false
	}
	var command string
	var args []string
	if json.Unmarshal(e.vals["command"], &command) != nil || json.Unmarshal(e.vals["args"], &args) != nil {
		return false
	}
	s := strings.Join(append([]string{command}, args...), " ")
	return s == "git ctx mcp" || s == "git-ctx mcp"
}

// ClaudeMCPState reports the registration in the project's .mcp.json.
func ClaudeMCPState(top string) MCPState {
	st := MCPState{Path: MCPConfigPath(top)}
	data, _, servers, err := readMCPConfig(st.Path)
	switch {
	case err != nil:
		st.Exists, st.Problem = true, err.Error()
		return st
	case data == nil:
		return st
	}
	st.Exists = true
	raw, ok := servers.vals[MCPServerName]
	st.Registered, st.Ours = ok, ok && isOurs(raw)
	return st
}

// InstallClaudeMCP registers `git ctx mcp` as the server "git-ctx" in the
// project's .mcp.json, where Claude Code looks for a project's MCP
// servers, keeping every other server and setting. A malformed file is
// refused (ErrMalformedConfig); a "git-ctx" entry that runs something else
// is replaced only with opt.Force.
func InstallClaudeMCP(top string, opt Options) (string, error) {
	path := MCPConfigPath(top)
	_, root, servers, err := readMCPConfig(path)
	if err != nil {
		return "", err
	}
	if raw, ok := servers.vals[MCPServerName]; ok {
		if isOurs(raw) {
			return "claude: the MCP server git-ctx is already registered in " + path, nil
		}
		if !opt.Force {
			return "", fmt.Errorf("%w: %s runs something else under that name: pass --force to replace it", ErrOtherServer, path)
		}
	}
	ours, _ := json.Marshal(mcpEntry)
	servers.set(MCPServerName, ours)
	root.set("mcpServers", servers.compact())
	if err := writeFileAtomic(path, root.pretty(), 0o644); err != nil {
		return "", err
	}
	return "claude: MCP server git-ctx ('git ctx mcp') registered in " + path, nil
}

// UninstallClaudeMCP removes the "git-ctx" server InstallClaudeMCP
// registered (only when it runs `git ctx mcp`), and the file when nothing
// else is left in it.
func UninstallClaudeMCP(top string) (string, error) {
	path := MCPConfigPath(top)
	data, root, servers, err := readMCPConfig(path)
	if err != nil {
		return "", err
	}
	raw, ok := servers.vals[MCPServerName]
	if data == nil || !ok || !isOurs(raw) {
		return "claude: MCP server not registered", nil
	}
	servers.del(MCPServerName)
	if len(servers.keys) == 0 {
		root.del("mcpServers")
	} else {
		root.set("mcpServers", servers.compact())
	}
	if len(root.keys) == 0 {
		if err := os.Remove(path); err != nil {
			return "", err
		}
		return "claude: removed " + path + " (it held only git-ctx's server)", nil
	}
	if err := writeFileAtomic(path, root.pretty(), 0o644); err != nil {
		return "", err
	}
	return "claude: MCP server git-ctx removed from " + path, nil
}

// codexMCPTable is the TOML table that registers the server with Codex.
const codexMCPTable = "[mcp_servers." + MCPServerName + "]\ncommand = \"git\"\nargs = [\"ctx\", \"mcp\"]\n"

// codexMCPHeader finds the header of the git-ctx server's table.
var codexMCPHeader = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at start
	return regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:git-ctx|"git-ctx")[ \t]*\][ \t]*(?:#.*)?$`)
})

// nextTable finds the next table header.
var nextTable = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*\[`) })

// codexMCPUsers records the repositories that registered the server with
// Codex.
func codexMCPUsers(configPath string) usersFile {
	return usersFile(filepath.Join(codexStateDir(configPath), "mcp-users"))
}

// CodexMCPInstalled reports whether Codex's configuration registers a
// git-ctx MCP server.
func CodexMCPInstalled() bool {
	path, err := CodexConfigPath()
	if err != nil {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && codexMCPHeader().Match(data)
}

// InstallCodexMCP registers `git ctx mcp` as Codex's MCP server git-ctx
// ([mcp_servers.git-ctx] in $CODEX_HOME/config.toml, default
// ~/.codex/config.toml) for the repository repo. That file is the user's
// own, read in every repository, so nothing is written unless opt.Global.
// Codex starts the server in the directory it runs in, so the one entry
// serves every repository.
func InstallCodexMCP(repo string, opt Options) (string, error) {
	path, err := CodexConfigPath()
	if err != nil {
		return "", err
	}
	if !opt.Global {
		return "", fmt.Errorf("%w: Codex reads MCP servers from %s, your own configuration for every repository: pass --global to register git-ctx's there",
			ErrShared, path)
	}
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if codexMCPHeader().Match(cur) {
		if err := codexMCPUsers(path).add(repo); err != nil {
			return "", err
		}
		return "codex: the MCP server git-ctx is already registered in " + path, nil
	}
	out := append([]byte{}, cur...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if len(out) > 0 {
		out = append(out, '\n')
	}
	out = append(out, codexMCPTable...)
	if err := codexMCPUsers(path).add(repo); err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return "", err
	}
	return "codex: MCP server git-ctx registered in " + path + " (your configuration for every repository)", nil
}

// UninstallCodexMCP removes the table InstallCodexMCP added once no other
// repository that registered it remains (or with opt.Global); a table
// whose text is not exactly git-ctx's is left alone.
func UninstallCodexMCP(repo string, opt Options) (string, error) {
	path, err := CodexConfigPath()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "codex: MCP server not registered", nil
	}
	if err != nil {
		return "", err
	}
	loc := codexMCPHeader().FindIndex(data)
	if loc == nil {
		return "codex: MCP server not registered", nil
	}
	users := codexMCPUsers(path)
	if msg, keep, err := users.release(repo, path, "the MCP server", opt.Global); keep {
		return msg, err
	}
	end := len(data)
	if next := nextTable().FindIndex(data[loc[1]:]); next != nil {
		end = loc[1] + next[0]
	}
	if strings.TrimSpace(string(data[loc[0]:end])) != strings.TrimSpace(codexMCPTable) {
		return fmt.Sprintf("codex: the [mcp_servers.%s] table in %s was edited: remove it by hand", MCPServerName, path), nil
	}
	if err := users.write(nil); err != nil {
		return "", err
	}
	start := loc[0]
	if start > 0 && bytes.HasSuffix(data[:start], []byte("\n\n")) {
		start-- // the blank line install put before the table
	}
	out := append(append([]byte{}, data[:start]...), data[end:]...)
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return "", err
	}
	return "codex: MCP server git-ctx removed from " + path, nil
}
