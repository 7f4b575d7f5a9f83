package output

import (
	"github.com/git-ctx/git-ctx/doctor"
	"github.com/git-ctx/git-ctx/hooks"
)

// HooksStatus is `hooks status --json`.
type HooksStatus struct {
	Hooks    []HookState `json:"hooks"`
	Managers []string    `json:"managers"`
	Claude   bool        `json:"claude"`
	Codex    bool        `json:"codex"`
	// ClaudeMCP is "registered", "not registered", "other" (a git-ctx
	// server that does not run `git ctx mcp`) or "unreadable" for the work
	// tree's .mcp.json; CodexMCP, Codex's [mcp_servers.git-ctx].
	ClaudeMCP string `json:"claude_mcp"`
	CodexMCP  bool   `json:"codex_mcp"`
	Binary    string `json:"binary"`
	LastRun   string `json:"last_run,omitempty"`
}

// HookState is a `hooks` element of HooksStatus.
type HookState struct {
	Hook      string `json:"hook"`
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	Via       string `json:"via,omitempty"`
	Modified  bool   `json:"modified"`
	Chained   bool   `json:"chained"`
	Foreign   bool   `json:"foreign"`
	Shared    bool   `json:"shared"`
	// OldForm: the stub from before the hook spool; `hooks install` rewrites it.
	OldForm bool `json:"old_form"`
}

// NewHooksStatus builds HooksStatus from the hooks' status.
func NewHooksStatus(st *hooks.Status) HooksStatus {
	return HooksStatus{
		Hooks: mapSlice(st.Hooks, func(h hooks.HookState) HookState {
			return HookState{h.Hook, h.Path, h.Installed, h.Via, h.Modified, h.Chained, h.Foreign, h.Shared, h.OldForm}
		}),
		Managers: nonNil(st.Managers), Claude: st.Claude, Codex: st.Codex, Binary: st.BinaryPath, LastRun: st.LastRun,
		ClaudeMCP: MCPRegistration(st.ClaudeMCP), CodexMCP: st.CodexMCP,
	}
}

// MCPRegistration names the state of the .mcp.json registration:
// "registered", "other", "unreadable" or "not registered".
func MCPRegistration(m hooks.MCPState) string {
	switch {
	case m.Problem != "":
		return "unreadable"
	case m.Ours:
		return "registered"
	case m.Registered:
		return "other"
	}
	return "not registered"
}

// HooksInstall is `hooks install --json`.
type HooksInstall struct {
	// Initialized: install created the memory branch first.
	Initialized bool     `json:"initialized"`
	Messages    []string `json:"messages"`
	// OnPath: git-ctx is on PATH, so the hooks can run it.
	OnPath bool `json:"on_path"`
}

// HooksUninstall is `hooks uninstall --json`.
type HooksUninstall struct {
	Messages []string `json:"messages"`
}

// Doctor is `doctor --json`.
type Doctor struct {
	Findings []Finding `json:"findings"`
}

// Finding is a `findings` element of Doctor.
type Finding struct {
	Level  string `json:"level"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// NewDoctor builds Doctor from the diagnosis.
func NewDoctor(r *doctor.Report) Doctor {
	return Doctor{Findings: mapSlice(r.Findings, func(f doctor.Finding) Finding {
		return Finding{f.Level, f.Check, f.Detail, f.Fix}
	})}
}
