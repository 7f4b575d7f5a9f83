// Package snapshots is the context-snapshot capability of git-ctx (lean-ctx
// snapshots, reference §2.7): create one from this repository's state and
// this device's latest session, list the timelines (through the cache),
// show, verify, publish to a file, import a file, and restore a session
// (optionally checking out its git anchor).
//
// It acts through a *workspace.Workspace and writes the branch only
// through gitstore.Store.AppendSnapshot; it must not hold checkpoint,
// package or sync logic or do terminal I/O. The CLI's version reaches it
// as CreateOptions.Producer, never as a package variable. Files it is asked
// to write go through workspace.WriteOutput; a file to import is read by
// internal/boundedfile.
//
// Imports: internal/workspace (and through it the cache), gitstore,
// gitexec, redact, internal/boundedfile, formats (all below it).
package snapshots
