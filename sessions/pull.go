package sessions

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/sessions/agents"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// PullOptions select what Pull restores.
type PullOptions struct {
	// SessionID restores that session only ("": every head whose project is
	// mapped on this machine).
	SessionID string
	// KeepBoth restores a head whose local copy has unpushed changes beside
	// it, under a fork id, instead of stopping with a conflict.
	KeepBoth bool
}

// PullResult reports one restored (or skipped) session.
type PullResult struct {
	Agent, SessionID, SnapshotID string
	Path                         string // the local file written or found up to date
	UpToDate                     bool   // nothing written: the local copy equals the head
	LocalNewer                   bool   // nothing written: the local copy has changes made after the head
	Backup                       string // where the replaced file was saved ("" if none)
	ForkID                       string // keep-both: the id the remote copy got
}

// Pull restores the selected heads. It stops at the first failure; results
// of the sessions restored before it are returned with the error.
func (c *Client) Pull(ctx context.Context, opt PullOptions) ([]PullResult, error) {
	defer c.progressDone()
	m, _, found, err := c.readManifest(ctx)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: no session has been pushed to profile %s in %s yet", ErrNotFound, c.Profile, c.Store.Describe())
	}
	roots := c.roots()
	var sel []session.ManifestEntry
	for _, k := range slices.Sorted(maps.Keys(m.Sessions)) {
		e := m.Sessions[k]
		if opt.SessionID != "" {
			if e.SessionID == opt.SessionID {
				sel = append(sel, e)
			}
		} else if _, ok := roots[e.ProjectID]; ok {
			sel = append(sel, e)
		}
	}
	if len(sel) == 0 {
		if opt.SessionID != "" {
			return nil, fmt.Errorf("%w: session %q is not in profile %s: see 'git ctx session list'", ErrNotFound, opt.SessionID, c.Profile)
		}
		return nil, nil
	}
	var out []PullResult
	for _, e := range sel {
		r, err := c.restore(ctx, e, opt.KeepBoth)
		if err != nil {
			k := session.SessionKey(e.Agent, e.SessionID)
			if errors.Is(err, ErrVerification) || errors.Is(err, ErrRefused) {
				return out, fmt.Errorf("%s: %w: nothing was restored; push the session again from a machine with a good copy", k, err)
			}
			return out, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, *r)
	}
	return out, nil
}

type fingerprint struct {
	exists bool
	size   int64
	mtime  time.Time
}

func fingerprintOf(p string) (fingerprint, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fingerprint{}, nil
	}
	if err != nil {
		return fingerprint{}, err
	}
	if !fi.Mode().IsRegular() {
		return fingerprint{}, fmt.Errorf("%w: %s exists and is not a regular file: move it away", ErrRefused, p)
	}
	return fingerprint{true, fi.Size(), fi.ModTime()}, nil
}

// restoreJob is one session being restored: the manifest entry, the
// adapter and where the file goes.
type restoreJob struct {
	e         session.ManifestEntry
	ad        agents.Adapter
	root      string // the project's work tree on this machine
	agentRoot string
	key       string
	st        *State // what this machine remembers (nil: never synced)
	res       *PullResult

	archive   string      // the file's path inside the snapshot
	id        string      // the session id written (a fork id with keep-both)
	rel, dest string      // the destination, relative to agentRoot and absolute
	fp        fingerprint // the destination as found
	localHash string      // SHA-256 of the destination ("" when absent)
	// hash is the client's localHash for this session: the SHA-256 of a
	// local file, not read again while its stamp for revision holds.
	hash func(p, revision string) (string, error)
}

// restore brings one session head to this machine: check the entry, skip a
// head already synced, download and verify the snapshot, pick the
// destination, expand it into a verified temporary file, then publish it.
func (c *Client) restore(ctx context.Context, e session.ManifestEntry, keepBoth bool) (*PullResult, error) {
	j, err := c.newRestoreJob(e)
	if err != nil {
		return nil, err
	}
	if j.alreadySynced() {
		return j.res, nil
	}
	c.phase(PhaseDownloading, 0)
	rc, _, err := c.Store.Get(ctx, c.snapshotKey(e.SnapshotID))
	if errors.Is(err, store.ErrNoObject) {
		return nil, fmt.Errorf("%w: snapshot %s named by the manifest is missing from %s", ErrVerification, e.SnapshotID, c.Store.Describe())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: download snapshot %s: %w", storeClass(err), e.SnapshotID, err)
	}
	defer rc.Close()
	payload, err := c.openSnapshot(j, rc)
	if err != nil {
		return nil, err
	}
	if err := j.pickDestination(keepBoth); err != nil {
		return nil, err
	}
	tr, err := session.ReadTAR(payload, j.archive)
	if err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	return c.restoreFile(ctx, j, tr)
}

// newRestoreJob checks what the manifest entry names (a known agent, a
// session id that is a file name, a project mapped here) and loads the
// session's state.
func (c *Client) newRestoreJob(e session.ManifestEntry) (*restoreJob, error) {
	ad, err := agents.For(e.Agent)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := session.CheckSafePath(e.SessionID); err != nil || strings.Contains(e.SessionID, "/") {
		return nil, fmt.Errorf("%w: session id %q cannot be a file name", ErrRefused, e.SessionID)
	}
	root, ok := c.roots()[e.ProjectID]
	if !ok {
		return nil, fmt.Errorf("%w: the session belongs to project %q, which is not mapped here: add --project %s=/absolute/path/of/its/work/tree",
			ErrConfig, e.ProjectID, e.ProjectID)
	}
	agentRoot, err := ad.Root()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	key := session.SessionKey(e.Agent, e.SessionID)
	st, err := c.LoadState(key)
	if err != nil {
		return nil, err
	}
	return &restoreJob{e: e, ad: ad, root: root, agentRoot: agentRoot, key: key, st: st, id: e.SessionID,
		res:  &PullResult{Agent: e.Agent, SessionID: e.SessionID, SnapshotID: e.SnapshotID},
		hash: func(p, revision string) (string, error) { return c.localHash(key, p, revision) }}, nil
}

// alreadySynced reports (filling res) that the head has not moved since
// this machine last synced the session and the local file is still there
// (weakness #4): it is either that head or newer (changes to push), and
// nothing is downloaded.
func (j *restoreJob) alreadySynced() bool {
	st := j.st
	if st == nil || st.RemoteRevision != j.e.SnapshotID || st.Path == "" {
		return false
	}
	h, err := j.hash(st.Path, st.LocalRevision)
	if err != nil {
		return false
	}
	j.res.Path, j.res.UpToDate, j.res.LocalNewer = st.Path, h == st.LocalRevision, h != st.LocalRevision
	return true
}

// openSnapshot decrypts the downloaded snapshot, checks its envelope
// against the manifest entry and its archive path, and returns the payload.
func (c *Client) openSnapshot(j *restoreJob, rc io.Reader) (io.Reader, error) {
	e := j.e
	c.phase(PhaseDerivingKey, 0)
	plain, err := session.Decrypt(rc, c.Passphrase)
	if err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	env, payload, err := session.ReadSnapshot(plain)
	if err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	if err := env.Match(session.Expect{SnapshotID: e.SnapshotID, Agent: e.Agent, SessionID: e.SessionID, ProjectID: e.ProjectID}); err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	j.archive = env.Files[0].Path
	c.phase(PhaseRestoring, env.Files[0].Size)
	if err := session.CheckAdapterPath(e.Agent, j.archive, true); err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	if w := j.ad.VersionWarning(env.SourceAgentVersion); w != "" {
		c.warn("%s", w)
	}
	return c.progressReader(payload), nil
}

// pickDestination sets where the file goes: the session's own path, or
// with keepBoth and unpushed local changes there, a fork id's path beside
// it.
func (j *restoreJob) pickDestination(keepBoth bool) error {
	if err := j.locate(j.e.SessionID); err != nil {
		return err
	}
	localChanged := j.st == nil || j.st.LocalRevision != j.localHash
	if !j.fp.exists || !localChanged || !keepBoth {
		return nil
	}
	j.res.ForkID = ForkID(j.e.SessionID, j.e.SnapshotID)
	return j.locate(j.res.ForkID)
}

// locate sets the destination for session id id and fingerprints it.
func (j *restoreJob) locate(id string) error {
	rel, err := j.ad.Destination(j.archive, j.e.SessionID, id, j.root)
	if err != nil {
		return classify(err)
	}
	j.id, j.rel, j.dest = id, rel, filepath.Join(j.agentRoot, filepath.FromSlash(rel))
	if j.fp, err = fingerprintOf(j.dest); err != nil {
		return err
	}
	j.localHash = ""
	if j.fp.exists {
		revision := ""
		if j.st != nil {
			revision = j.st.LocalRevision
		}
		if j.localHash, err = j.hash(j.dest, revision); err != nil {
			return fmt.Errorf("read %s: %w", j.dest, err)
		}
	}
	return nil
}

// restoreFile expands the archive entry into a verified temporary file beside the
// destination and publishes it, unless the local copy already is the head
// or holds unpushed changes. Directories it created are removed again when
// nothing was published.
func (c *Client) restoreFile(ctx context.Context, j *restoreJob, tr io.Reader) (*PullResult, error) {
	e, res := j.e, j.res
	created, err := mkdirTracked(filepath.Dir(j.dest))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(j.dest), err)
	}
	committed := false
	defer func() {
		if !committed {
			removeCreated(created)
		}
	}()
	tmp, newHash, err := c.stream(ctx, tr, filepath.Dir(j.dest), e.Agent, j.ad.RewriteID(e.SessionID, j.id))
	if err != nil {
		return nil, classify(fmt.Errorf("snapshot %s: %w", e.SnapshotID, err))
	}
	defer tmp.Close() // removes the temporary file unless published
	res.Path = j.dest
	if j.fp.exists && newHash == j.localHash {
		// The local copy already is the head: nothing to write.
		res.UpToDate = true
		return res, c.recordSynced(j, j.localHash)
	}
	if j.fp.exists && res.ForkID == "" && (j.st == nil || j.st.LocalRevision != j.localHash) {
		return nil, fmt.Errorf("%w: %s has changes that were not pushed (or was never synced here): push them with 'git ctx session push --session %s', or pull with --keep-both to restore the remote copy beside it",
			ErrConflict, j.dest, e.SessionID)
	}
	if err := c.publishRestored(j, tmp); err != nil {
		return nil, err
	}
	committed = true
	if err := j.ad.Rediscover(j.rel, j.dest, j.id); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	return res, c.recordSynced(j, newHash)
}

// publishRestored renames the verified temporary file over the destination: after
// rediscovery on the temporary file (weakness #16), a check that the
// destination did not change meanwhile, and a backup of the file it
// replaces.
func (c *Client) publishRestored(j *restoreJob, tmp *atomicfile.Temp) error {
	if err := j.ad.Rediscover(j.rel, tmp.File.Name(), j.id); err != nil {
		return fmt.Errorf("%w: %w", ErrVerification, err)
	}
	if err := checkUnchanged(j.dest, j.fp); err != nil {
		return err
	}
	if j.fp.exists {
		var err error
		if j.res.Backup, err = c.backup(j.dest, j.e.Agent, j.rel); err != nil {
			return err
		}
		if err := checkUnchanged(j.dest, j.fp); err != nil {
			return err
		}
	}
	if err := tmp.Replace(filepath.Base(j.dest)); err != nil {
		return fmt.Errorf("restore %s: %w", j.dest, err)
	}
	syncDir(filepath.Dir(j.dest))
	return nil
}

// recordSynced saves the session's state after a restore (or a head found
// already in place); a fork is local only: no state, a later push is a new
// session.
func (c *Client) recordSynced(j *restoreJob, localRevision string) error {
	if j.res.ForkID != "" {
		return nil
	}
	return c.saveState(j.key, &State{Agent: j.e.Agent, SessionID: j.e.SessionID, Path: j.dest, LocalRevision: localRevision, RemoteRevision: j.e.SnapshotID})
}

func checkUnchanged(dest string, fp fingerprint) error {
	now, err := fingerprintOf(dest)
	if err != nil {
		return err
	}
	if now.exists != fp.exists || now.size != fp.size || !now.mtime.Equal(fp.mtime) {
		return fmt.Errorf("%w: %s changed while restoring (is an agent using the session?): stop the agent and pull again", ErrConflict, dest)
	}
	return nil
}

// stream expands the TAR entry record by record into a 0600 temporary file
// in dir (atomicfile). It returns the file, synced and still open, and its
// SHA-256 only after the entry (and so the whole snapshot) verified; on
// error nothing is left behind. The caller closes the file, which removes it
// unless it was published.
func (c *Client) stream(ctx context.Context, tr io.Reader, dir, agent string, rewrite func([]byte) ([]byte, error)) (*atomicfile.Temp, string, error) {
	f, err := atomicfile.CreateTempIn(dir, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("create a temporary file in %s: %w", dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	exp, err := session.NewExpander(agent, c.pathMap())
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f.File, h), 1<<20)
	err = session.TransformRecords(bw, store.ContextReader(ctx, tr), func(rec []byte) ([]byte, error) {
		out, err := exp.Line(rec)
		if err != nil || rewrite == nil {
			return out, err
		}
		return rewrite(out)
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return nil, "", err
	}
	if err := f.File.Sync(); err != nil {
		return nil, "", err
	}
	ok = true
	return f, hex.EncodeToString(h.Sum(nil)), nil
}

// backup copies dest to <StateDir>/backups/<UTC time>/<agent>/<rel>.
func (c *Client) backup(dest, agent, rel string) (string, error) {
	stamp := c.now().Format("20060102T150405.000000000Z")
	b := filepath.Join(c.StateDir, "backups", stamp, agent, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(b), 0o700); err != nil {
		return "", fmt.Errorf("back up %s: %w", dest, err)
	}
	src, err := os.Open(dest)
	if err != nil {
		return "", fmt.Errorf("back up %s: %w", dest, err)
	}
	defer src.Close()
	if err := writeAtomic(b, src); err != nil {
		return "", fmt.Errorf("back up %s: %w", dest, err)
	}
	return b, nil
}

// mkdirTracked creates dir (0700) and any missing parents, returning the
// directories it created, deepest last, so that a failed restore can remove
// them again.
func mkdirTracked(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			removeCreated(created)
			return nil, err
		}
		created = append(created, missing[i])
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		removeCreated(created)
		return nil, fmt.Errorf("%w: %s is not a directory", ErrRefused, dir)
	}
	return created, nil
}

// removeCreated removes the directories mkdirTracked made, deepest first,
// if they are still empty.
func removeCreated(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		os.Remove(created[i])
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
