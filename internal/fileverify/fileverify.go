// Package fileverify verifies one file of any git-ctx format offline
// (`git ctx verify FILE…`): it detects the format (checkpoint, context
// snapshot, context package, transport envelope), applies that format's
// size limit before parsing, and checks integrity and signature, with a
// checkpoint's key from --key or from the memory branch (BranchKeys).
//
// It reads only the file and, for BranchKeys, the device keys on the
// branch; it must not write anything or open the cache. Imports:
// internal/ctxpackages (package checks), gitstore,
// formats (all below it).
package fileverify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
)

// Result is the offline verification of one file (the JSON contract of
// `git ctx verify FILE… --json`).
type Result struct {
	File   string
	Format string
	Valid  bool
	ID     string
	Error  string
	Rule   string
	Device string
	// KeySource says where the public key came from: "--key FILE" or
	// "branch devices/<id>.pub".
	KeySource string
	// Refused is set when the file was refused for safety (size limit).
	Refused bool
}

// KeySource finds a device's public key for offline verification.
type KeySource func(device string) (ed25519.PublicKey, string, error)

// FixedKey is a KeySource returning one key whatever the device.
func FixedKey(path string) (KeySource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pub, err := checkpoint.ReadPublicKey(f)
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", path, err)
	}
	return func(string) (ed25519.PublicKey, string, error) { return pub, "--key " + path, nil }, nil
}

// BranchKeys returns a KeySource reading devices/<id>.pub from the memory
// branch of w, or nil when there is no branch.
func BranchKeys(st *gitstore.Store) KeySource {
	v, err := st.View()
	if err != nil {
		return nil
	}
	return func(device string) (ed25519.PublicKey, string, error) {
		pub, _, err := v.DeviceKey(device)
		if err != nil {
			return nil, "", err
		}
		return pub, "branch " + gitstore.DeviceKeyPath(device), nil
	}
}

// maxVerifyFile bounds any file verify reads (the largest format limit,
// .ctxpkg's); each format's own limit is applied once it is detected, and a
// file of no known format over the checkpoint limit is refused.
const maxVerifyFile = ctxpkg.MaxFileSize

// Verify detects the format of path and verifies it with keys (which
// may be nil: then the signature cannot be checked and the file is invalid).
func Verify(path string, keys KeySource) Result {
	res := Result{File: path, Format: "unknown"}
	fail := func(format string, args ...any) Result {
		res.Error = fmt.Sprintf(format, args...)
		return res
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail("%v", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file")
	}
	if fi.Size() > maxVerifyFile {
		if ctxpkg.IsPackageName(path) {
			res.Format = "ctxpkg"
		}
		res.Refused = true
		return fail("file is %d bytes, over the %d-byte limit", fi.Size(), maxVerifyFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxVerifyFile+1))
	if err != nil {
		return fail("%v", err)
	}
	res.Format = DetectFormat(data)
	if res.Format == "unknown" && ctxpkg.IsPackageName(path) {
		res.Format = "ctxpkg" // by its extension: report why it does not parse
	}
	limit := map[string]int64{"checkpoint": checkpoint.MaxFileSize, "ctxsnapshot": snapshot.MaxFileSize,
		"ctxpkg": ctxpkg.MaxFileSize, "envelope": ctxpkg.MaxEnvelopeSize}[res.Format]
	if limit == 0 {
		limit = checkpoint.MaxFileSize
	}
	if int64(len(data)) > limit {
		res.Refused = true
		return fail("file is %d bytes, over the %d-byte limit", len(data), limit)
	}
	switch res.Format {
	case "checkpoint":
		return verifyCheckpointFile(res, data, keys)
	case "ctxsnapshot":
		return verifySnapshotFile(res, data)
	case "ctxpkg":
		return verifyPackageFile(res, data)
	case "envelope":
		return verifyEnvelopeFile(res, data)
	}
	return fail("not a recognised git-ctx record")
}

// DetectFormat names the record format of data by its top-level keys.
func DetectFormat(data []byte) string {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(data), &probe); err != nil {
		return "unknown"
	}
	_, hasHash := probe["hash"]
	_, hasSig := probe["sig"]
	_, hasParent := probe["parent"]
	if hasHash && hasSig && hasParent {
		return "checkpoint"
	}
	_, hasSnapID := probe["snapshot_id"]
	_, hasSchema := probe["schema_version"]
	if hasSnapID && hasSchema {
		return "ctxsnapshot"
	}
	if looksLikePackage(probe) {
		return "ctxpkg"
	}
	if looksLikeEnvelope(probe) {
		return "envelope"
	}
	return "unknown"
}

func verifyCheckpointFile(res Result, data []byte, keys KeySource) Result {
	cp, err := checkpoint.Parse(data)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.ID, res.Device = cp.Hash, cp.DeviceID
	if keys == nil {
		res.Error = fmt.Sprintf("no public key for device %q: pass --key PUB.pem or run inside the repository", cp.DeviceID)
		return res
	}
	pub, src, err := keys(cp.DeviceID)
	if err != nil {
		if errors.Is(err, gitstore.ErrNotExist) {
			res.Error = fmt.Sprintf("no public key for device %q on the memory branch: pass --key PUB.pem", cp.DeviceID)
		} else {
			res.Error = err.Error()
		}
		return res
	}
	res.KeySource = src
	rule, err := cp.Verify(pub)
	res.Rule = string(rule)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Valid = true
	return res
}

// verifySnapshotFile checks a context snapshot offline: its id (integrity)
// and its signature under the key it carries (the format's trust model);
// an unsigned snapshot is invalid with error "unsigned".
func verifySnapshotFile(res Result, data []byte) Result {
	s, err := snapshot.ParseFile(data)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.ID = s.SnapshotID
	if err := s.VerifyIntegrity(); err != nil {
		res.Error = err.Error()
		return res
	}
	if s.Signature == nil {
		res.Error = "unsigned"
		return res
	}
	ok, err := s.Verify(nil)
	switch {
	case err != nil:
		res.Error = err.Error()
	case !ok:
		res.Error = "signature verification failed"
	default:
		res.Valid, res.Rule, res.KeySource = true, strings.TrimSuffix(snapshot.SignPrefix, ":"), "embedded public_key "+s.Signature.PublicKey
	}
	return res
}

// isJSONObjectWith reports whether data is a JSON object holding every key.
func isJSONObjectWith(probe map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := probe[k]; !ok {
			return false
		}
	}
	return true
}

// verifyPackageFile is Verify for a .ctxpkg: id = integrity.sha256.
func verifyPackageFile(res Result, data []byte) Result {
	pc := ctxpackages.CheckBytes(res.File, data)
	res.ID, res.Refused = pc.SHA256, pc.Refused
	if !pc.Valid {
		res.Error = strings.Join(pc.Failures, "; ")
		return res
	}
	res.Valid = true
	if pc.Signed {
		res.Rule, res.KeySource = strings.TrimSuffix(ctxpkg.SignPrefix, ":"), "embedded public_key "+pc.Package.Manifest.Signature.PublicKey
	} else {
		res.Rule = "unsigned"
	}
	return res
}

// verifyEnvelopeFile is Verify for a transport envelope: it parses and
// is signed, and a context_package payload verifies as a package (id = its
// integrity.sha256). The HMAC needs the shared secret, which verify does
// not take: Rule says so ("hmac not checked").
func verifyEnvelopeFile(res Result, data []byte) Result {
	env, err := ctxpkg.ParseEnvelope(data)
	if err != nil {
		res.Refused = errors.Is(err, ctxpkg.ErrEnvelopeTooLarge)
		res.Error = err.Error()
		return res
	}
	if env.Signature == nil {
		res.Error = ctxpkg.ErrUnsigned.Error()
		return res
	}
	if env.ContentType == ctxpkg.ContentContextPackage {
		pc := ctxpackages.CheckBytes(res.File, []byte(env.PayloadJSON))
		res.ID = pc.SHA256
		if !pc.Valid {
			res.Error = "payload package: " + strings.Join(pc.Failures, "; ")
			return res
		}
	}
	res.Valid, res.Rule = true, "hmac not checked (needs the secret: git ctx pkg unwrap --secret-file F)"
	return res
}

// looksLikePackage: a top-level "manifest" and "content".
func looksLikePackage(probe map[string]json.RawMessage) bool {
	return isJSONObjectWith(probe, "manifest", "content")
}

// looksLikeEnvelope: TransportEnvelopeV1's distinctive members.
func looksLikeEnvelope(probe map[string]json.RawMessage) bool {
	return isJSONObjectWith(probe, "format_version", "content_type", "payload_json")
}
