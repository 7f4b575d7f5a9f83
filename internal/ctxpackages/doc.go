// Package ctxpackages is the context-package capability of git-ctx
// (.ctxpkg v1 and lean-ctx transport envelopes): build a package from this
// device's checkpoints (the session layer) and a --from source (the other
// layers), publish it on the memory branch, list and get the published
// ones, check package files, wrap and unwrap envelopes, and order versions
// (CompareVersions, SplitSpec).
//
// It acts through a *workspace.Workspace and writes the branch only through
// gitstore.Store.PublishPackage; it must not hold checkpoint, snapshot or
// sync logic or do terminal I/O. The CLI's version reaches it as
// BuildOptions.Producer and Wrap's producer argument, never as a package
// variable.
//
// Imports: internal/workspace, gitstore, chain, redact, internal/boundedfile,
// formats (all below it).
package ctxpackages
