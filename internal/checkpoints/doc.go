// Package checkpoints is the checkpoint capability of git-ctx: recording a
// checkpoint by this device (input limits, valid UTF-8, secret redaction,
// the next turn of a session, the injections a session-start briefing
// remembered for the session (injections.go), appended through gitstore), verifying the
// memory branch (Verify) and this device's own chain (OwnChainFailure), the
// status summary, the queries over the cache (log, quarantine, show, search,
// similar), and the import of a ghyll memory.db and the export of this
// repository's verified checkpoints into a new one (ghyll's code schema).
//
// It acts through a *workspace.Workspace and reads records through the
// cache (workspace.Workspace.Cache, which refreshes it from the branch); it
// must not hold snapshot, package or sync logic, write the branch other than
// through gitstore's appends, or do terminal I/O.
//
// Imports: internal/workspace, cache, chain, gitstore, gitrepo, redact,
// formats/checkpoint, internal/atomicfile, internal/fault (all below it).
package checkpoints
