// Package identity finds, creates and loads the device identity of this
// machine: a device id (a short name such as "laptop-3fa9c2d1") and the
// ed25519 key that signs the checkpoints this device writes.
//
// Identities live in a directory outside any repository (see Home):
//
//	<home>/                   mode 0700
//	<home>/device-id          the device id and "\n", mode 0600
//	<home>/keys/              mode 0700
//	<home>/keys/<id>.key      PEM private key (seed), mode 0600
//	<home>/keys/<id>.pub      PEM public key, mode 0644, informational only
//
// Load creates what is missing and never replaces or repairs an existing
// device-id or key file: unusable content is reported (ErrCorrupt), and so
// are loose permissions (ErrInsecure), which are never fixed silently. New
// files are written to a temporary file and published with a hard link, so
// concurrent first uses on one machine agree on one device id and one key.
// The public key is always derived from the private key; the .pub file is
// rewritten whenever it is missing or differs.
//
// The package prints nothing, and error messages never contain key bytes.
//
// "Identity" here is always a device's. A project's identity hash is
// formats/snapshot's (the snapshot's "project.identity_hash"), and the
// sender identity of a package transport envelope is formats/ctxpkg's.
package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Errors callers branch on; the errors Load returns wrap one of them when
// the cause is a file's permissions or content, or a bad device id.
var (
	// ErrInsecure: a key file or identity directory is readable or
	// writable by group or others, or the key file is a symbolic link.
	ErrInsecure = fault.Sentinel(fault.Config, "insecure identity file permissions")
	// ErrCorrupt: the device-id or key file content is unusable.
	ErrCorrupt = fault.Sentinel(fault.Config, "corrupt identity file")
	// ErrInvalidID: a device id breaks the rules of ValidDeviceID.
	ErrInvalidID = fault.Sentinel(fault.Config, "invalid device id")
)

const (
	deviceIDFile   = "device-id"
	keysDir        = "keys"
	maxDeviceIDLen = 64
	// maxDeviceIDFileSize bounds the device-id file.
	maxDeviceIDFileSize = 256
	// hostPartLen bounds the hostname part of a generated device id.
	hostPartLen = 32
)

// reservedSuffixes may not end a device id: they would make <id>.key and
// <id>.pub look like other files, or collide with lock and data files.
var reservedSuffixes = []string{".lock", ".pub", ".key", ".json", ".jsonl"}

// checkModeBits is false where Unix permission bits do not describe who can
// read a file (Windows reports synthetic modes; access there is by ACL).
var checkModeBits = runtime.GOOS != "windows"

// Identity is the identity of this device.
type Identity struct {
	DeviceID string
	Private  ed25519.PrivateKey
	Public   ed25519.PublicKey
	KeyPath  string // path of the private key file
	Created  bool   // true when Load generated the key (or the device id) during this call
}

// Home returns the directory holding identities: $GIT_CTX_HOME if set (it
// must be absolute), else $XDG_DATA_HOME/git-ctx when XDG_DATA_HOME is an
// absolute path, else $HOME/.local/share/git-ctx.
func Home() (string, error) {
	if v := os.Getenv("GIT_CTX_HOME"); v != "" {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("GIT_CTX_HOME=%q is not an absolute path: set it to an absolute path or unset it", v)
		}
		return filepath.Clean(v), nil
	}
	// The XDG base directory spec says relative values are to be ignored.
	if v := os.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "git-ctx"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot locate the git-ctx home (%v): set GIT_CTX_HOME to an absolute path", err)
	}
	if !filepath.IsAbs(h) {
		return "", fmt.Errorf("home directory %q is not an absolute path: set GIT_CTX_HOME to an absolute path", h)
	}
	return filepath.Join(h, ".local", "share", "git-ctx"), nil
}

// Load returns this machine's identity under home, creating it on first use.
//
// override is the value of `git config ctx.device` ("" = none). When it is
// non-empty it is the device id (checked with ValidDeviceID) and its key is
// <home>/keys/<override>.key, generated on first use; the device-id file is
// neither read nor written. Otherwise the device id is read from
// <home>/device-id, generated on first use.
//
// Load only creates files that do not exist. An existing device-id or key
// file that cannot be used is reported with an error wrapping ErrCorrupt;
// loose permissions on home, home/keys or the key file, or a key file that
// is a symbolic link, with an error wrapping ErrInsecure.
func Load(home, override string) (*Identity, error) {
	if home == "" {
		return nil, errors.New("identity: no home directory given")
	}
	if override != "" {
		if err := ValidDeviceID(override); err != nil {
			return nil, fmt.Errorf("git config ctx.device: %w", err)
		}
	}
	if err := ensureDir(home); err != nil {
		return nil, err
	}
	kdir := filepath.Join(home, keysDir)
	if err := ensureDir(kdir); err != nil {
		return nil, err
	}

	id, created := override, false
	// What to tell the user to do with a corrupt key: with a device-id file a
	// fresh key under the old id would look like an impersonation to other
	// devices, so a new identity means a new device id as well.
	keyFix := "restore it from a backup, or move it and " + filepath.Join(home, deviceIDFile) +
		" away to create a new identity (a new device id)"
	if override == "" {
		var err error
		id, created, err = loadOrCreateDeviceID(filepath.Join(home, deviceIDFile))
		if err != nil {
			return nil, err
		}
	} else {
		keyFix = "restore it from a backup, or move it away and set git config ctx.device to a new device id"
	}

	keyPath := filepath.Join(kdir, id+".key")
	priv, keyCreated, err := loadOrCreateKey(keyPath, keyFix)
	if err != nil {
		return nil, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	if err := syncPublicKey(filepath.Join(kdir, id+".pub"), pub); err != nil {
		return nil, err
	}
	return &Identity{
		DeviceID: id,
		Private:  priv,
		Public:   pub,
		KeyPath:  keyPath,
		Created:  created || keyCreated,
	}, nil
}

// ValidDeviceID reports whether id is usable as a device id: 1 to 64
// characters from [a-z0-9._-], starting with a letter or digit, without
// "..", and not ending in .lock, .pub, .key, .json or .jsonl. That makes it
// a safe single path segment on every platform. The error wraps
// ErrInvalidID and names the rule that failed.
func ValidDeviceID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: it is empty", ErrInvalidID)
	}
	if len(id) > maxDeviceIDLen {
		return invalidID(id, "it is %d bytes long, the limit is %d", len(id), maxDeviceIDLen)
	}
	for _, r := range id {
		if !isLowerAlnum(r) && r != '.' && r != '_' && r != '-' {
			return invalidID(id, "it contains %q; only a-z, 0-9, '.', '_' and '-' are allowed", r)
		}
	}
	if !isLowerAlnum(rune(id[0])) {
		return invalidID(id, "it must start with a-z or 0-9")
	}
	if strings.Contains(id, "..") {
		return invalidID(id, `it must not contain ".."`)
	}
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(id, s) {
			return invalidID(id, "it must not end with %q", s)
		}
	}
	return nil
}

// invalidID is the error for a device id id that breaks the rule format
// describes.
func invalidID(id, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidID, shorten(id), fmt.Sprintf(format, args...))
}

// MaxBranchDeviceIDLen bounds a device id read from a memory branch.
const MaxBranchDeviceIDLen = 128

// windowsDeviceNames are names Windows opens as devices whatever their
// extension ("con.pub" is the console).
var windowsDeviceNames = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}

// ValidBranchDeviceID is the rule for a device id that arrives from another
// clone (a devices/<id>.pub, chain or timeline path a pull brings). It is
// wider than ValidDeviceID, so that ghyll's ids (the host name, which may
// hold capitals, e.g. "Alice-MacBook-Pro.local") are read, and strict about
// what could mislead or escape: 1 to 128 characters from A-Z a-z 0-9 . _ -
// (printable ASCII only: no whitespace, control or look-alike characters),
// starting with a letter or digit, without "..", not ending in a reserved
// suffix (any case), not a Windows device name, and a safe path component
// for git (gitname.Check). Errors wrap ErrInvalidID.
func ValidBranchDeviceID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: it is empty", ErrInvalidID)
	}
	if len(id) > MaxBranchDeviceIDLen {
		return invalidID(id, "it is %d bytes long, the limit is %d", len(id), MaxBranchDeviceIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isASCIIAlnum(c) && c != '.' && c != '_' && c != '-' {
			return invalidID(id, "it contains byte 0x%02x; only A-Z, a-z, 0-9, '.', '_' and '-' are allowed", c)
		}
	}
	if !isASCIIAlnum(id[0]) {
		return invalidID(id, "it must start with a letter or digit")
	}
	if strings.Contains(id, "..") {
		return invalidID(id, `it must not contain ".."`)
	}
	low := strings.ToLower(id)
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(low, s) {
			return invalidID(id, "it must not end with %q", s)
		}
	}
	stem, _, _ := strings.Cut(low, ".")
	if windowsDeviceNames[stem] || len(stem) == 4 && (strings.HasPrefix(stem, "com") || strings.HasPrefix(stem, "lpt")) && stem[3] >= '0' && stem[3] <= '9' {
		return invalidID(id, "it is a Windows device name")
	}
	for _, name := range []string{id, id + ".pub", id + ".jsonl"} {
		if err := gitname.Check(name); err != nil {
			return invalidID(id, "%v", err)
		}
	}
	return nil
}

// DeviceIDFoldKey is what two device ids must not share unless they are
// equal: the id in lower case without trailing dots, the name a
// case-insensitive file system (NTFS, APFS, HFS+) would open for it.
func DeviceIDFoldKey(id string) string {
	return strings.TrimRight(strings.ToLower(id), ".")
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// NewDeviceID returns a fresh device id: the sanitized short hostname (or
// "device"), "-", and 8 lowercase hex characters from crypto/rand, so two
// machines with the same hostname still get different ids.
func NewDeviceID() string {
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead
	return hostPart(host) + "-" + hex.EncodeToString(b[:])
}

// hostPart turns a hostname into the first part of a device id: the part
// before the first '.', lowercased, with every character outside [a-z0-9-]
// replaced by '-', runs of '-' collapsed, '-' trimmed from both ends, cut to
// 32 characters; "device" when nothing is left.
func hostPart(host string) string {
	if i := strings.IndexByte(host, '.'); i >= 0 {
		host = host[:i]
	}
	var sb strings.Builder
	for _, r := range strings.ToLower(host) {
		if !isLowerAlnum(r) {
			r = '-'
		}
		if r == '-' && strings.HasSuffix(sb.String(), "-") {
			continue
		}
		sb.WriteRune(r)
	}
	s := strings.Trim(sb.String(), "-")
	if len(s) > hostPartLen {
		s = strings.TrimRight(s[:hostPartLen], "-")
	}
	if s == "" {
		return "device"
	}
	return s
}

func isLowerAlnum(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
}

// shorten bounds how much of an untrusted id goes into an error message.
func shorten(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// CurrentID returns the device id Load would use under home without
// creating anything: override when it is set, else the id in
// <home>/device-id; "" when there is none yet or it cannot be read.
func CurrentID(home, override string) string {
	if override != "" {
		return override
	}
	id, err := readDeviceID(filepath.Join(home, deviceIDFile))
	if err != nil {
		return ""
	}
	return id
}

// ---- device id file ----

// loadOrCreateDeviceID reads the device id at path, or generates and
// publishes one when the file does not exist. created reports the latter.
func loadOrCreateDeviceID(path string) (id string, created bool, err error) {
	id, err = readDeviceID(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, false, err
	}
	id = NewDeviceID()
	won, err := publishNew(path, []byte(id+"\n"), 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create device id file: %w", err)
	}
	if !won {
		// Another process created it first: use theirs.
		id, err = readDeviceID(path)
		return id, false, err
	}
	return id, true, nil
}

// readDeviceID reads and validates the device-id file. A missing file is
// reported with an error wrapping fs.ErrNotExist.
func readDeviceID(path string) (string, error) {
	const fix = "restore it from a backup, or move it away to create a new identity (a new device id)"
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &fileError{kind: ErrCorrupt,
			msg: fmt.Sprintf("device id file %s is not a regular file (%s): move it away to create a new identity (a new device id)", path, fileType(fi.Mode()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, tooBig, err := readCapped(f, maxDeviceIDFileSize)
	if err != nil {
		return "", fmt.Errorf("read device id file: %w", err)
	}
	corrupt := func(reason string, cause error) error {
		return &fileError{kind: ErrCorrupt, cause: cause,
			msg: fmt.Sprintf("device id file %s is corrupt (%s): %s", path, reason, fix)}
	}
	if tooBig {
		return "", corrupt(fmt.Sprintf("larger than %d bytes", maxDeviceIDFileSize), nil)
	}
	id := strings.TrimSpace(string(data))
	if id == "" {
		return "", corrupt("empty", nil)
	}
	if err := ValidDeviceID(id); err != nil {
		return "", corrupt(err.Error(), err)
	}
	return id, nil
}

// ---- key files ----

// loadOrCreateKey reads the private key at path, or generates and publishes
// one when the file does not exist. created reports the latter.
func loadOrCreateKey(path, fix string) (priv ed25519.PrivateKey, created bool, err error) {
	priv, err = readKey(path, fix)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return priv, false, err
	}
	_, priv, err = ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("generate device key: %w", err)
	}
	won, err := publishNew(path, checkpoint.EncodePrivateKey(priv), 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("create device key: %w", err)
	}
	if !won {
		// Another process created it first: use theirs.
		priv, err = readKey(path, fix)
		return priv, false, err
	}
	return priv, true, nil
}

// readKey reads the private key at path, refusing symbolic links, files
// that are not regular, loose permissions, oversized and unparsable
// content. A missing file is reported with an error wrapping
// fs.ErrNotExist.
func readKey(path, fix string) (ed25519.PrivateKey, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fileError{kind: ErrInsecure,
			msg: fmt.Sprintf("key file %s is a symbolic link: replace it with the key file itself (mode 0600), or move it away", path)}
	}
	if !lfi.Mode().IsRegular() {
		return nil, &fileError{kind: ErrCorrupt,
			msg: fmt.Sprintf("device key %s is not a regular file (%s): %s", path, fileType(lfi.Mode()), fix)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read device key: %w", err)
	}
	// The name may have been swapped (for a symlink, say) between Lstat and
	// Open; only trust what was checked.
	if !os.SameFile(lfi, fi) {
		return nil, &fileError{kind: ErrInsecure,
			msg: fmt.Sprintf("key file %s was replaced while it was being opened: check it and try again", path)}
	}
	if err := checkPerm("key file", path, fi.Mode(), "600"); err != nil {
		return nil, err
	}
	data, tooBig, err := readCapped(f, checkpoint.MaxKeyFileSize)
	if err != nil {
		return nil, fmt.Errorf("read device key: %w", err)
	}
	if tooBig {
		return nil, &fileError{kind: ErrCorrupt,
			msg: fmt.Sprintf("device key %s is corrupt (larger than %d bytes): %s", path, checkpoint.MaxKeyFileSize, fix)}
	}
	priv, err := checkpoint.ParsePrivateKey(data)
	if err != nil {
		// checkpoint's messages describe the shape of the data, never the key bytes.
		return nil, &fileError{kind: ErrCorrupt, cause: err,
			msg: fmt.Sprintf("device key %s is corrupt (%v): %s", path, err, fix)}
	}
	return priv, nil
}

// syncPublicKey makes the .pub file at path hold the PEM encoding of pub,
// rewriting it atomically when it is missing or differs.
func syncPublicKey(path string, pub ed25519.PublicKey) error {
	want := checkpoint.EncodePublicKey(pub)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(want)) {
		if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, want) {
			return nil
		}
	}
	if err := replaceFile(path, want, 0o644); err != nil {
		return fmt.Errorf("write public key: %w", err)
	}
	return nil
}

// ---- permissions ----

// ensureDir creates dir (mode 0700) if needed and refuses it when group or
// others have any access to it.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create identity directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("identity directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("identity directory %s is not a directory", dir)
	}
	return checkPerm("identity directory", dir, fi.Mode(), "700")
}

// checkPerm returns an ErrInsecure error naming what, path and the chmod
// that fixes it when mode grants group or others any access.
func checkPerm(what, path string, mode fs.FileMode, chmod string) error {
	perm := mode.Perm()
	if !checkModeBits || perm&0o077 == 0 {
		return nil
	}
	var how string
	switch {
	case perm&0o044 != 0 && perm&0o022 != 0:
		how = "readable and writable"
	case perm&0o044 != 0:
		how = "readable"
	case perm&0o022 != 0:
		how = "writable"
	default:
		how = "accessible"
	}
	return &fileError{kind: ErrInsecure,
		msg: fmt.Sprintf("%s %s is %s by others (mode %04o): run chmod %s %s", what, path, how, perm, chmod, shellQuote(path))}
}

// shellQuote quotes path for a copy-pasted shell command when needed.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !isLowerAlnum(r) && !(r >= 'A' && r <= 'Z') && !strings.ContainsRune("/._-+:@,=", r) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "mode " + m.String()
	}
}

// ---- files ----

// fileError is an error with a complete, one-line message for the user
// that wraps a sentinel (kind) and, optionally, the underlying cause.
type fileError struct {
	msg   string
	kind  error
	cause error
}

func (e *fileError) Error() string { return e.msg }

func (e *fileError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// readCapped reads at most max bytes from r; tooBig reports more.
func readCapped(r io.Reader, max int) (data []byte, tooBig bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > max {
		return nil, true, nil
	}
	return data, false, nil
}

// publishNew creates path with content data and the given mode, atomically
// and only if path does not exist yet (atomicfile). won is false, with no
// error, when path already existed (another process got there first).
func publishNew(path string, data []byte, mode fs.FileMode) (won bool, err error) {
	err = atomicfile.WriteFile(path, data, atomicfile.Options{Perm: mode})
	if errors.Is(err, atomicfile.ErrExists) {
		return false, nil
	}
	return err == nil, err
}

// replaceFile atomically replaces (or creates) path with content data.
func replaceFile(path string, data []byte, mode fs.FileMode) error {
	return atomicfile.WriteFile(path, data, atomicfile.Options{Perm: mode, Replace: true})
}
