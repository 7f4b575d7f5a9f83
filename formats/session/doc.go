// Package session reads and writes encrypted session snapshots in the
// Reinstate "Encrypted Session Snapshot Format v1" (envelope schema 1,
// manifest schema 1, kind "reinstate-session-snapshot"), the format git-ctx
// uses to carry coding-agent transcripts between machines.
//
// It is the format layer only: it takes readers, writers and bytes, and knows
// nothing of object stores, agent directories or the CLI. It imports only the
// standard library and filippo.io/age.
//
// # Layers
//
// A snapshot object is
//
//	age( <compact envelope v1 JSON> "\n" <exact TAR bytes> )
//
// and the manifest object is age( <compact manifest v1 JSON> ).
//
//   - Encrypt / Decrypt: age with exactly one scrypt passphrase stanza.
//   - WriteSnapshot / ReadSnapshot: the plaintext framing; the envelope's
//     files[0].size and files[0].sha256 cover the TAR bytes only.
//   - WriteTAR / ReadTAR: the single-entry TAR holding one transformed JSONL
//     file.
//   - NormalizeLine / ExpandLine: the path-token rewrite applied to each
//     JSONL record on export and restore, byte-exact for everything it does
//     not rewrite.
//   - CheckSafePath, CheckAdapterPath, IsCredentialPath: the path rules.
//
// # Streaming and the commit rule
//
// Nothing here buffers a payload: memory use is bounded by the limits below
// (1 MiB metadata line, 16 MiB record, 4 MiB manifest) plus small fixed
// buffers, whatever the payload size.
//
// Streaming means bytes reach the caller before they are verified. The
// readers returned by Decrypt, ReadSnapshot and ReadTAR verify everything
// (age chunk authentication, payload size, payload SHA-256, TAR structure,
// end of archive) by the time they return io.EOF, and return an error instead
// of io.EOF if anything is wrong. A caller must therefore:
//
//  1. copy the stream into a private temporary file,
//  2. treat the data as valid only when the read loop ended with io.EOF and
//     no error (io.Copy returning a nil error), and only then
//  3. fsync and rename the temporary file into place.
//
// On any error the temporary file is deleted; nothing is committed. Reading
// a prefix of the stream and stopping early verifies nothing.
//
// # Compatibility with Reinstate rc.8
//
// The encoders produce the bytes rc.8 produces (Go encoding/json, with its
// HTML escaping; archive/tar defaults). The lenient parsers (ParseEnvelope,
// ParseManifest, ReadSnapshot) accept what rc.8 accepts; the Strict variants
// additionally reject duplicate, unknown and case-variant keys, nulls,
// missing keys and invalid UTF-8. Where rc.8 is unsafe (paths cleaned before
// checking, unchecked TAR typeflags, TAR trailers and trailing data,
// re-serialised JSONL lines, wall-clock TAR mtimes) this package is stricter
// or exact; see the individual functions.
package session
