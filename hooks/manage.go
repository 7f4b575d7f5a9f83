package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// Selection names what to install, uninstall or report.
type Selection struct {
	PostCommit bool // post-commit and post-merge
	PrePush    bool
	Claude     bool
	Codex      bool
	// MCP registers the MCP server `git ctx mcp` with the selected agents
	// (Claude Code: the project's .mcp.json; Codex: its configuration).
	MCP bool
}

// Default: with nothing selected, post-commit.
func (s Selection) orDefault() Selection {
	if !s.PostCommit && !s.PrePush && !s.Claude && !s.Codex {
		s.PostCommit = true
	}
	return s
}

func (s Selection) gitHooks() []string {
	var out []string
	if s.PostCommit {
		out = append(out, PostCommit, PostMerge)
	}
	if s.PrePush {
		out = append(out, PrePush)
	}
	return out
}

func stateDir(r *gitrepo.Repo) string { return filepath.Join(r.CommonDir, "ctx") }

// Install installs the selected hooks and returns one line per action.
// It continues past a hook it cannot install and returns the first error.
func Install(ctx context.Context, r *gitrepo.Repo, sel Selection, opt Options) ([]string, error) {
	sel = sel.orDefault()
	var lines []string
	var first error
	note := func(msg string, err error) {
		if msg != "" {
			lines = append(lines, msg)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	for _, h := range sel.gitHooks() {
		note(InstallGitHook(ctx, r, h, opt))
	}
	if sel.Claude || sel.Codex {
		top, err := r.WorkTree(ctx)
		if err != nil {
			return lines, err
		}
		if sel.Claude {
			if top == "" {
				note("", fmt.Errorf("--agent claude needs a work tree (this repository is bare)"))
			} else {
				msg, err := InstallClaude(top, stateDir(r))
				if err == nil {
					var added bool
					if added, err = ignoreClaudeSettings(ctx, r, top, stateDir(r)); added {
						msg += "; ignored in " + filepath.Join(r.CommonDir, "info", "exclude") + " (not in the project's files)"
					}
				}
				note(msg, err)
				if sel.MCP {
					note(InstallClaudeMCP(top, opt))
				}
			}
		}
		if sel.Codex {
			note(InstallCodex(repoKey(r), opt))
			if sel.MCP {
				note(InstallCodexMCP(repoKey(r), opt))
			}
		}
	}
	return lines, first
}

// Uninstall removes exactly what Install added for this repository.
func Uninstall(ctx context.Context, r *gitrepo.Repo, sel Selection, opt Options) ([]string, error) {
	// By default everything. Entries in places every repository shares
	// (Codex's configuration, a global hooks directory) are removed only
	// when no other repository that installed them remains.
	if !sel.PostCommit && !sel.PrePush && !sel.Claude && !sel.Codex {
		sel = Selection{PostCommit: true, PrePush: true, Claude: true, Codex: true, MCP: true}
	}
	var lines []string
	for _, h := range sel.gitHooks() {
		msg, err := UninstallGitHook(ctx, r, h, opt)
		if err != nil {
			return lines, err
		}
		lines = append(lines, msg)
	}
	if sel.Claude {
		if top, err := r.WorkTree(ctx); err == nil && top != "" {
			msg, err := UninstallClaude(top, stateDir(r))
			if err == nil {
				err = unignoreClaudeSettings(r, stateDir(r))
			}
			if err != nil {
				return lines, err
			}
			lines = append(lines, msg)
			if sel.MCP {
				if msg, err = UninstallClaudeMCP(top); err != nil {
					return lines, err
				}
				lines = append(lines, msg)
			}
		}
	}
	if sel.Codex {
		msg, err := UninstallCodex(repoKey(r), opt)
		if err != nil {
			return lines, err
		}
		lines = append(lines, msg)
		if sel.MCP {
			if msg, err = UninstallCodexMCP(repoKey(r), opt); err != nil {
				return lines, err
			}
			lines = append(lines, msg)
		}
	}
	return lines, nil
}

// Status describes every hook git-ctx knows.
type Status struct {
	Hooks    []HookState
	Managers []string
	Claude   bool
	Codex    bool
	// ClaudeMCP is the `git ctx mcp` registration in the work tree's
	// .mcp.json; CodexMCP, in Codex's own configuration.
	ClaudeMCP  MCPState
	CodexMCP   bool
	BinaryPath string // git-ctx as found on PATH ("" if not)
	LastRun    string
}

// GetStatus reports the wiring of every hook.
func GetStatus(ctx context.Context, r *gitrepo.Repo, lookPath func(string) (string, error)) (*Status, error) {
	st := &Status{Managers: []string{}}
	for _, h := range []string{PostCommit, PostMerge, PrePush} {
		hs, err := GitHookState(ctx, r, h)
		if err != nil {
			return nil, err
		}
		st.Hooks = append(st.Hooks, hs)
	}
	managers, err := DetectManagers(ctx, r)
	if err != nil {
		return nil, err
	}
	for _, m := range managers {
		st.Managers = append(st.Managers, m.Name)
	}
	if top, err := r.WorkTree(ctx); err == nil && top != "" {
		st.Claude = ClaudeInstalled(top)
		st.ClaudeMCP = ClaudeMCPState(top)
	}
	st.Codex, st.CodexMCP = CodexInstalled(), CodexMCPInstalled()
	if p, err := lookPath("git-ctx"); err == nil {
		st.BinaryPath = p
	}
	st.LastRun = lastLogLine(r)
	return st, nil
}

// LogFile is where hook runs are recorded (one line each).
func LogFile(r *gitrepo.Repo) string { return filepath.Join(stateDir(r), "hooks.log") }

// maxLog bounds hooks.log; past it the file starts over.
const maxLog = 256 << 10

// Log appends one line for a hook run: time, hook, duration, outcome.
func Log(r *gitrepo.Repo, hook string, took time.Duration, err error) {
	path := LogFile(r)
	if fi, e := os.Stat(path); e == nil && fi.Size() > maxLog {
		os.Remove(path)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, e := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if e != nil {
		return
	}
	defer f.Close()
	outcome := "ok"
	if err != nil {
		outcome = "error: " + oneLine(err.Error())
	}
	fmt.Fprintf(f, "%s %s %dms %s\n", time.Now().UTC().Format(time.RFC3339), hook, took.Milliseconds(), outcome)
}

func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

func lastLogLine(r *gitrepo.Repo) string {
	data, err := os.ReadFile(LogFile(r))
	if err != nil || len(data) == 0 {
		return ""
	}
	data = data[:len(data)-1]
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			return string(data[i+1:])
		}
	}
	return string(data)
}
