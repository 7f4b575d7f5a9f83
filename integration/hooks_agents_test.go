package integration

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/agentturn"
)

// fixture reads a file of testdata/agentturn.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return readFile(t, filepath.Join(root, "testdata", "agentturn", name))
}

// jsonKeys returns the member names of a JSON object, in order.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v %q", err, data)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// compactJSON is data without insignificant white space.
func compactJSON(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatalf("compact %q: %v", data, err)
	}
	return b.String()
}

// jsonString is s as the inside of a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// claudeSettings is a project's settings file as a user wrote it: other
// settings, another Stop hook, and formatting of its own.
const claudeSettings = `{
    "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
    "env": {"GOFLAGS": "-mod=mod"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}]
    },
    "model": "opus"
}
`

// TestHooksClaude: --agent claude merges a Stop hook into the project's
// settings, the hook records the turn of the transcript, and uninstall
// restores the settings file byte for byte.
func TestHooksClaude(t *testing.T) {
	t.Parallel()
	t.Run("merge-record-restore", tstClaudeMergeRecordRestore)
	t.Run("created-then-deleted", tstClaudeCreatedThenDeleted)
}

// tstClaudeMergeRecordRestore: install merges the Stop hook into the
// settings, the hook records each turn of the transcript, and uninstall
// restores the settings (or, edited since, takes out only git-ctx's hook).
func tstClaudeMergeRecordRestore(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.local.json")
	writeFile(t, settings, claudeSettings)

	out := mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	if !strings.Contains(out, "claude: Stop hook added to "+settings) {
		t.Fatalf("install --agent claude output: %q", out)
	}
	installed := readFile(t, settings)
	checkMergedSettings(t, installed)
	st := hkHooksStatus(t, repo, env)
	if !st.Claude || st.Codex {
		t.Fatalf("hooks status after --agent claude: claude %v codex %v", st.Claude, st.Codex)
	}
	hkWantHook(t, "--agent claude only", st, "post-commit", false, "", false, false, false)
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "claude", "installed")

	// A second install adds nothing.
	mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	if !bytes.Equal(readFile(t, settings), installed) {
		t.Fatalf("a second install changed the settings:\n%s", readFile(t, settings))
	}

	tstClaudeRecordTurns(t, s, repo, env, installed)
	tstClaudeUninstall(t, repo, env, settings)
}

// tstClaudeRecordTurns: the installed Stop hook records the last turn of
// a session's transcript, then the turn appended to it.
func tstClaudeRecordTurns(t *testing.T, s *sandbox, repo string, env []string, installed []byte) {
	t.Helper()
	// The transcript of a session in this repository.
	top, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(s.root, "home", ".claude", "projects", "p", "session.jsonl")
	data := bytes.ReplaceAll(fixture(t, "claude-session.jsonl"), []byte("/home/dev/proj"), []byte(jsonString(top)))
	writeFile(t, transcript, string(data))
	stop := claudeStopInput(t, transcript, top)

	command := installedStopCommand(t, installed)
	want := agentturn.ClaudeTurn(data)
	if want.SessionID == "" || want.Model == "" || want.Summary == "" || len(want.Files) == 0 || len(want.Tools) == 0 {
		t.Fatalf("the fixture's last turn is too thin to test with: %+v", want)
	}
	r := execute(t, repo, env, stop, "sh", "-c", command)
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("the installed Stop hook %q: %s", command, r)
	}
	list := hkOldestFirst(t, repo, env)
	if len(list) != 1 {
		t.Fatalf("%d checkpoints after one Stop, want 1", len(list))
	}
	wantClaudeRecord(t, list[0], want, top, 1)
	if list[0].Session != "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40" {
		t.Fatalf("session %q, want the Stop input's session id", list[0].Session)
	}

	// The next turn of the same session.
	next := string(data) + "\n" +
		`{"type":"user","isSidechain":false,"cwd":"` + jsonString(top) + `","sessionId":"3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40","message":{"role":"user","content":"Add a changelog entry"},"uuid":"u-next"}` + "\n" +
		`{"type":"assistant","isSidechain":false,"cwd":"` + jsonString(top) + `","sessionId":"3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40","message":{"id":"msg_next","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_next","name":"Write","input":{"file_path":"` + jsonString(filepath.Join(top, "CHANGELOG.md")) + `"}}]},"uuid":"a-next1"}` + "\n" +
		`{"type":"user","isSidechain":false,"cwd":"` + jsonString(top) + `","sessionId":"3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_next","content":"ok"}]},"uuid":"u-next2"}` + "\n" +
		`{"type":"assistant","isSidechain":false,"cwd":"` + jsonString(top) + `","sessionId":"3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40","message":{"id":"msg_next2","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Added the changelog entry."}]},"uuid":"a-next2"}` + "\n"
	writeFile(t, transcript, next)
	want2 := agentturn.ClaudeTurn([]byte(next))
	if want2.Summary != "Added the changelog entry." {
		t.Fatalf("the appended turn parses as %+v", want2)
	}
	r = execute(t, repo, env, stop, "sh", "-c", command)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("the second Stop: %s", r)
	}
	list = hkOldestFirst(t, repo, env)
	if len(list) != 2 {
		t.Fatalf("%d checkpoints after two Stops, want 2", len(list))
	}
	wantClaudeRecord(t, list[1], want2, top, 2)
	if strings.Join(list[1].Files, ",") != "CHANGELOG.md" || strings.Join(list[1].Tools, ",") != "Write" {
		t.Fatalf("second turn: files %q tools %q", list[1].Files, list[1].Tools)
	}
}

// tstClaudeUninstall: uninstall restores the settings file byte for byte;
// edited since install, uninstall takes out only git-ctx's hook.
func tstClaudeUninstall(t *testing.T, repo string, env []string, settings string) {
	t.Helper()
	// Uninstall: the settings file is back byte for byte.
	out := mustCtx(t, repo, env, "hooks", "uninstall", "--agent", "claude")
	if got := readFile(t, settings); string(got) != claudeSettings {
		t.Fatalf("uninstall did not restore the settings (%s):\n%s", out, got)
	}
	if hkHooksStatus(t, repo, env).Claude {
		t.Fatal("hooks status says claude after uninstall")
	}

	// Edited since install: uninstall takes out only git-ctx's hook.
	mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	edited := strings.Replace(string(readFile(t, settings)), "{", "{\n  \"includeCoAuthoredBy\": false,", 1)
	writeFile(t, settings, edited)
	mustCtx(t, repo, env, "hooks", "uninstall", "--agent", "claude")
	got := readFile(t, settings)
	if bytes.Contains(got, []byte("git-ctx")) || !bytes.Contains(got, []byte(`"includeCoAuthoredBy": false`)) ||
		!bytes.Contains(got, []byte("notify-send 'Claude is done'")) || !json.Valid(got) {
		t.Fatalf("uninstall after a user edit:\n%s", got)
	}
	if keys := strings.Join(jsonKeys(t, got), ","); keys != "includeCoAuthoredBy,permissions,env,hooks,model" {
		t.Fatalf("keys after uninstall of an edited file: %s", keys)
	}
}

// tstClaudeCreatedThenDeleted: a settings file install created goes with
// uninstall.
func tstClaudeCreatedThenDeleted(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.local.json")
	mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	data := readFile(t, settings)
	var v struct {
		Hooks struct {
			Stop []struct {
				Hooks []struct{ Type, Command string } `json:"hooks"`
			} `json:"Stop"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &v); err != nil || len(v.Hooks.Stop) != 1 || len(v.Hooks.Stop[0].Hooks) != 1 ||
		v.Hooks.Stop[0].Hooks[0].Command != "git-ctx hook claude-stop" || v.Hooks.Stop[0].Hooks[0].Type != "command" {
		t.Fatalf("settings created by install: %v\n%s", err, data)
	}
	mustCtx(t, repo, env, "hooks", "uninstall")
	if hkExists(settings) {
		t.Fatalf("uninstall kept the settings file install created:\n%s", readFile(t, settings))
	}
	if got := gitOut(t, repo, env, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("work tree after install and uninstall:\n%s", got)
	}
}

// checkMergedSettings: every setting of claudeSettings is kept, in order,
// and git-ctx's Stop hook comes after the existing one.
func checkMergedSettings(t *testing.T, installed []byte) {
	t.Helper()
	var orig, got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(claudeSettings), &orig); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(installed, &got); err != nil {
		t.Fatalf("settings after install are not JSON: %v\n%s", err, installed)
	}
	if k := strings.Join(jsonKeys(t, installed), ","); k != "permissions,env,hooks,model" {
		t.Fatalf("top-level keys after install: %s", k)
	}
	for _, k := range []string{"permissions", "env", "model"} {
		if compactJSON(t, got[k]) != compactJSON(t, orig[k]) {
			t.Fatalf("setting %s changed: %s → %s", k, orig[k], got[k])
		}
	}
	if k := strings.Join(jsonKeys(t, got["hooks"]), ","); k != "PreToolUse,Stop,SessionStart" {
		t.Fatalf("hooks keys after install: %s", k)
	}
	var origHooks, gotHooks map[string]json.RawMessage
	json.Unmarshal(orig["hooks"], &origHooks)
	json.Unmarshal(got["hooks"], &gotHooks)
	if compactJSON(t, gotHooks["PreToolUse"]) != compactJSON(t, origHooks["PreToolUse"]) {
		t.Fatalf("PreToolUse changed: %s", gotHooks["PreToolUse"])
	}
	var origStop, gotStop []json.RawMessage
	json.Unmarshal(origHooks["Stop"], &origStop)
	json.Unmarshal(gotHooks["Stop"], &gotStop)
	if len(gotStop) != 2 || compactJSON(t, gotStop[0]) != compactJSON(t, origStop[0]) {
		t.Fatalf("Stop hooks after install: %s", gotHooks["Stop"])
	}
	var ours struct {
		Hooks []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(gotStop[1], &ours); err != nil || len(ours.Hooks) != 1 ||
		ours.Hooks[0].Type != "command" || ours.Hooks[0].Command != "git-ctx hook claude-stop" {
		t.Fatalf("git-ctx's Stop hook: %s", gotStop[1])
	}
	if c := compactJSON(t, gotHooks["SessionStart"]); c != `[{"hooks":[{"type":"command","command":"git-ctx hook session-start","timeout":15}]}]` {
		t.Fatalf("git-ctx's SessionStart hook: %s", c)
	}
}

// installedStopCommand is the command of the Stop hook that runs git-ctx.
func installedStopCommand(t *testing.T, settings []byte) string {
	t.Helper()
	var v struct {
		Hooks struct {
			Stop []struct {
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"Stop"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &v); err != nil {
		t.Fatal(err)
	}
	for _, g := range v.Hooks.Stop {
		for _, h := range g.Hooks {
			if strings.Contains(h.Command, "git-ctx") {
				return h.Command
			}
		}
	}
	t.Fatalf("no git-ctx Stop hook in\n%s", settings)
	return ""
}

// claudeStopInput is the fixture's Stop hook input pointing at transcript,
// run in cwd.
func claudeStopInput(t *testing.T, transcript, cwd string) []byte {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(fixture(t, "claude-stop.json"), &in); err != nil {
		t.Fatal(err)
	}
	in["transcript_path"], in["cwd"] = transcript, cwd
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantClaudeRecord compares a checkpoint with the turn agentturn parses:
// files relative to the repository root.
func wantClaudeRecord(t *testing.T, r record, want agentturn.Turn, top string, turn int) {
	t.Helper()
	var files []string
	for _, f := range want.Files {
		if rel, ok := strings.CutPrefix(f, top+"/"); ok {
			files = append(files, rel)
		} else {
			files = append(files, f)
		}
	}
	if r.Session != want.SessionID || r.Model != want.Model || r.Summary != want.Summary ||
		strings.Join(r.Files, "\x00") != strings.Join(files, "\x00") ||
		strings.Join(r.Tools, "\x00") != strings.Join(want.Tools, "\x00") || r.Turn != turn {
		t.Fatalf("Claude checkpoint:\n session %q model %q turn %d\n files %q\n tools %q\n summary %q\nwant:\n session %q model %q turn %d\n files %q\n tools %q\n summary %q",
			r.Session, r.Model, r.Turn, r.Files, r.Tools, r.Summary,
			want.SessionID, want.Model, turn, files, want.Tools, want.Summary)
	}
	for _, f := range r.Files {
		if filepath.IsAbs(f) {
			t.Fatalf("absolute path %q in a checkpoint", f)
		}
	}
}

// codexTOML is a Codex configuration with top-level keys and tables.
const codexTOML = `# Codex configuration
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[tui]
notifications = true
`

var tomlTableRE = regexp.MustCompile(`(?m)^[ \t]*\[`)

// TestHooksCodex: --agent codex registers git-ctx as Codex's notify program,
// refuses to replace another without --force, restores the configuration
// byte for byte, and the notify program records agent turns.
func TestHooksCodex(t *testing.T) {
	t.Parallel()
	t.Run("config-kept-and-restored", tstCodexConfigKept)
	t.Run("other-notify", tstCodexOtherNotify)
	// Codex's configuration is per user, not per repository: uninstall in a
	// repository that installed nothing must not lose the notify program
	// that install --force replaced from another repository.
	t.Run("uninstall-elsewhere", tstCodexUninstallElsewhere)
	t.Run("no-config", tstCodexNoConfig)
	t.Run("record", tstCodexRecord)
}

// tstCodexConfigKept: install adds only the notify line, before the first
// table; uninstall restores config.toml byte for byte.
func tstCodexConfigKept(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	cfg := hkCodexConfig(env)
	writeFile(t, cfg, codexTOML)
	if hkHooksStatus(t, repo, env).Codex {
		t.Fatal("codex reported installed before install")
	}
	mustCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global")
	got := string(readFile(t, cfg))
	i := strings.Index(got, tstCodexNotifyLine+"\n")
	if i < 0 || strings.Count(got, "notify =") != 1 {
		t.Fatalf("config.toml after install:\n%s", got)
	}
	if first := tomlTableRE.FindStringIndex(got); first == nil || i > first[0] {
		t.Fatalf("notify is not before the first table:\n%s", got)
	}
	if got[:i]+got[i+len(tstCodexNotifyLine)+1:] != codexTOML {
		t.Fatalf("install changed more than the notify line:\n%s", got)
	}
	st := hkHooksStatus(t, repo, env)
	if !st.Codex || st.Claude {
		t.Fatalf("hooks status after --agent codex: codex %v claude %v", st.Codex, st.Claude)
	}
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "codex", "installed")
	mustCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global")
	if string(readFile(t, cfg)) != got {
		t.Fatal("a second install changed config.toml")
	}
	mustCtx(t, repo, env, "hooks", "uninstall", "--agent", "codex")
	if b := string(readFile(t, cfg)); b != codexTOML {
		t.Fatalf("uninstall did not restore config.toml:\n%s", b)
	}
	if hkHooksStatus(t, repo, env).Codex {
		t.Fatal("codex reported installed after uninstall")
	}
}

// tstCodexOtherNotify: another notify program is replaced only with --force,
// and comes back on uninstall.
func tstCodexOtherNotify(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	cfg := hkCodexConfig(env)
	orig := "notify = [\"notify-send\", \"Codex\"]\n" + codexTOML
	writeFile(t, cfg, orig)
	r := gitCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global")
	wantCode(t, "install over another notify", r, 7)
	if !strings.Contains(r.stderr, "--force") {
		t.Fatalf("install over another notify should mention --force: %q", r.stderr)
	}
	if string(readFile(t, cfg)) != orig {
		t.Fatal("install changed config.toml without --force")
	}
	if hkHooksStatus(t, repo, env).Codex {
		t.Fatal("codex reported installed with another notify")
	}
	mustCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global", "--force")
	tstWantFileText(t, cfg, tstCodexNotifyLine+"\n"+codexTOML, "install --force")
	mustCtx(t, repo, env, "hooks", "uninstall", "--agent", "codex")
	tstWantFileText(t, cfg, orig, "uninstall did not restore the other notify")
}

// tstCodexUninstallElsewhere: uninstall in a repository that installed
// nothing does not lose the notify program install --force replaced from
// another.
func tstCodexUninstallElsewhere(t *testing.T) {
	t.Parallel()
	s, env := newHookSandbox(t)
	a := newRepo(t, s, "a")
	b := newRepo(t, s, "b")
	cfg := hkCodexConfig(env)
	orig := "notify = [\"notify-send\", \"Codex\"]\n" + codexTOML
	writeFile(t, cfg, orig)
	mustCtx(t, a, env, "hooks", "install", "--agent", "codex", "--global", "--force")
	mustCtx(t, b, env, "hooks", "uninstall")
	if got := string(readFile(t, cfg)); got != orig && got != tstCodexNotifyLine+"\n"+codexTOML {
		t.Errorf("uninstall in a repository that installed nothing left config.toml neither as it was nor restored:\n%s", got)
	}
	mustCtx(t, a, env, "hooks", "uninstall")
	tstWantFileText(t, cfg, orig, "after uninstall in both repositories the user's notify is lost")
}

// tstCodexNoConfig: a config.toml install created goes with uninstall.
func tstCodexNoConfig(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	cfg := hkCodexConfig(env)
	mustCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global")
	if got := string(readFile(t, cfg)); got != tstCodexNotifyLine+"\n" {
		t.Fatalf("config.toml created by install: %q", got)
	}
	mustCtx(t, repo, env, "hooks", "uninstall")
	if hkExists(cfg) {
		t.Fatalf("uninstall kept the config.toml install created: %q", readFile(t, cfg))
	}
}

// tstCodexRecord: the configured notify program records agent turns (and
// nothing for other notifications).
func tstCodexRecord(t *testing.T) {
	t.Parallel()
	s, env, repo := cltHookRepo(t)
	mustCtx(t, repo, env, "hooks", "install", "--agent", "codex", "--global")
	// The program Codex runs, as configured.
	line := regexp.MustCompile(`(?m)^notify = \[(.*)\]$`).FindStringSubmatch(string(readFile(t, hkCodexConfig(env))))
	if line == nil {
		t.Fatal("no notify in config.toml")
	}
	var argv []string
	if err := json.Unmarshal([]byte("["+line[1]+"]"), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("notify %q: %v", line[1], err)
	}
	elsewhere := filepath.Join(s.root, "home") // not a repository: the payload's cwd counts
	notify := func(name string) result {
		t.Helper()
		var p map[string]any
		if err := json.Unmarshal(fixture(t, name), &p); err != nil {
			t.Fatal(err)
		}
		p["cwd"] = repo
		b, _ := json.Marshal(p)
		return execute(t, elsewhere, env, nil, append(append([]string(nil), argv...), string(b))...)
	}

	r := notify("codex-notify.json")
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("codex notify: %s", r)
	}
	r = notify("codex-notify-other.json")
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("codex notify of another type: %s", r)
	}
	if n := len(logJSON(t, repo, env)); n != 1 {
		t.Fatalf("%d checkpoints after a turn and a non-turn notification, want 1", n)
	}
	r = notify("codex-notify-snake.json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("codex notify (snake_case): %s", r)
	}
	list := hkOldestFirst(t, repo, env)
	if len(list) != 2 {
		t.Fatalf("%d checkpoints after two turns, want 2", len(list))
	}
	wants := []struct{ session, summary string }{
		{"0199a213-81c0-7800-8aa1-bbab2a035a53", "Renamed `Config.Port` to `ListenAddr` in config.go and updated the 3 callers; `go test ./...` passes."},
		{"0199a2f0-5b11-7c42-9e0d-3f6a1c2b8d70", "The health check dials the DB with no timeout; I added a 2s context deadline."},
	}
	for i, w := range wants {
		r := list[i]
		if r.Session != w.session || r.Summary != w.summary || r.Turn != 1 || len(r.Files) != 0 ||
			strings.Join(r.Tools, ",") != "codex" || r.Model != "" {
			t.Fatalf("codex checkpoint %d: session %q turn %d summary %q files %q tools %q model %q; want session %q summary %q",
				i, r.Session, r.Turn, r.Summary, r.Files, r.Tools, r.Model, w.session, w.summary)
		}
	}
}
