package agentturn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ClaudeStop is the Stop hook's stdin.
type ClaudeStop struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// ParseClaudeStop decodes the hook input (refusing more than MaxHookInput
// bytes and non-objects). Unknown members are ignored, and so is a known
// member whose value has an unexpected JSON type.
func ParseClaudeStop(data []byte) (ClaudeStop, error) {
	m, err := decodeObject(data)
	if err != nil {
		return ClaudeStop{}, err
	}
	var s ClaudeStop
	s.SessionID = rawString(m["session_id"])
	s.TranscriptPath = rawString(m["transcript_path"])
	s.Cwd = rawString(m["cwd"])
	s.HookEventName = rawString(m["hook_event_name"])
	if raw := m["stop_hook_active"]; len(raw) > 0 {
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			s.StopHookActive = b
		}
	}
	return s, nil
}

// ReadClaudeTranscript reads at most the last MaxTranscript bytes of the
// transcript file at path (skip a partial first line when starting
// mid-file) and returns the last turn.
//
// Only regular files are read. A transcript without any turn yields a Turn
// with only Agent set and a nil error.
func ReadClaudeTranscript(path string) (Turn, error) {
	if path == "" {
		return Turn{}, errors.New("agentturn: empty transcript path")
	}
	f, err := os.Open(path)
	if err != nil {
		return Turn{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Turn{}, err
	}
	if !fi.Mode().IsRegular() {
		return Turn{}, fmt.Errorf("agentturn: transcript %s is not a regular file", path)
	}
	data, err := readTail(f, fi.Size(), MaxTranscript)
	if err != nil {
		return Turn{}, fmt.Errorf("agentturn: reading transcript: %w", err)
	}
	return ClaudeTurn(data), nil
}

// readTail returns at most the last limit bytes of the first size bytes of
// r. When that starts mid-file, the first (partial) line is dropped; to tell
// whether it is partial, the single byte before the window is peeked at, so
// a line starting exactly at the window's start is kept. The file may shrink
// concurrently; whatever could be read is returned.
func readTail(r io.ReaderAt, size, limit int64) ([]byte, error) {
	if size <= 0 || limit <= 0 {
		return nil, nil
	}
	off := int64(0)
	if size > limit {
		off = size - limit
	}
	buf := make([]byte, size-off)
	n, err := r.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	if off == 0 {
		return buf, nil
	}
	var prev [1]byte
	if k, _ := r.ReadAt(prev[:], off-1); k == 1 && prev[0] == '\n' {
		return buf, nil
	}
	return dropFirstLine(buf), nil
}

// dropFirstLine returns b after its first newline (nil if it has none).
func dropFirstLine(b []byte) []byte {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil
	}
	return b[i+1:]
}

// claudeLine is the part of a transcript line this package looks at.
type claudeLine struct {
	Type             string `json:"type"`
	SessionID        string `json:"sessionId"`
	Cwd              string `json:"cwd"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Message          struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`

	blocks []claudeBlock // Message.Content decoded; a string becomes one text block
}

// claudeBlock is one element of message.content.
type claudeBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	Input     struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	} `json:"input"`
}

// lenientUnmarshal decodes data into v, accepting a partial result when the
// only problem is a value of an unexpected type (encoding/json keeps going
// past those). Syntax errors reject the data.
func lenientUnmarshal(data []byte, v any) bool {
	err := json.Unmarshal(data, v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// parseClaudeLine decodes one transcript line; ok is false for blank,
// invalid or truncated lines.
func parseClaudeLine(raw []byte) (l claudeLine, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return l, false
	}
	if !lenientUnmarshal(raw, &l) {
		return claudeLine{}, false
	}
	c := bytes.TrimSpace(l.Message.Content)
	switch {
	case len(c) == 0:
	case c[0] == '"':
		var s string
		if json.Unmarshal(c, &s) == nil {
			l.blocks = []claudeBlock{{Type: "text", Text: s}}
		}
	case c[0] == '[':
		var bs []claudeBlock
		if lenientUnmarshal(c, &bs) {
			l.blocks = bs
		}
	}
	l.Message.Content = nil
	return l, true
}

// isConversation reports whether the line belongs to the main conversation.
func (l *claudeLine) isConversation() bool {
	return !l.IsSidechain && (l.Type == "user" || l.Type == "assistant")
}

// interruptMarker starts the text Claude Code records when the user
// interrupts the assistant; it is not a prompt.
const interruptMarker = "[Request interrupted by user"

// isPrompt reports whether a conversation line is a real user prompt, as
// opposed to tool results, injected meta messages, compaction summaries or
// interrupt markers, all of which continue the current turn.
func (l *claudeLine) isPrompt() bool {
	if l.Type != "user" || l.IsSidechain || l.IsMeta || l.IsCompactSummary {
		return false
	}
	prompt := false
	for _, b := range l.blocks {
		switch b.Type {
		case "tool_result":
			return false
		case "text":
			if !strings.HasPrefix(strings.TrimSpace(b.Text), interruptMarker) {
				prompt = true
			}
		case "":
		default: // image, document, ... attached by the user
			prompt = true
		}
	}
	return prompt
}

// fileTools maps the tools that edit or write files to the input member
// naming the file.
var fileTools = map[string]func(*claudeBlock) string{
	"Edit":         func(b *claudeBlock) string { return b.Input.FilePath },
	"Write":        func(b *claudeBlock) string { return b.Input.FilePath },
	"MultiEdit":    func(b *claudeBlock) string { return b.Input.FilePath },
	"NotebookEdit": func(b *claudeBlock) string { return b.Input.NotebookPath },
}

// ClaudeTurn parses transcript JSONL bytes (already bounded) into the last
// turn.
//
// The turn starts at the last real user prompt of the main conversation and
// runs to the end of the input; if no prompt is present, the whole input is
// the turn. Sidechain (subagent) lines, non-conversation lines and invalid or
// truncated lines are skipped. Input longer than MaxTranscript is cut to its
// tail first, like ReadClaudeTranscript does.
func ClaudeTurn(jsonl []byte) Turn {
	turn, anySession, anyCwd := lastClaudeTurn(transcriptTail(jsonl))
	a := newClaudeTurnBuilder()
	for k := len(turn) - 1; k >= 0; k-- {
		a.add(&turn[k])
	}
	t := a.turn()
	if t.SessionID == "" {
		t.SessionID = anySession
	}
	if t.Cwd == "" {
		t.Cwd = anyCwd
	}
	return t
}

// transcriptTail cuts jsonl to its last MaxTranscript bytes, starting at a
// line boundary, like ReadClaudeTranscript does.
func transcriptTail(jsonl []byte) []byte {
	if len(jsonl) <= MaxTranscript {
		return jsonl
	}
	start := len(jsonl) - MaxTranscript
	if jsonl[start-1] == '\n' {
		return jsonl[start:]
	}
	return dropFirstLine(jsonl[start:])
}

// lastClaudeTurn walks backwards to the last prompt so that only the final
// turn is decoded: it returns the turn's conversation lines, last first,
// and the first session id and working directory seen on any line.
func lastClaudeTurn(jsonl []byte) (turn []claudeLine, anySession, anyCwd string) {
	for end := len(jsonl); end > 0; {
		i := bytes.LastIndexByte(jsonl[:end], '\n')
		raw := jsonl[i+1 : end]
		end = max(i, 0)
		l, ok := parseClaudeLine(raw)
		if !ok {
			continue
		}
		if anySession == "" {
			anySession = l.SessionID
		}
		if anyCwd == "" {
			anyCwd = l.Cwd
		}
		if !l.isConversation() {
			continue
		}
		turn = append(turn, l)
		if l.isPrompt() {
			break
		}
	}
	return turn, anySession, anyCwd
}

// claudeTurnBuilder aggregates a turn's lines, oldest first, into a Turn.
type claudeTurnBuilder struct {
	t         Turn
	tools     *orderedSet
	edits     []claudeEdit
	failed    map[string]bool // tool_use ids whose result is an error
	summaryID string
	summary   []string
}

// claudeEdit is a file a tool call edited or wrote, with the call's id.
type claudeEdit struct{ path, id string }

func newClaudeTurnBuilder() *claudeTurnBuilder {
	return &claudeTurnBuilder{t: Turn{Agent: agentClaude}, tools: newOrderedSet(MaxTools), failed: make(map[string]bool)}
}

// add takes the next line of the turn.
func (a *claudeTurnBuilder) add(l *claudeLine) {
	if l.SessionID != "" {
		a.t.SessionID = l.SessionID
	}
	if l.Cwd != "" {
		a.t.Cwd = l.Cwd
	}
	if l.Type == "user" {
		for _, b := range l.blocks {
			if b.Type == "tool_result" && b.IsError && b.ToolUseID != "" {
				a.failed[b.ToolUseID] = true
			}
		}
		return
	}
	if m := l.Message.Model; m != "" && m != "<synthetic>" {
		a.t.Model = m
	}
	if texts := a.blocks(l); len(texts) > 0 {
		// Claude Code writes one line per content block, all carrying
		// the same message id: join the text of one message.
		if l.Message.ID != "" && l.Message.ID == a.summaryID {
			a.summary = append(a.summary, texts...)
		} else {
			a.summary = texts
		}
		a.summaryID = l.Message.ID
	}
}

// blocks records the tools and file edits of an assistant line's content
// blocks and returns its non-empty texts.
func (a *claudeTurnBuilder) blocks(l *claudeLine) []string {
	var texts []string
	for i := range l.blocks {
		b := &l.blocks[i]
		switch b.Type {
		case "text":
			if s := strings.TrimSpace(b.Text); s != "" {
				texts = append(texts, s)
			}
		case "tool_use", "server_tool_use":
			a.tools.add(b.Name)
			if pathOf, ok := fileTools[b.Name]; ok && b.Type == "tool_use" {
				if p := pathOf(b); p != "" {
					a.edits = append(a.edits, claudeEdit{p, b.ID})
				}
			}
		}
	}
	return texts
}

// turn returns the aggregated Turn: the last message's text as summary,
// the tools used, and the files edited by calls that did not fail.
func (a *claudeTurnBuilder) turn() Turn {
	t := a.t
	t.Summary = summarize(strings.Join(a.summary, "\n\n"))
	t.Tools = a.tools.list
	files := newOrderedSet(MaxFiles)
	for _, e := range a.edits {
		if e.id == "" || !a.failed[e.id] {
			files.add(e.path)
		}
	}
	t.Files = files.list
	return t
}
