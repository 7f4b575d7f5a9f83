package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksStatusShowsMCP: hooks status reports the MCP server's
// registration in .mcp.json (text and --json) as it changes: not
// registered, registered by hooks install --agent claude --mcp, another
// server under git-ctx's name, and a file that is not JSON.
func TestHooksStatusShowsMCP(t *testing.T) {
	_, repo, env := newInitRepo(t)
	status := func() (string, string) {
		t.Helper()
		text := inproc.MustCtx(t, repo, env, "hooks", "status")
		var st struct {
			ClaudeMCP *string `json:"claude_mcp"`
			CodexMCP  *bool   `json:"codex_mcp"`
		}
		out := inproc.MustCtx(t, repo, env, "hooks", "status", "--json")
		if err := json.Unmarshal([]byte(out), &st); err != nil || st.ClaudeMCP == nil || st.CodexMCP == nil {
			t.Fatalf("hooks status --json: %v\n%s", err, out)
		}
		if *st.CodexMCP {
			t.Fatalf("codex_mcp true without a Codex registration: %s", out)
		}
		return text, *st.ClaudeMCP
	}
	wantLine := func(text, want string) {
		t.Helper()
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "claude mcp") && strings.Contains(l, want) {
				return
			}
		}
		t.Fatalf("hooks status has no \"claude mcp ... %s\" line:\n%s", want, text)
	}
	text, js := status()
	if js != "not registered" {
		t.Fatalf("claude_mcp before install = %q", js)
	}
	wantLine(text, "not registered")

	inproc.MustCtx(t, repo, env, "hooks", "install", "--agent", "claude", "--mcp")
	if text, js = status(); js != "registered" {
		t.Fatalf("claude_mcp after install = %q", js)
	}
	wantLine(text, "registered")

	path := filepath.Join(repo, ".mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"git-ctx": {"command": "other"}}}`), 0o644)
	if text, js = status(); js != "other" {
		t.Fatalf("claude_mcp with another server = %q", js)
	}
	wantLine(text, "another server is registered as git-ctx")

	os.WriteFile(path, []byte(`{"mcpServers": `), 0o644)
	if _, js = status(); js != "unreadable" {
		t.Fatalf("claude_mcp with a broken file = %q", js)
	}
}
