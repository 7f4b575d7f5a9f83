package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeMCPRegistration: the server is merged into .mcp.json beside
// the other servers and settings, once; a malformed file and a foreign
// "git-ctx" server are refused unchanged; uninstall takes out only ours,
// and removes a file that held nothing else.
func TestClaudeMCPRegistration(t *testing.T) {
	top := t.TempDir()
	path := MCPConfigPath(top)
	orig := `{"mcpServers": {"docs": {"command": "docs-server"}}, "x": [1]}`
	os.WriteFile(path, []byte(orig), 0o600)
	if _, err := InstallClaudeMCP(top, Options{}); err != nil {
		t.Fatal(err)
	}
	installed, _ := os.ReadFile(path)
	want := "{\n  \"mcpServers\": {\n    \"docs\": {\n      \"command\": \"docs-server\"\n    },\n    \"git-ctx\": {\n      \"command\": \"git\",\n      \"args\": [\n        \"ctx\",\n        \"mcp\"\n      ]\n    }\n  },\n  \"x\": [\n    1\n  ]\n}\n"
	if string(installed) != want {
		t.Fatalf(".mcp.json after install:\n%s", installed)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
	if msg, err := InstallClaudeMCP(top, Options{}); err != nil || !strings.Contains(msg, "already registered") {
		t.Fatalf("second install: %q %v", msg, err)
	}
	if st := ClaudeMCPState(top); !st.Registered || !st.Ours || st.Problem != "" {
		t.Fatalf("state %+v", st)
	}
	if _, err := UninstallClaudeMCP(top); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); strings.Contains(string(got), "git-ctx") || !strings.Contains(string(got), "docs-server") {
		t.Fatalf("after uninstall:\n%s", got)
	}

	for _, bad := range []string{`{"mcpServers": [`, `[1, 2]`, `{"mcpServers": "x"}`} {
		os.WriteFile(path, []byte(bad), 0o644)
		_, err := InstallClaudeMCP(top, Options{})
		if !errors.Is(err, ErrMalformedConfig) || strings.Contains(err.Error(), "\n") {
			t.Errorf("install over %q: %v", bad, err)
		}
		if got, _ := os.ReadFile(path); string(got) != bad {
			t.Errorf("install over %q changed it to %q", bad, got)
		}
		if st := ClaudeMCPState(top); st.Problem == "" {
			t.Errorf("state of %q has no problem", bad)
		}
	}

	// Keys are matched exactly, as Claude Code reads them: "COMMAND" is
	// not a command, so that entry is not ours either.
	for _, foreign := range []string{
		`{"mcpServers": {"git-ctx": {"COMMAND": "git", "ARGS": ["ctx", "mcp"]}}}`,
		`{"mcpServers": {"git-ctx": {"command": "something-else"}}}`,
	} {
		os.WriteFile(path, []byte(foreign), 0o644)
		if _, err := InstallClaudeMCP(top, Options{}); !errors.Is(err, ErrOtherServer) {
			t.Errorf("install over a foreign git-ctx server %s: %v", foreign, err)
		}
		if st := ClaudeMCPState(top); !st.Registered || st.Ours {
			t.Errorf("state of %s: %+v", foreign, st)
		}
	}
	if msg, _ := UninstallClaudeMCP(top); !strings.Contains(msg, "not registered") {
		t.Errorf("uninstall of a foreign git-ctx server: %q", msg)
	}
	if _, err := InstallClaudeMCP(top, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := UninstallClaudeMCP(top); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file that held only git-ctx's server was kept: %v", err)
	}
}

// TestCodexMCPRegistration: only with Global; appended after the user's
// configuration and taken out exactly, with the last repository that
// registered it.
func TestCodexMCPRegistration(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	path := filepath.Join(home, "config.toml")
	orig := "model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n"
	os.WriteFile(path, []byte(orig), 0o644)
	repoA, repoB := t.TempDir(), t.TempDir()
	if _, err := InstallCodexMCP(repoA, Options{}); !errors.Is(err, ErrShared) {
		t.Fatalf("install without Global: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != orig {
		t.Fatalf("refused install changed the file:\n%s", got)
	}
	if _, err := InstallCodexMCP(repoA, Options{Global: true}); err != nil {
		t.Fatal(err)
	}
	installed, _ := os.ReadFile(path)
	if string(installed) != orig+"\n"+codexMCPTable || !CodexMCPInstalled() {
		t.Fatalf("config after install:\n%s", installed)
	}
	if msg, err := InstallCodexMCP(repoB, Options{Global: true}); err != nil || !strings.Contains(msg, "already") {
		t.Fatalf("install from B: %q %v", msg, err)
	}
	if msg, err := UninstallCodexMCP(repoA, Options{}); err != nil || !strings.Contains(msg, "still used by 1 other repository") {
		t.Fatalf("uninstall from A while B uses it: %q %v", msg, err)
	}
	if _, err := UninstallCodexMCP(repoB, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != orig || CodexMCPInstalled() {
		t.Fatalf("config after the last uninstall:\n%q", got)
	}
}
