// Package agentturn parses what an AI agent's hook hands to git-ctx at the
// end of a turn (and the transcript tail it points at) into a single Turn:
// what one agent turn contributes to a checkpoint. It only parses: package
// hooks installs the agent hooks and records the turn, and package
// sessions/agents finds whole session transcripts to carry between machines.
//
// Two agents are supported:
//
//   - Claude Code's Stop hook runs `git-ctx hook claude-stop` with a JSON
//     object on stdin (ParseClaudeStop). The turn itself is recovered from
//     the tail of the session transcript the hook input points at
//     (ReadClaudeTranscript, ClaudeTurn).
//   - Codex's notify program runs `git-ctx hook codex-notify '<json>'` with a
//     single JSON argument (ParseCodexNotify).
//
// All parsers are defensive: they bound what they read, tolerate unknown
// fields, wrongly typed fields, truncated lines and garbage, and never panic.
package agentturn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// Turn is what one agent turn contributes to a checkpoint.
type Turn struct {
	Agent     string // "claude" or "codex"
	SessionID string
	Cwd       string   // working directory the agent reported ("" if none)
	Model     string   // last model named in the turn ("" if unknown)
	Summary   string   // the last assistant message text, trimmed, at most MaxSummary bytes (cut on a UTF-8 boundary, "…" appended when cut)
	Files     []string // files the turn edited or wrote, in first-seen order, de-duplicated (nil if none)
	Tools     []string // tool names used in the turn, first-seen order, de-duplicated (nil if none)
}

// Bounds applied by the parsers.
const (
	MaxHookInput  = 1 << 20  // bytes of hook stdin / notify argument accepted
	MaxTranscript = 16 << 20 // bytes read from the END of a transcript file at most
	// MaxSummary bounds Summary (bytes before the "…" marker). It is large
	// on purpose: callers redact secrets first and cut to their own length
	// afterwards, so that no secret is split into an unrecognisable prefix.
	MaxSummary = 60000
	MaxFiles   = 200 // entries in Turn.Files
	MaxTools   = 64  // entries in Turn.Tools
)

// Agent names used in Turn.Agent.
const (
	agentClaude = "claude"
	agentCodex  = "codex"
)

// ellipsis is appended to a Summary that was cut.
const ellipsis = "…"

var (
	// ErrNotATurn is returned for well-formed input that does not describe a
	// completed agent turn (for example a Codex notification of another type).
	ErrNotATurn = fault.Sentinel(fault.Failed, "agentturn: input is not a completed agent turn")
	// ErrTooLarge is returned for hook input larger than MaxHookInput.
	ErrTooLarge = fault.Sentinel(fault.Refused, "agentturn: input too large")
	// errNotObject is returned for hook input that is not a JSON object.
	errNotObject = errors.New("agentturn: input is not a JSON object")
)

// decodeObject decodes hook input that must be a single JSON object into its
// top-level members. Member values are left raw so that a wrongly typed
// field never invalidates the whole input.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	if len(data) > MaxHookInput {
		return nil, ErrTooLarge
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n") // JSON whitespace only
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("agentturn: decoding hook input: %w", err)
	}
	return m, nil
}

// rawString returns raw as a string if it is a JSON string, else "".
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// firstString returns the first member among keys that is a non-empty
// JSON string.
func firstString(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if s := rawString(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// summarize trims s and caps it at MaxSummary bytes, cutting on a rune
// boundary and appending "…" when cut.
func summarize(s string) string {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxSummary {
		return s
	}
	cut := MaxSummary
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRightFunc(s[:cut], unicode.IsSpace) + ellipsis
}

// orderedSet collects distinct non-empty strings in first-seen order, up to
// a limit.
type orderedSet struct {
	limit int
	list  []string
	seen  map[string]struct{}
}

func newOrderedSet(limit int) *orderedSet {
	return &orderedSet{limit: limit, seen: make(map[string]struct{})}
}

func (s *orderedSet) add(v string) {
	if v == "" || len(s.list) >= s.limit {
		return
	}
	if _, dup := s.seen[v]; dup {
		return
	}
	s.seen[v] = struct{}{}
	s.list = append(s.list, v)
}
