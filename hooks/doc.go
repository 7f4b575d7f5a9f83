// Package hooks wires git-ctx into git and into AI agents, and runs what
// that wiring calls: it installs, removes and reports git-ctx's git hooks
// (install.go, shared.go) and agent hooks, Claude Code's Stop and
// SessionStart hooks and Codex's notify program (agenthooks.go), registers
// the MCP server `git ctx mcp` with Claude Code (.mcp.json) and Codex
// (mcpconfig.go), and its entry points (run.go)
// turn a commit, a push or an agent turn into a checkpoint or a push of the
// memory branch. Commits and agent turns go through the hook spool
// (spool.go): the hook appends them under the git dir and returns, and a
// detached drainer (or the next git-ctx command) records them, each
// exactly once and in order. Parsing what an agent's hook hands over is package
// agentturn's job; finding the session transcripts agents keep on disk is
// package sessions/agents'. The SessionStart hook's briefing is package
// internal/recall's (the command layer calls it).
//
// Installation never overwrites what it did not write: a foreign hook is
// kept and chained to (it runs first, once), hook managers get the exact
// line to add instead of a file their next install would erase, and
// uninstall restores what was there byte for byte.
package hooks
