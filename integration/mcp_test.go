package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server (`git ctx mcp`) driven by the official SDK's client over
// stdio, as Claude Code or Codex start it from their configuration, and
// the SessionStart briefing whose items the next checkpoint records.

// mcpSession starts `git ctx mcp` in dir with env (the real git, which
// runs the built git-ctx) and connects the SDK's client to it.
func mcpSession(t *testing.T, dir string, env []string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	t.Cleanup(cancel)
	cmd := exec.Command(gitPath, "ctx", "mcp")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "integration", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to git ctx mcp: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v (stderr %s)", err, stderr.String())
		}
	})
	return cs
}

// mcpCall calls tool and returns its text and whether it is a tool error.
func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func mcpMust(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := mcpCall(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: tool error: %s", tool, args, text)
	}
	return text
}

// mcpTeam is A's repository holding A's records (one of a commit, a
// snapshot, a published package) and teammate B's, one of which B forged
// after signing it and pushed with plain git; A took the branch with plain
// git too, so the forged record is on A's branch and its cache marks it
// unverified.
type mcpTeam struct {
	a, b                   *syncDevice
	commit, byCommit       string
	aNote, bWhy, bForged   string
	forgedText, snapshotID string
}

func newMCPTeam(t *testing.T) *mcpTeam {
	t.Helper()
	s, rem, a := cltTeam(t, "file", "A")
	m := &mcpTeam{a: a}
	m.aNote = a.cp(t, "A: the importer streams rows instead of loading the table").Hash
	m.commit = commitFiles(t, a.dir, a.env, "importer: stream rows", map[string]string{"importer.go": "package importer\n"})
	m.byCommit = checkpoint(t, a.dir, a.env, "--from-commit", m.commit).Hash
	a.must(t, "snapshot", "create")
	pkg := filepath.Join(s.root, "notes.ctxpkg")
	a.must(t, "pkg", "build", "--name", "notes", "--version", "1.0.0", "--sign", "-o", pkg)
	a.must(t, "pkg", "publish", pkg)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	m.b = b
	b.must(t, "pull")
	b.must(t, "init")
	m.bWhy = b.cp(t, "B: chose JWT over server sessions because the gateway is stateless").Hash
	forged := b.cp(t, "B: rotate the signing key monthly")
	b.must(t, "push")
	repoID := status(t, b.dir, b.env).RepoID
	path := ctxV1CheckpointPath(repoID, forged.Hash)
	m.forgedText = "rotate the signing key never"
	body := strings.Replace(branchFile(t, b.dir, b.env, path), "rotate the signing key monthly", m.forgedText, 1)
	rewriteBranch(t, b.dir, b.env, "edit a signed record", fileEdit{path: path, content: body})
	b.git(t, "push", "-q", "origin", "ghyll/memory")
	m.bForged = forged.Hash

	a.git(t, "fetch", "-q", "origin", "ghyll/memory:ghyll/memory")
	list := a.must(t, "snapshot", "list")
	id := regexp.MustCompile(`(?m)^  ([0-9a-f]{12})  `).FindStringSubmatch(list)
	if id == nil {
		t.Fatalf("snapshot list:\n%s", list)
	}
	m.snapshotID = id[1]
	return m
}

// TestMCPServerStdio: initialize and tools/list (names, required members),
// each tool on a repository with a teammate's records, unverified ones
// hidden unless asked for and then marked, bad arguments as one-line tool
// errors, and results cut to their budget.
func TestMCPServerStdio(t *testing.T) {
	t.Parallel()
	m := newMCPTeam(t)
	a := m.a
	cs := mcpSession(t, a.dir, a.env)
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "git-ctx" {
		t.Fatalf("server info %+v", info)
	}
	mcpWantTools(t, cs)

	// A teammate's decision and why, found by search and by log.
	text := mcpMust(t, cs, "search", map[string]any{"query": "JWT"})
	if !strings.Contains(text, m.bWhy) || !strings.Contains(text, "because the gateway is stateless") || !strings.Contains(text, "device "+m.b.id(t)) {
		t.Errorf("search JWT:\n%s", text)
	}
	text = mcpMust(t, cs, "log", map[string]any{"device": m.b.id(t)})
	if !strings.Contains(text, m.bWhy) || strings.Contains(text, m.bForged) || strings.Contains(text, m.aNote) {
		t.Errorf("log of B:\n%s", text)
	}
	mcpWantUnverified(t, cs, m)

	mcpWantReads(t, cs, m)

	// checkpoint: signed as A, on A's chain, verified.
	text = mcpMust(t, cs, "checkpoint", map[string]any{"summary": "Decision: recall goes through MCP", "files": []string{"importer.go"}})
	hash := regexp.MustCompile(`Recorded checkpoint ([0-9a-f]{64})`).FindStringSubmatch(text)
	if hash == nil {
		t.Fatalf("checkpoint: %s", text)
	}
	var mine *record
	for _, r := range logJSON(t, a.dir, a.env) {
		if r.Hash == hash[1] {
			mine = &r
		}
	}
	if mine == nil || mine.Device != a.id(t) || strings.Join(mine.Tools, ",") != "mcp" {
		t.Fatalf("the checkpoint the tool recorded: %+v", mine)
	}
	if text := mcpMust(t, cs, "show", map[string]any{"hash": hash[1]}); !strings.Contains(text, "(verified: signed by device "+a.id(t)) {
		t.Errorf("the recorded checkpoint does not verify:\n%s", text)
	}

	mcpWantBadArguments(t, cs)
	text = mcpMust(t, cs, "log", map[string]any{"max_bytes": 512, "include_unverified": true})
	if len(text) > 512 || !strings.Contains(text, "[truncated") {
		t.Errorf("log within 512 bytes (%d):\n%s", len(text), text)
	}
}

// mcpWantReads: log by commit, show, snapshot_restore and package_get.
func mcpWantReads(t *testing.T, cs *mcp.ClientSession, m *mcpTeam) {
	t.Helper()
	a := m.a
	text := mcpMust(t, cs, "log", map[string]any{"commit": m.commit[:9]})
	if !strings.Contains(text, m.byCommit) || strings.Contains(text, m.aNote) {
		t.Errorf("log of commit %s:\n%s", m.commit[:9], text)
	}
	text = mcpMust(t, cs, "show", map[string]any{"hash": m.bWhy[:12]})
	if !strings.Contains(text, "checkpoint "+m.bWhy+" (verified: signed by device "+m.b.id(t)) {
		t.Errorf("show:\n%s", text)
	}
	text = mcpMust(t, cs, "snapshot_restore", map[string]any{})
	if !strings.Contains(text, "snapshot "+m.snapshotID) || !strings.Contains(text, "(verified)") || !strings.Contains(text, "task:") {
		t.Errorf("snapshot_restore:\n%s", text)
	}
	text = mcpMust(t, cs, "package_get", map[string]any{"name": "notes", "layers": []string{"session"}})
	if !strings.Contains(text, "package notes@1.0.0 (verified, signed by "+a.id(t)) || !strings.Contains(text, "## layer session") {
		t.Errorf("package_get:\n%s", text)
	}
}

// mcpWantTools: tools/list names every tool with its required members.
func mcpWantTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"search": "query", "log": "", "show": "hash", "explain": "target", "snapshot_restore": "", "package_get": "name", "checkpoint": "summary"}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		raw, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
			t.Errorf("%s: input schema %s", tool.Name, raw)
		}
		if got := strings.Join(s.Required, ","); got != want[tool.Name] {
			t.Errorf("%s: required %q, want %q", tool.Name, got, want[tool.Name])
		}
		if _, ok := s.Properties["include_unverified"]; !ok && tool.Name != "checkpoint" {
			t.Errorf("%s: no include_unverified", tool.Name)
		}
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "checkpoint,explain,log,package_get,search,show,snapshot_restore" {
		t.Errorf("tools: %s", got)
	}
}

// mcpWantUnverified: B's forged record is hidden by default and marked
// UNVERIFIED when asked for.
func mcpWantUnverified(t *testing.T, cs *mcp.ClientSession, m *mcpTeam) {
	t.Helper()
	text := mcpMust(t, cs, "search", map[string]any{"query": "signing key"})
	if strings.Contains(text, m.bForged) || strings.Contains(text, m.forgedText) {
		t.Errorf("search shows the unverified record by default:\n%s", text)
	}
	text = mcpMust(t, cs, "search", map[string]any{"query": "signing key", "include_unverified": true})
	if !strings.Contains(text, "checkpoint "+m.bForged+" UNVERIFIED") || !strings.Contains(text, m.forgedText) || !strings.Contains(text, "do not rely on them") {
		t.Errorf("search with include_unverified:\n%s", text)
	}
	text = mcpMust(t, cs, "log", map[string]any{"device": m.b.id(t), "include_unverified": true})
	if !strings.Contains(text, m.bForged+" UNVERIFIED") || !strings.Contains(text, m.bWhy+"\n") {
		t.Errorf("log of B with include_unverified:\n%s", text)
	}
	if text, isErr := mcpCall(t, cs, "show", map[string]any{"hash": m.bForged}); !isErr || !strings.Contains(text, "failed verification") {
		t.Errorf("show of the forged record without include_unverified: %s", text)
	}
	text = mcpMust(t, cs, "show", map[string]any{"hash": m.bForged, "include_unverified": true})
	if !strings.HasPrefix(text, "checkpoint "+m.bForged+" UNVERIFIED") {
		t.Errorf("show with include_unverified:\n%s", text)
	}
}

// mcpWantBadArguments: each is a tool error of one line.
func mcpWantBadArguments(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{}},
		{"search", map[string]any{"query": "x", "max_bytes": 1}},
		{"log", map[string]any{"since": "last tuesday"}},
		{"log", map[string]any{"limit": -1}},
		{"show", map[string]any{"hash": "not-hex"}},
		{"package_get", map[string]any{"name": "notes", "layers": []string{"everything"}}},
		{"checkpoint", map[string]any{"summary": "x", "extra": true}},
	} {
		text, isErr := mcpCall(t, cs, c.tool, c.args)
		if !isErr || text == "" || strings.Contains(strings.TrimRight(text, "\n"), "\n") {
			t.Errorf("%s %v: want a one-line tool error, got error=%v %q", c.tool, c.args, isErr, text)
		}
	}
}

// TestMCPSessionStartInjections: hooks install --agent claude --mcp
// registers the server in .mcp.json (keeping the other servers) and the
// SessionStart hook; the hook's briefing lists the branch's decisions and
// the records on a changed file; the session's next checkpoint, made by
// the installed Stop hook, records exactly those items in injections, and
// the one after records none. doctor checks the registration.
func TestMCPSessionStartInjections(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	mcpJSON := filepath.Join(repo, ".mcp.json")
	writeFile(t, mcpJSON, `{"mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}, "other": 1}`+"\n")
	mustCtx(t, repo, env, "init")
	onBranch := checkpoint(t, repo, env, "-m", "Decision: errors are wrapped once, at the boundary").Hash
	onFile := checkpoint(t, repo, env, "-m", "README: setup is three lines", "--file", "README.md").Hash

	out := mustCtx(t, repo, env, "hooks", "install", "--agent", "claude", "--mcp")
	if !strings.Contains(out, "MCP server git-ctx ('git ctx mcp') registered in "+mcpJSON) {
		t.Fatalf("install --agent claude --mcp: %s", out)
	}
	mcpWantRegistered(t, readFile(t, mcpJSON))
	mcpWantDoctor(t, repo, env, "OK", "registered in "+mcpJSON)

	settings := readFile(t, filepath.Join(repo, ".claude", "settings.local.json"))
	start := mcpInstalledCommand(t, settings, "SessionStart")
	top, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "README.md"), "changed in the work tree\n")
	const session = "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40" // the transcript fixture's
	in := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, session, top)
	r := execute(t, repo, env, []byte(in), "sh", "-c", start)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("the installed SessionStart hook %q: %s", start, r)
	}
	if !strings.Contains(r.stdout, onBranch[:12]) || !strings.Contains(r.stdout, onFile[:12]) || !strings.Contains(r.stdout, "files changed in your work tree") {
		t.Fatalf("briefing:\n%s", r.stdout)
	}

	// The session's next turn, recorded by the installed Stop hook.
	transcript := filepath.Join(s.root, "home", ".claude", "projects", "p", "session.jsonl")
	writeFile(t, transcript, string(bytes.ReplaceAll(fixture(t, "claude-session.jsonl"), []byte("/home/dev/proj"), []byte(jsonString(top)))))
	stop := installedStopCommand(t, settings)
	if r := execute(t, repo, env, claudeStopInput(t, transcript, top), "sh", "-c", stop); r.code != 0 {
		t.Fatalf("Stop hook: %s", r)
	}
	list := hkOldestFirst(t, repo, env)
	turn := list[len(list)-1]
	if turn.Session != session {
		t.Fatalf("the last record is not the session's turn: %+v", turn)
	}
	want := []string{"recall:" + onFile, "recall:" + onBranch}
	got := slices.Clone(turn.Injections)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the turn's injections %v, want %v", turn.Injections, want)
	}
	if v := verifyJSON(t, repo, env); !v.OK {
		t.Fatalf("verify: %+v", v)
	}
	next := checkpoint(t, repo, env, "-m", "later in the session", "--session", session)
	if len(next.Injections) != 0 {
		t.Fatalf("the injections were recorded twice: %v", next.Injections)
	}

	// A malformed .mcp.json: refused, unchanged, and doctor fails on it.
	writeFile(t, mcpJSON, `{"mcpServers": [`)
	res := gitCtx(t, repo, env, "hooks", "install", "--agent", "claude", "--mcp")
	wantCode(t, "install --mcp over a malformed .mcp.json", res, 3)
	if !strings.Contains(res.stderr, ".mcp.json is not a JSON object") || string(readFile(t, mcpJSON)) != `{"mcpServers": [` {
		t.Fatalf("install over a malformed .mcp.json: %s\n%s", res, readFile(t, mcpJSON))
	}
	mcpWantDoctor(t, repo, env, "FAIL", ".mcp.json is not a JSON object")
}

// mcpWantRegistered: git-ctx's server was merged beside the other one.
func mcpWantRegistered(t *testing.T, data []byte) {
	t.Helper()
	var v struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
		Other int `json:"other"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf(".mcp.json: %v\n%s", err, data)
	}
	ours, docs := v.MCPServers["git-ctx"], v.MCPServers["docs"]
	if ours.Command != "git" || strings.Join(ours.Args, " ") != "ctx mcp" || docs.Command != "docs-server" || v.Other != 1 {
		t.Fatalf(".mcp.json after install:\n%s", data)
	}
}

// mcpWantDoctor: doctor's "MCP server registration" line has level and
// detail containing want.
func mcpWantDoctor(t *testing.T, repo string, env []string, level, want string) {
	t.Helper()
	r := gitCtx(t, repo, env, "doctor", "--json")
	var rep struct {
		Findings []struct {
			Level  string `json:"level"`
			Check  string `json:"check"`
			Detail string `json:"detail"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r)
	}
	for _, f := range rep.Findings {
		if f.Check == "MCP server registration" {
			if f.Level != level || !strings.Contains(f.Detail, want) {
				t.Fatalf("doctor: %s %s, want %s with %q", f.Level, f.Detail, level, want)
			}
			return
		}
	}
	t.Fatalf("doctor has no MCP server registration check:\n%s", r.stdout)
}

// mcpInstalledCommand is the command of the event's hook that runs git-ctx.
func mcpInstalledCommand(t *testing.T, settings []byte, event string) string {
	t.Helper()
	var v struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &v); err != nil {
		t.Fatal(err)
	}
	for _, g := range v.Hooks[event] {
		for _, h := range g.Hooks {
			if strings.Contains(h.Command, "git-ctx") {
				return h.Command
			}
		}
	}
	t.Fatalf("no git-ctx %s hook in\n%s", event, settings)
	return ""
}
