package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPCommand: `git ctx mcp` answers JSON-RPC on standard input with
// JSON-RPC on standard output and nothing else there (notices go to
// standard error), answering every request read before its input ended;
// --mcp needs an agent.
func TestMCPCommand(t *testing.T) {
	_, repo, env := newInitRepo(t)
	inproc.MustCtx(t, repo, env, "checkpoint", "-m", "Decision: answer over stdio")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"stdio"}}}`,
	}, "\n") + "\n"
	r := execute(t, repo, env, []byte(in), "git", "ctx", "mcp")
	if r.Code != 0 || strings.Contains(r.Stderr, "error") {
		t.Fatalf("git ctx mcp: %s", r)
	}
	ids := map[float64]string{}
	for _, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      float64         `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("a line of standard output is not JSON-RPC: %q (%v)", line, err)
		}
		ids[msg.ID] = string(msg.Result)
	}
	if !strings.Contains(ids[1], `"name":"git-ctx"`) || !strings.Contains(ids[2], "Decision: answer over stdio") {
		t.Fatalf("responses: %v", ids)
	}

	res := execute(t, repo, env, nil, "git", "ctx", "hooks", "install", "--mcp")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--mcp registers the MCP server with an agent") {
		t.Fatalf("hooks install --mcp without --agent: %s", res)
	}
}
