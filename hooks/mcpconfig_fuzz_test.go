package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzInstallClaudeMCP: .mcp.json is the project's file, written by hand
// or by other tools. Whatever it holds, registering the server either
// refuses and leaves the file byte for byte as it was, or writes valid JSON
// whose mcpServers holds git-ctx's entry and every other server it held.
func FuzzInstallClaudeMCP(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"mcpServers":{}}`, `{"mcpServers":{"other":{"command":"x"}},"z":1}`,
		`{"mcpServers":{"git-ctx":{"command":"git","args":["ctx","mcp"]}}}`,
		`{"mcpServers":{"git-ctx":{"command":"rm"}}}`, `[]`, `{"mcpServers":[]}`, `{"mCpserverS":[]}`, `{"mcpServers":{"git-ctx":{"COMMAND":"git","args":["ctx","mcp"]}}}`, `{"a":1,"a":2}`, "{\"mcpServers\":{\"\xff\":{}}}", `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		path := MCPConfigPath(dir)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := InstallClaudeMCP(dir, Options{})
		got, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatalf("after install: %v", rerr)
		}
		if err != nil {
			if !bytes.Equal(got, content) {
				t.Fatalf("refused (%v) but the file changed:\n%q\nto\n%q", err, content, got)
			}
			return
		}
		// Keys compare exactly, as an agent reads them; encoding/json
		// would fold "mCpserverS" into mcpServers.
		out, err := mcpServersOf(got)
		if err != nil || !json.Valid(got) || !isOurs(out[MCPServerName]) {
			t.Fatalf("registered into %q, wrote %q", content, got)
		}
		if in, err := mcpServersOf(content); err == nil {
			for name := range in {
				if _, ok := out[name]; !ok {
					t.Fatalf("server %q of %q lost: %q", name, content, got)
				}
			}
		}
	})
}

// mcpServersOf returns the exact "mcpServers" member of a .mcp.json.
func mcpServersOf(data []byte) (map[string]json.RawMessage, error) {
	root, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	servers, err := parseObject(root.vals["mcpServers"])
	if err != nil {
		return nil, err
	}
	return servers.vals, nil
}
