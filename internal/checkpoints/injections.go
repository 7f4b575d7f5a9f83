package checkpoints

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// InjectionPrefix starts every item git-ctx records in a checkpoint's
// `injections` list for a record it handed an agent (a session-start
// briefing): "recall:" and the record's hash, or "recall:snapshot:" and a
// snapshot id. ghyll's own items there are prompt-injection category names
// (snake_case words without a colon), so the two never collide.
const InjectionPrefix = "recall:"

// maxPendingInjections bounds the remembered items of one session (the
// checkpoint's own limit on the list is MaxTools).
const maxPendingInjections = MaxTools

// staleInjections: remembered items older than this are dropped (their
// session recorded nothing since), when the next briefing is remembered.
const staleInjections = 30 * 24 * time.Hour

// injectionsDir is <git-common-dir>/ctx/injections, one file per session.
func injectionsDir(r *gitrepo.Repo) string { return filepath.Join(r.CommonDir, "ctx", "injections") }

// injectionsFile is the file of session: its name as it is when that is a
// plain name, else the hex SHA-256 of it (a session id may hold any text).
func injectionsFile(r *gitrepo.Repo, session string) string {
	name := session
	plain := len(name) > 0 && len(name) <= 128 && name[0] != '.'
	for i := 0; plain && i < len(name); i++ {
		c := name[i]
		plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	if !plain {
		sum := sha256.Sum256([]byte(session))
		name = "h-" + hex.EncodeToString(sum[:])
	}
	return filepath.Join(injectionsDir(r), name)
}

// RememberInjections records, for the next checkpoint of session, the
// items (InjectionPrefix + hash) of what was just handed to that session's
// agent; it replaces what was remembered before (atomically). An empty
// session or list removes the file.
func RememberInjections(r *gitrepo.Repo, session string, items []string) error {
	if strings.TrimSpace(session) == "" {
		return nil
	}
	path := injectionsFile(r, session)
	if len(items) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("forget injections: %w", err)
		}
		return nil
	}
	if len(items) > maxPendingInjections {
		items = items[:maxPendingInjections]
	}
	var b bytes.Buffer
	for _, it := range items {
		b.WriteString(it + "\n")
	}
	if err := atomicfile.WriteFile(path, b.Bytes(), atomicfile.Options{Perm: 0o600, Replace: true, MkdirPerm: 0o700}); err != nil {
		return fmt.Errorf("remember injections: %w", err)
	}
	pruneInjections(injectionsDir(r), time.Now().Add(-staleInjections))
	return nil
}

// pruneInjections removes the files of dir last written before cutoff.
func pruneInjections(dir string, cutoff time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// PendingInjections returns what RememberInjections remembered for
// session and not yet recorded (nil when nothing), with the file's bytes
// for forgetInjections.
func PendingInjections(r *gitrepo.Repo, session string) ([]string, []byte) {
	if strings.TrimSpace(session) == "" {
		return nil, nil
	}
	data, err := os.ReadFile(injectionsFile(r, session))
	if err != nil || len(data) > maxPendingInjections*(MaxListItem+1) {
		return nil, nil
	}
	var items []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(l) <= MaxListItem && len(items) < maxPendingInjections {
			items = append(items, l)
		}
	}
	return items, data
}

// forgetInjections removes session's file once its items are recorded,
// unless a newer briefing replaced it meanwhile (its bytes differ from
// seen).
func forgetInjections(r *gitrepo.Repo, session string, seen []byte) {
	path := injectionsFile(r, session)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, seen) {
		os.Remove(path)
	}
}
