// Package recall hands the team's memory back to agents: the Model
// Context Protocol server behind `git ctx mcp` (server.go, one file per
// tool: tool_*.go) and the session-start briefing Claude Code's SessionStart
// hook prints (briefing.go).
//
// Every tool reads through the capability packages (internal/checkpoints,
// internal/snapshots, internal/ctxpackages) and returns only records that
// verified on this machine unless the caller sets include_unverified, and
// then marks each unverified one UNVERIFIED. Every result is text cut to a
// byte budget (max_bytes) that says when it was cut. The one tool that
// writes, checkpoint, records through checkpoints.Record, signed as this
// device, like `git ctx checkpoint`. The briefing remembers what it listed
// (checkpoints.RememberInjections) so that the session's next checkpoint
// records it in its injections.
//
// The server's files (server.go, drain.go, tool*.go, tooltext.go) are
// built only without the tag ctx_lean: the shipped lean git-ctx links no
// MCP SDK and runs the briefing (briefing.go, records.go, budget.go, which
// import no SDK) itself, and hands `git ctx mcp` to git-ctx-full
// (docs/ARCHITECTURE.md, "Two executables").
//
// It does no terminal I/O and writes nothing to the standard output but
// the protocol (or the briefing, for the hook).
//
// Imports: internal/checkpoints, internal/snapshots, internal/ctxpackages,
// internal/workspace, cache, gitexec, gitrepo, gitstore, agentturn,
// formats/ctxpkg, internal/fault, the MCP SDK and its JSON schema package
// (the last two in the server's files only).
package recall
