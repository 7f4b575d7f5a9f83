package agentturn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

const fixtures = "../testdata/agentturn"

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func diffTurn(t *testing.T, got, want Turn) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("turn mismatch\n got: %s\nwant: %s", g, w)
	}
}

// --- Claude transcript builders for inline cases ---

func jline(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

type obj = map[string]any

func userPrompt(text string) string {
	return jline(obj{"type": "user", "sessionId": "s", "cwd": "/w", "isSidechain": false,
		"message": obj{"role": "user", "content": text}})
}

func toolResult(id string, isErr bool) string {
	return jline(obj{"type": "user", "sessionId": "s", "cwd": "/w",
		"message": obj{"role": "user", "content": []any{
			obj{"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": isErr}}}})
}

func assistant(id, model string, blocks ...any) string {
	return jline(obj{"type": "assistant", "sessionId": "s", "cwd": "/w",
		"message": obj{"id": id, "role": "assistant", "model": model, "content": blocks}})
}

func text(s string) obj { return obj{"type": "text", "text": s} }

func toolUse(id, name string, input obj) obj {
	if input == nil {
		input = obj{}
	}
	return obj{"type": "tool_use", "id": id, "name": name, "input": input}
}

func edit(id, path string) obj {
	return toolUse(id, "Edit", obj{"file_path": path, "old_string": "a", "new_string": "b"})
}

// --- golden fixtures ---

func TestClaudeFixtures(t *testing.T) {
	tests := []struct {
		file string
		want Turn
	}{
		{
			file: "claude-session.jsonl",
			want: Turn{
				Agent:     "claude",
				SessionID: "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40",
				Cwd:       "/home/dev/proj",
				Model:     "claude-opus-4-1-20250805",
				Summary: "Done. Summary of this turn:\n\n" +
					"- fetch_test.go covers the retry path\n- Fetch now uses the shared client\n\n" +
					"- the latency notebook reloads with retries=4\n\nclient.go was not edited: it has to be read first.",
				Files: []string{
					"/home/dev/proj/fetch_test.go",
					"/home/dev/proj/fetch.go",
					"/home/dev/proj/notebooks/latency.ipynb",
				},
				Tools: []string{"TodoWrite", "Task", "Write", "Bash", "MultiEdit", "Edit", "NotebookEdit"},
			},
		},
		{
			file: "claude-compact.jsonl",
			want: Turn{
				Agent:     "claude",
				SessionID: "9b1e7d44-20c3-4f5a-a6b8-71c2d9e0f3a5",
				Cwd:       "/home/dev/parser",
				Model:     "claude-sonnet-4-5-20250929",
				Summary:   "API Error: Request was aborted.",
				Files: []string{
					"/home/dev/parser/internal/lex/lex.go",
					"/home/dev/parser/parse.go",
				},
				Tools: []string{"Bash", "Write", "Edit"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ReadClaudeTranscript(filepath.Join(fixtures, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			diffTurn(t, got, tc.want)
			diffTurn(t, ClaudeTurn(fixture(t, tc.file)), tc.want)
		})
	}
}

func TestClaudeSessionEarlierTurn(t *testing.T) {
	// Cutting the fixture right after the first turn's final message yields
	// the first turn: the sidechain, Task and later edits are not in it.
	data := fixture(t, "claude-session.jsonl")
	i := bytes.Index(data, []byte(`"type":"system","subtype":"informational"`))
	if i < 0 {
		t.Fatal("fixture changed")
	}
	i = bytes.LastIndexByte(data[:i], '\n')
	want := Turn{
		Agent:     "claude",
		SessionID: "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40",
		Cwd:       "/home/dev/proj",
		Model:     "claude-sonnet-4-5-20250929",
		Summary:   "Fetch now retries up to 4 times with exponential backoff (100ms, 200ms, 400ms, 800ms).",
		Files:     []string{"/home/dev/proj/fetch.go"},
		Tools:     []string{"Read", "Edit"},
	}
	diffTurn(t, ClaudeTurn(data[:i+1]), want)
}

func TestClaudeTurnCases(t *testing.T) {
	tests := []struct {
		name  string
		jsonl string
		want  Turn
	}{
		{"empty", "", Turn{Agent: "claude"}},
		{"garbage", "\x00\xff not json\n{{{\n[1,2]\n\"str\"\nnull\n{\"type\":", Turn{Agent: "claude"}},
		{
			"prompt only",
			userPrompt("hello"),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w"},
		},
		{
			"no prompt in input: whole input is the turn",
			toolResult("t0", false) +
				assistant("m1", "claude-x", text("first"), edit("t1", "/w/a.go")) +
				toolResult("t1", false) +
				assistant("m2", "claude-y", text("second")),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-y", Summary: "second",
				Files: []string{"/w/a.go"}, Tools: []string{"Edit"}},
		},
		{
			"only the last prompt's turn counts",
			userPrompt("one") +
				assistant("m1", "claude-x", text("did one"), edit("t1", "/w/one.go")) +
				toolResult("t1", false) +
				userPrompt("two") +
				assistant("m2", "claude-y", text("did two")),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-y", Summary: "did two"},
		},
		{
			"crlf line endings and no trailing newline on a complete line",
			strings.ReplaceAll(userPrompt("go")+assistant("m1", "claude-x", text("done")), "\n", "\r\n") +
				strings.TrimSuffix(assistant("m2", "claude-z", toolUse("t9", "Glob", nil)), "\n"),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-z", Summary: "done", Tools: []string{"Glob"}},
		},
		{
			"partial last line is skipped",
			userPrompt("go") + assistant("m1", "claude-x", text("done")) +
				`{"type":"assistant","message":{"id":"m2","model":"claude-partial","content":[{"type":"tool_use","name":"Edit","input":{"file_path":"/w/p.go"`,
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "done"},
		},
		{
			"text split over lines of one message is joined; a new message replaces it",
			userPrompt("go") +
				assistant("m1", "claude-x", text("a1")) +
				assistant("m1", "claude-x", toolUse("t1", "Read", nil)) +
				assistant("m1", "claude-x", text("  a2  ")) +
				toolResult("t1", false) +
				assistant("m2", "claude-x", text("b1"), text("   "), text("b2")) +
				assistant("m2", "claude-x", text("b3")) +
				assistant("m3", "claude-x", toolUse("t2", "Read", nil)),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "b1\n\nb2\n\nb3", Tools: []string{"Read"}},
		},
		{
			"lines without message ids are separate messages",
			userPrompt("go") + assistant("", "claude-x", text("x")) + assistant("", "claude-x", text("y")),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "y"},
		},
		{
			"failed edits do not count, a later successful edit of the same file does",
			userPrompt("go") +
				assistant("m1", "claude-x", edit("t1", "/w/a.go"), edit("t2", "/w/b.go")) +
				toolResult("t1", true) + toolResult("t2", false) +
				assistant("m2", "claude-x", edit("t3", "/w/a.go"), edit("", "/w/noid.go"),
					toolUse("t4", "Write", obj{"file_path": "/w/b.go", "content": "x"}),
					toolUse("t5", "Read", obj{"file_path": "/w/read.go"}),
					toolUse("t6", "NotebookEdit", obj{"notebook_path": "/w/n.ipynb", "file_path": "/w/ignored"}),
					toolUse("t7", "MultiEdit", obj{"file_path": "/w/m.go", "edits": []any{}}),
					toolUse("t8", "Edit", obj{"old_string": "no path"})) +
				toolResult("t3", false),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x",
				Files: []string{"/w/b.go", "/w/a.go", "/w/noid.go", "/w/n.ipynb", "/w/m.go"},
				Tools: []string{"Edit", "Write", "Read", "NotebookEdit", "MultiEdit"}},
		},
		{
			"sidechain lines are ignored, including sidechain prompts",
			userPrompt("main") +
				assistant("m1", "claude-main", toolUse("t1", "Task", obj{"prompt": "sub"})) +
				jline(obj{"type": "user", "isSidechain": true, "sessionId": "s", "message": obj{"role": "user", "content": "sub"}}) +
				jline(obj{"type": "assistant", "isSidechain": true, "sessionId": "s", "message": obj{"id": "sx", "model": "claude-sub",
					"content": []any{text("sub text"), edit("sx1", "/w/sub.go")}}}) +
				toolResult("t1", false),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-main", Tools: []string{"Task"}},
		},
		{
			"meta, compact summary and interrupt markers are not prompts",
			userPrompt("real") +
				assistant("m1", "claude-x", text("working"), toolUse("t1", "Bash", nil)) +
				toolResult("t1", false) +
				jline(obj{"type": "user", "message": obj{"role": "user", "content": []any{text("[Request interrupted by user]")}}}) +
				jline(obj{"type": "user", "isMeta": true, "message": obj{"role": "user", "content": "<command-name>/model</command-name>"}}) +
				jline(obj{"type": "user", "isCompactSummary": true, "message": obj{"role": "user", "content": "This session is being continued"}}) +
				assistant("m2", "claude-x", toolUse("t2", "Grep", nil)),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "working", Tools: []string{"Bash", "Grep"}},
		},
		{
			"image-only prompt starts a turn; empty content does not",
			userPrompt("old") + assistant("m0", "claude-x", text("old answer"), toolUse("t0", "LS", nil)) +
				jline(obj{"type": "user", "message": obj{"role": "user", "content": []any{obj{"type": "image", "source": obj{}}}}}) +
				jline(obj{"type": "user", "message": obj{"role": "user", "content": []any{}}}) +
				assistant("m1", "claude-x", text("new answer")),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "new answer"},
		},
		{
			"synthetic model is skipped, its text is not",
			userPrompt("go") + assistant("m1", "claude-real", text("ok")) + assistant("m2", "<synthetic>", text("No response requested.")),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-real", Summary: "No response requested."},
		},
		{
			"server tool use, string assistant content, ignored line types",
			userPrompt("search") +
				jline(obj{"type": "summary", "summary": "x", "sessionId": "other"}) +
				assistant("m1", "claude-x", obj{"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": obj{"query": "go"}},
					obj{"type": "web_search_tool_result", "tool_use_id": "srv1", "content": []any{}}) +
				jline(obj{"type": "assistant", "message": obj{"id": "m2", "content": "plain string reply"}}) +
				jline(obj{"type": "system", "content": "ignored", "sessionId": "other"}),
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-x", Summary: "plain string reply", Tools: []string{"web_search"}},
		},
		{
			"wrongly typed fields are tolerated",
			userPrompt("go") +
				`{"type":"assistant","isSidechain":"no","sessionId":7,"message":{"id":"m1","model":["x"],"content":[42,"str",{"type":"tool_use","name":"Edit","id":"t1","input":"not an object"},{"type":"tool_use","name":"Write","id":"t2","input":{"file_path":5}},{"type":"text","text":"kept"},{"type":"tool_use","name":{"n":1}}]}}` + "\n" +
				`{"type":"assistant","message":{"id":"m2","content":{"type":"text","text":"object content is ignored"}}}` + "\n" +
				`{"type":"assistant","message":"not an object"}` + "\n",
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Summary: "kept", Tools: []string{"Edit", "Write"}},
		},
		{
			"invalid UTF-8 in text is replaced",
			userPrompt("go") + "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"bad \xff byte\"}]}}\n",
			Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Summary: "bad \uFFFD byte"},
		},
		{
			"session and cwd fall back to other lines of the turn",
			`{"type":"user","message":{"role":"user","content":"hi"}}` + "\n" +
				`{"type":"system","content":"s","sessionId":"from-system","cwd":"/from/system"}` + "\n" +
				`{"type":"assistant","message":{"id":"m","model":"claude-x","content":[{"type":"text","text":"yo"}]}}` + "\n",
			Turn{Agent: "claude", SessionID: "from-system", Cwd: "/from/system", Model: "claude-x", Summary: "yo"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			diffTurn(t, ClaudeTurn([]byte(tc.jsonl)), tc.want)
		})
	}
}

// --- Claude Stop hook input ---

func TestParseClaudeStop(t *testing.T) {
	tests := []struct {
		name    string
		input   []byte
		want    ClaudeStop
		wantErr error // nil: success; errAny: some error
	}{
		{
			name:  "fixture",
			input: fixture(t, "claude-stop.json"),
			want: ClaudeStop{
				SessionID:      "3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40",
				TranscriptPath: "/home/dev/.claude/projects/-home-dev-proj/3f9a6c2e-1d4b-4e8a-9c7f-5b2d8e1a6f40.jsonl",
				Cwd:            "/home/dev/proj",
				HookEventName:  "Stop",
			},
		},
		{
			name:  "stop hook active, unknown and wrongly typed fields",
			input: []byte(` {"session_id":"s","transcript_path":7,"cwd":null,"hook_event_name":"Stop","stop_hook_active":true,"extra":{"a":[1]}} ` + "\n"),
			want:  ClaudeStop{SessionID: "s", HookEventName: "Stop", StopHookActive: true},
		},
		{
			name:  "stop_hook_active of the wrong type",
			input: []byte(`{"stop_hook_active":"true"}`),
			want:  ClaudeStop{},
		},
		{name: "empty object", input: []byte(`{}`)},
		{name: "too large", input: tooLarge(), wantErr: ErrTooLarge},
		{name: "empty", input: nil, wantErr: errNotObject},
		{name: "array", input: []byte(`[{"session_id":"s"}]`), wantErr: errNotObject},
		{name: "string", input: []byte(`"x"`), wantErr: errNotObject},
		{name: "null", input: []byte(`null`), wantErr: errNotObject},
		{name: "truncated", input: []byte(`{"session_id":"s"`), wantErr: errAny},
		{name: "non-JSON whitespace", input: []byte("\v{}"), wantErr: errNotObject},
		{name: "non-JSON trailing whitespace", input: []byte("{}\v"), wantErr: errAny},
		{name: "trailing data", input: []byte(`{"session_id":"s"} {}`), wantErr: errAny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseClaudeStop(tc.input)
			checkErr(t, err, tc.wantErr)
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

var errAny = errors.New("any error")

func checkErr(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want == errAny && err == nil:
		t.Fatal("expected an error")
	case want != nil && want != errAny && !errors.Is(err, want):
		t.Fatalf("error = %v, want %v", err, want)
	}
}

// tooLarge is a valid JSON object one byte over MaxHookInput.
func tooLarge() []byte {
	b := []byte(`{"type":"agent-turn-complete","pad":"`)
	b = append(b, bytes.Repeat([]byte{'x'}, MaxHookInput-len(b)-1)...)
	return append(b, '"', '}')
}

func TestHookInputLimit(t *testing.T) {
	b := tooLarge()
	if len(b) != MaxHookInput+1 {
		t.Fatalf("len = %d", len(b))
	}
	if _, err := ParseCodexNotify(b); !errors.Is(err, ErrTooLarge) {
		t.Errorf("codex: err = %v", err)
	}
	if _, err := ParseClaudeStop(b); !errors.Is(err, ErrTooLarge) {
		t.Errorf("claude: err = %v", err)
	}
	// Exactly MaxHookInput bytes is accepted.
	b = append(b[:len(b)-3], '"', '}')
	if len(b) != MaxHookInput {
		t.Fatalf("len = %d", len(b))
	}
	if _, err := ParseCodexNotify(b); err != nil {
		t.Errorf("codex at limit: %v", err)
	}
	if _, err := ParseClaudeStop(b); err != nil {
		t.Errorf("claude at limit: %v", err)
	}
}

// --- Codex notify ---

func TestParseCodexNotify(t *testing.T) {
	tests := []struct {
		name    string
		input   []byte
		want    Turn
		wantErr error
	}{
		{
			name:  "kebab-case fixture",
			input: fixture(t, "codex-notify.json"),
			want: Turn{Agent: "codex", SessionID: "0199a213-81c0-7800-8aa1-bbab2a035a53", Cwd: "/home/dev/svc",
				Summary: "Renamed `Config.Port` to `ListenAddr` in config.go and updated the 3 callers; `go test ./...` passes."},
		},
		{
			name:  "snake_case fixture",
			input: fixture(t, "codex-notify-snake.json"),
			want: Turn{Agent: "codex", SessionID: "0199a2f0-5b11-7c42-9e0d-3f6a1c2b8d70", Cwd: "/home/dev/svc",
				Summary: "The health check dials the DB with no timeout; I added a 2s context deadline."},
		},
		{name: "other type fixture", input: fixture(t, "codex-notify-other.json"), wantErr: ErrNotATurn},
		{
			name:  "turn-id fallback, null message",
			input: []byte(`{"type":"agent-turn-complete","turn-id":"t-7","cwd":"/x","last-assistant-message":null}`),
			want:  Turn{Agent: "codex", SessionID: "t-7", Cwd: "/x"},
		},
		{
			name:  "snake turn_id fallback, empty thread-id, null kebab message falls back to snake",
			input: []byte(`{"type":"agent-turn-complete","thread-id":"","turn_id":"t-8","last-assistant-message":null,"last_assistant_message":"snake"}`),
			want:  Turn{Agent: "codex", SessionID: "t-8", Summary: "snake"},
		},
		{
			name:  "message as an object",
			input: []byte(`{"type":"agent-turn-complete","thread-id":"th","last-assistant-message":{"role":"assistant","content":" hi "}}`),
			want:  Turn{Agent: "codex", SessionID: "th", Summary: "hi"},
		},
		{
			name:  "wrongly typed fields",
			input: []byte(`{"type":"agent-turn-complete","thread-id":5,"turn-id":"t","cwd":["/x"],"input-messages":"x","last-assistant-message":3}`),
			want:  Turn{Agent: "codex", SessionID: "t"},
		},
		{name: "missing type", input: []byte(`{"thread-id":"th"}`), wantErr: ErrNotATurn},
		{name: "snake type is not the documented type", input: []byte(`{"type":"agent_turn_complete"}`), wantErr: ErrNotATurn},
		{name: "type not a string", input: []byte(`{"type":1}`), wantErr: ErrNotATurn},
		{name: "too large", input: tooLarge(), wantErr: ErrTooLarge},
		{name: "not an object", input: []byte(`["agent-turn-complete"]`), wantErr: errNotObject},
		{name: "plain text", input: []byte(`agent-turn-complete`), wantErr: errNotObject},
		{name: "invalid", input: []byte(`{"type":"agent-turn-complete"`), wantErr: errAny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCodexNotify(tc.input)
			checkErr(t, err, tc.wantErr)
			diffTurn(t, got, tc.want)
		})
	}
}

// --- bounds ---

func TestSummaryCut(t *testing.T) {
	// 'a' then two-byte runes: byte MaxSummary falls inside a rune.
	long := "a" + strings.Repeat("é", MaxSummary)
	tests := []struct {
		name, in, want string
	}{
		{"short", "  hi\n", "hi"},
		{"exact", strings.Repeat("x", MaxSummary), strings.Repeat("x", MaxSummary)},
		{"ascii over", strings.Repeat("x", MaxSummary+1), strings.Repeat("x", MaxSummary) + "…"},
		{"mid rune", long, long[:MaxSummary-1] + "…"},
		{"space at cut", strings.Repeat("x", MaxSummary-2) + "   yyy", strings.Repeat("x", MaxSummary-2) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(tc.in)
			if got != tc.want {
				t.Errorf("got %d bytes %q..., want %d bytes", len(got), got[max(0, len(got)-8):], len(tc.want))
			}
			if !utf8.ValidString(got) || len(got) > MaxSummary+len("…") {
				t.Errorf("invalid summary of %d bytes", len(got))
			}
		})
	}
	// Through both parsers.
	turn := ClaudeTurn([]byte(userPrompt("go") + assistant("m", "claude-x", text(long))))
	if turn.Summary != long[:MaxSummary-1]+"…" {
		t.Errorf("claude summary not cut: %d bytes", len(turn.Summary))
	}
	b, _ := json.Marshal(obj{"type": "agent-turn-complete", "last-assistant-message": long})
	ct, err := ParseCodexNotify(b)
	if err != nil || ct.Summary != long[:MaxSummary-1]+"…" {
		t.Errorf("codex summary not cut: %d bytes, %v", len(ct.Summary), err)
	}
}

func TestFilesAndToolsCapped(t *testing.T) {
	var blocks []any
	var wantFiles, wantTools []string
	for i := range MaxFiles + 50 {
		p := fmt.Sprintf("/w/f%03d.go", i)
		blocks = append(blocks, edit(fmt.Sprintf("e%d", i), p), edit(fmt.Sprintf("d%d", i), p))
		if i < MaxFiles {
			wantFiles = append(wantFiles, p)
		}
	}
	wantTools = append(wantTools, "Edit")
	for i := range MaxTools + 30 {
		name := fmt.Sprintf("mcp__srv__tool%02d", i)
		blocks = append(blocks, toolUse(fmt.Sprintf("x%d", i), name, nil), toolUse(fmt.Sprintf("y%d", i), name, nil))
		if len(wantTools) < MaxTools {
			wantTools = append(wantTools, name)
		}
	}
	turn := ClaudeTurn([]byte(userPrompt("go") + assistant("m", "claude-x", blocks...)))
	if !reflect.DeepEqual(turn.Files, wantFiles) {
		t.Errorf("files: got %d, want %d (first-seen order, capped)", len(turn.Files), len(wantFiles))
	}
	if !reflect.DeepEqual(turn.Tools, wantTools) {
		t.Errorf("tools: got %d %v, want %d", len(turn.Tools), turn.Tools, len(wantTools))
	}
}

// --- tail reading ---

func TestReadTail(t *testing.T) {
	const data = "aaaa\nbbbb\ncccc\n"
	tests := []struct {
		limit int64
		want  string
	}{
		{100, data},
		{int64(len(data)), data},
		{10, "bbbb\ncccc\n"}, // window starts exactly at a line start: kept
		{11, "bbbb\ncccc\n"}, // window starts at the newline before it
		{9, "cccc\n"},        // window starts mid-line: partial line dropped
		{5, "cccc\n"},
		{4, ""}, // no newline inside the window
		{0, ""},
	}
	for _, tc := range tests {
		got, err := readTail(strings.NewReader(data), int64(len(data)), tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("limit %d: got %q, want %q", tc.limit, got, tc.want)
		}
	}
	// The file shrank after Stat: whatever is there is used.
	got, err := readTail(strings.NewReader("xx\nyy\n"), 100, 50)
	if err != nil || string(got) != "" {
		t.Errorf("shrunk file: %q, %v", got, err)
	}
}

// bigTranscript writes a transcript larger than MaxTranscript: an early
// turn, filler, a line straddling the start of the tail window whose suffix
// is itself a valid assistant line (which must not be parsed, as the window
// starts inside the line), filler, then the final turn.
func bigTranscript(t *testing.T, finalPrompt bool) (string, []byte) {
	t.Helper()
	filler := assistant("mf", "claude-filler", toolUse("tf", "Read", obj{"file_path": "/w/big.go"}))
	filler = strings.Replace(filler, `"input":{`, `"input":{"pad":"`+strings.Repeat("z", 64<<10)+`",`, 1)

	var head bytes.Buffer
	head.WriteString(userPrompt("early prompt"))
	head.WriteString(assistant("m0", "claude-early", text("early"), edit("t0", "/w/early.go")))
	for range 8 {
		head.WriteString(filler)
	}
	head.WriteString("#### garbage prefix of the straddling line ")
	fake := strings.TrimSuffix(assistant("mx", "claude-fake", toolUse("tx", "Fake", nil)), "\n")

	var tail bytes.Buffer
	if finalPrompt {
		tail.WriteString(userPrompt("final prompt"))
	}
	tail.WriteString(assistant("m1", "claude-final", edit("t1", "/w/final.go")))
	tail.WriteString(toolResult("t1", false))
	tail.WriteString(assistant("m2", "claude-final", text("final answer")))

	// The window is the last MaxTranscript bytes: fake, "\n", filler lines,
	// a garbage line sized to make the total exact, then the tail.
	var win bytes.Buffer
	win.WriteString(fake)
	win.WriteByte('\n')
	for win.Len()+len(filler)+tail.Len()+1024 < MaxTranscript {
		win.WriteString(filler)
	}
	win.WriteString(strings.Repeat("#", MaxTranscript-win.Len()-tail.Len()-1))
	win.WriteByte('\n')
	win.Write(tail.Bytes())
	if win.Len() != MaxTranscript {
		t.Fatalf("window is %d bytes", win.Len())
	}

	data := append(head.Bytes(), win.Bytes()...)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestReadClaudeTranscriptLarge(t *testing.T) {
	for _, finalPrompt := range []bool{true, false} {
		t.Run(fmt.Sprintf("finalPrompt=%v", finalPrompt), func(t *testing.T) {
			path, data := bigTranscript(t, finalPrompt)
			want := Turn{Agent: "claude", SessionID: "s", Cwd: "/w", Model: "claude-final",
				Summary: "final answer", Files: []string{"/w/final.go"}, Tools: []string{"Edit"}}
			if !finalPrompt {
				// No prompt in the tail window: the whole window (after the
				// dropped partial line) is the turn, so filler Reads count
				// but the early turn and the fake object do not.
				want.Tools = []string{"Read", "Edit"}
			}
			got, err := ReadClaudeTranscript(path)
			if err != nil {
				t.Fatal(err)
			}
			diffTurn(t, got, want)
			// ClaudeTurn bounds oversized input the same way.
			diffTurn(t, ClaudeTurn(data), want)
		})
	}
}

func TestReadClaudeTranscriptErrors(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"", filepath.Join(dir, "missing.jsonl"), dir} {
		if _, err := ReadClaudeTranscript(p); err == nil {
			t.Errorf("%q: expected an error", p)
		}
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadClaudeTranscript(empty)
	if err != nil {
		t.Fatal(err)
	}
	diffTurn(t, got, Turn{Agent: "claude"})
}

// --- fuzzing ---

func checkTurnInvariants(t *testing.T, turn Turn, agent string, validInput bool) {
	t.Helper()
	if turn.Agent != agent {
		t.Fatalf("agent %q", turn.Agent)
	}
	if len(turn.Files) > MaxFiles || len(turn.Tools) > MaxTools {
		t.Fatalf("%d files, %d tools", len(turn.Files), len(turn.Tools))
	}
	if len(turn.Summary) > MaxSummary+len("…") {
		t.Fatalf("summary of %d bytes", len(turn.Summary))
	}
	if validInput && !utf8.ValidString(turn.Summary) {
		t.Fatalf("invalid UTF-8 summary %q", turn.Summary)
	}
	if turn.Summary != strings.TrimSpace(turn.Summary) {
		t.Fatalf("untrimmed summary %q", turn.Summary)
	}
	for _, list := range [][]string{turn.Files, turn.Tools} {
		if list != nil && len(list) == 0 {
			t.Fatal("empty non-nil list")
		}
		seen := map[string]bool{}
		for _, s := range list {
			if s == "" || seen[s] {
				t.Fatalf("empty or duplicate entry %q in %q", s, list)
			}
			seen[s] = true
		}
	}
}

func FuzzClaudeTurn(f *testing.F) {
	// Whole fixtures make poor seeds (the coverage-guided mutator and
	// minimizer crawl on tens of kilobytes), so seed with their lines and a
	// few small turns instead.
	for _, name := range []string{"claude-session.jsonl", "claude-compact.jsonl"} {
		for line := range bytes.Lines(fixture(f, name)) {
			if len(line) <= 2048 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(userPrompt("go") + assistant("m", "claude-x", text("ok"), edit("t", "/a"))))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"tool_use_id":"t"}]}}`))
	f.Add([]byte(userPrompt("fix it") +
		assistant("m1", "claude-x", text("looking"), edit("t1", "/w/a.go"), toolUse("t2", "Write", obj{"file_path": "/w/b.go"})) +
		toolResult("t1", true) + toolResult("t2", false) +
		jline(obj{"type": "assistant", "isSidechain": true, "message": obj{"content": []any{edit("s1", "/w/s.go")}}}) +
		jline(obj{"type": "user", "isMeta": true, "message": obj{"content": "meta"}}) +
		assistant("m2", "<synthetic>", text("done"), toolUse("t3", "NotebookEdit", obj{"notebook_path": "/w/n.ipynb"}))))
	f.Add([]byte("\xff\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		turn := ClaudeTurn(data)
		checkTurnInvariants(t, turn, "claude", utf8.Valid(data))
	})
}

func FuzzParseClaudeStop(f *testing.F) {
	f.Add(fixture(f, "claude-stop.json"))
	f.Add([]byte(`{"session_id":1,"stop_hook_active":"x"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseClaudeStop(data)
		if err != nil && s != (ClaudeStop{}) {
			t.Fatalf("non-zero result with error: %+v", s)
		}
		if err == nil && !json.Valid(data) {
			t.Fatal("accepted invalid JSON")
		}
	})
}

func FuzzParseCodexNotify(f *testing.F) {
	for _, name := range []string{"codex-notify.json", "codex-notify-snake.json", "codex-notify-other.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"type":"agent-turn-complete","last-assistant-message":{"content":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		turn, err := ParseCodexNotify(data)
		if err != nil {
			if !reflect.DeepEqual(turn, Turn{}) {
				t.Fatalf("non-zero result with error: %+v", turn)
			}
			return
		}
		checkTurnInvariants(t, turn, "codex", true)
		if turn.Model != "" || turn.Files != nil || turn.Tools != nil {
			t.Fatalf("codex turn has model/files/tools: %+v", turn)
		}
	})
}
