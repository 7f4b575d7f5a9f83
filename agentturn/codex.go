package agentturn

import (
	"encoding/json"
	"strings"
)

// codexTurnComplete is the only Codex notification type that is a turn.
const codexTurnComplete = "agent-turn-complete"

// ParseCodexNotify decodes Codex's notify argument. Only
// "agent-turn-complete" is a turn; other types return ErrNotATurn.
//
// Keys are read in Codex's kebab-case ("thread-id", "turn-id",
// "last-assistant-message") with snake_case fallbacks. SessionID is the
// thread id, falling back to the turn id. Codex does not report the model,
// tools or files of a turn, so those stay empty.
func ParseCodexNotify(data []byte) (Turn, error) {
	m, err := decodeObject(data)
	if err != nil {
		return Turn{}, err
	}
	if rawString(m["type"]) != codexTurnComplete {
		return Turn{}, ErrNotATurn
	}
	t := Turn{
		Agent:     agentCodex,
		SessionID: firstString(m, "thread-id", "thread_id", "turn-id", "turn_id"),
		Cwd:       rawString(m["cwd"]),
	}
	msg := m["last-assistant-message"]
	if len(msg) == 0 || string(msg) == "null" {
		msg = m["last_assistant_message"]
	}
	t.Summary = summarize(messageText(msg))
	return t, nil
}

// messageText extracts the text of a last-assistant-message value: normally
// a string (or null); an object carrying a "content" or "text" string is
// tolerated too.
func messageText(raw json.RawMessage) string {
	if s := rawString(raw); s != "" {
		return s
	}
	if len(raw) == 0 || raw[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return strings.TrimSpace(firstString(m, "content", "text"))
}
