package sessions

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/sessions/agents"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// manifestAttempts bounds the compare-and-swap loop of a manifest update
// (rc.8: 4 attempts without backoff; here jittered backoff, weakness #8).
const manifestAttempts = 10

// maxManifestCiphertext bounds the manifest object read: the largest
// plaintext accepted plus age's header limit, nonce and per-chunk tags.
const maxManifestCiphertext = session.MaxManifestSize + session.MaxManifestSize/(64<<10)*16 + 16 + 16 + 64<<10

// manifestRead is one fetched manifest: the decrypted manifest, the store
// version it was read at, whether it exists, and the SHA-256 of its
// ciphertext.
type manifestRead struct {
	m     *session.Manifest
	v     store.Version
	found bool
	sum   [sha256.Size]byte
}

// readManifest fetches and decrypts the manifest. found is false (and m an
// empty manifest) when the store holds none.
func (c *Client) readManifest(ctx context.Context) (m *session.Manifest, v store.Version, found bool, err error) {
	r, err := c.fetchManifest(ctx)
	if err != nil {
		return nil, "", false, err
	}
	return r.m, r.v, r.found, nil
}

// fetchManifest reads the manifest's ciphertext (bounded) and decrypts it,
// unless it is byte for byte the ciphertext this client decrypted last: a
// compare-and-swap retry that finds the manifest unchanged (a directory
// store's version is the file's stat, which a copy or touch changes) costs
// no second scrypt derivation. Only the plaintext manifest is remembered,
// in memory, for the client's lifetime; no key is.
func (c *Client) fetchManifest(ctx context.Context) (*manifestRead, error) {
	c.phase(PhaseDownloading, 0)
	rc, v, err := c.Store.Get(ctx, c.manifestKey())
	if errors.Is(err, store.ErrNoObject) {
		return &manifestRead{m: session.NewManifest()}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read the manifest from %s: %w", storeClass(err), c.Store.Describe(), err)
	}
	defer rc.Close()
	ct, err := io.ReadAll(io.LimitReader(rc, maxManifestCiphertext+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read the manifest from %s: %w", storeClass(err), c.Store.Describe(), err)
	}
	if len(ct) > maxManifestCiphertext {
		return nil, manifestErr(fmt.Errorf("%w: ciphertext over %d bytes", session.ErrManifestTooLarge, maxManifestCiphertext))
	}
	res := &manifestRead{v: v, found: true, sum: sha256.Sum256(ct)}
	plain := c.manifestPlain
	if plain == nil || res.sum != c.manifestSum {
		c.phase(PhaseDerivingKey, 0)
		if plain, err = c.decryptManifest(ct); err != nil {
			return nil, err
		}
		c.manifestSum, c.manifestPlain = res.sum, plain
	}
	if res.m, err = session.ReadManifest(bytes.NewReader(plain)); err == nil {
		err = res.m.Validate()
	}
	if err != nil {
		return nil, manifestErr(err)
	}
	return res, nil
}

// decryptManifest opens a manifest ciphertext, returning its plaintext
// (at most MaxManifestSize bytes, authenticated to the end).
func (c *Client) decryptManifest(ct []byte) ([]byte, error) {
	pr, err := session.Decrypt(bytes.NewReader(ct), c.Passphrase)
	if err != nil {
		return nil, manifestErr(err)
	}
	plain, err := io.ReadAll(io.LimitReader(pr, session.MaxManifestSize+1))
	if err == nil && len(plain) > session.MaxManifestSize {
		err = session.ErrManifestTooLarge
	}
	if err != nil {
		return nil, manifestErr(err)
	}
	return plain, nil
}

func manifestErr(err error) error {
	if errors.Is(err, session.ErrWrongPassphrase) {
		return fmt.Errorf("%w: the manifest does not open with this passphrase: %w (check the passphrase)", ErrVerification, err)
	}
	return classify(fmt.Errorf("manifest: %w", err))
}

func (c *Client) encryptManifest(m *session.Manifest) ([]byte, error) {
	data, err := m.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: manifest: %w", ErrRefused, err)
	}
	var buf bytes.Buffer
	var opts []session.EncryptOption
	if c.AllowWeak {
		opts = append(opts, session.AllowWeak())
	}
	w, err := session.Encrypt(&buf, c.Passphrase, c.WorkFactor, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: encrypt: %w", ErrConfig, err)
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PushResult reports one push.
type PushResult struct {
	Session    agents.Session
	SnapshotID string // the new head ("" when skipped)
	Parent     string // the head it replaced
	UpToDate   bool   // nothing to push: the remote head is this file
	Size       int64  // TAR payload bytes
}

// FindLocal returns this project's local sessions of agent ("" = all),
// most recent first.
func (c *Client) FindLocal(agent string) ([]agents.Session, error) {
	ads := agents.All()
	if agent != "" {
		a, err := agents.For(agent)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		ads = []agents.Adapter{a}
	}
	var all []agents.Session
	for _, a := range ads {
		list, err := a.Discover(c.project())
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		all = append(all, list...)
	}
	sortSessions(all)
	return all, nil
}

func sortSessions(all []agents.Session) {
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].ModTime.After(all[j-1].ModTime); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
}

// Push exports one session of this project (sessionID "", the most recent)
// and makes it the session's head in the store.
func (c *Client) Push(ctx context.Context, agent, sessionID string) (*PushResult, error) {
	defer c.progressDone()
	list, err := c.FindLocal(agent)
	if err != nil {
		return nil, err
	}
	var s *agents.Session
	for i := range list {
		if sessionID == "" || list[i].ID == sessionID {
			s = &list[i]
			break
		}
	}
	if s == nil {
		if sessionID != "" {
			return nil, fmt.Errorf("%w: no Claude Code or Codex session %q for %s: see 'git ctx session list'", ErrNotFound, sessionID, c.WorkTree)
		}
		return nil, fmt.Errorf("%w: no Claude Code or Codex session for %s on this machine", ErrNotFound, c.WorkTree)
	}
	return c.pushSession(ctx, *s)
}

func (c *Client) pushSession(ctx context.Context, s agents.Session) (*PushResult, error) {
	if session.IsCredentialPath(s.Rel) || session.IsCredentialName(filepath.Base(s.Path)) {
		return nil, fmt.Errorf("%w: refusing to push %s: the name looks like a credential file", ErrRefused, s.Path)
	}
	if err := session.CheckAdapterPath(s.Agent, s.Rel, false); err != nil {
		return nil, fmt.Errorf("%w: refusing to push %s: %w", ErrRefused, s.Path, err)
	}
	ad, _ := agents.For(s.Agent)
	if w := ad.VersionWarning(s.Version); w != "" {
		c.warn("%s", w)
	}
	key := session.SessionKey(s.Agent, s.ID)
	st, err := c.LoadState(key)
	if err != nil {
		return nil, err
	}

	// The manifest first: a conflict or an unchanged session is found
	// without exporting anything (the CAS loop re-checks the head later).
	mr, err := c.fetchManifest(ctx)
	if err != nil {
		return nil, err
	}
	head := mr.m.Sessions[key].SnapshotID
	res := &PushResult{Session: s, Parent: head}
	base := ""
	if st != nil {
		base = st.RemoteRevision
	}
	if head != base {
		return nil, conflictErr(key, base, head)
	}
	if st != nil && head != "" {
		if h, err := c.localHash(key, s.Path, st.LocalRevision); err == nil && h == st.LocalRevision {
			res.UpToDate, res.SnapshotID = true, head
			return res, nil
		}
	}

	c.phase(PhaseExporting, 0)
	tarFile, size, sum, localHash, err := c.export(s)
	if err != nil {
		return nil, err
	}
	defer func() { tarFile.Close(); os.Remove(tarFile.Name()) }()
	res.Size = size

	snapID, err := NewUUID()
	if err != nil {
		return nil, err
	}
	env := session.Envelope{
		SchemaVersion: session.EnvelopeSchemaVersion, Kind: session.Kind, SnapshotID: snapID,
		ParentRevision: head, Agent: s.Agent, AdapterSchema: session.AdapterSchema,
		SourceAgentVersion: s.Version, SourcePlatform: Platform(), ProjectID: c.ProjectID,
		SessionID: s.ID, CreatedAt: session.FormatTime(c.now()),
		Files: []session.FileDescriptor{session.NewFileDescriptor(s.Rel, size, sum)},
	}
	if err := c.upload(ctx, snapID, env, tarFile, size); err != nil {
		return nil, err
	}
	entry := session.ManifestEntry{Agent: s.Agent, SessionID: s.ID, SnapshotID: snapID, ProjectID: c.ProjectID}
	if err := c.updateManifest(ctx, key, head, entry, mr); err != nil {
		return nil, fmt.Errorf("snapshot %s uploaded but the manifest was not updated: %w", snapID, err)
	}
	res.SnapshotID = snapID
	if err := c.saveState(key, &State{Agent: s.Agent, SessionID: s.ID, Path: s.Path, LocalRevision: localHash, RemoteRevision: snapID}); err != nil {
		return res, err
	}
	return res, nil
}

func conflictErr(key, base, head string) error {
	if head == "" {
		return fmt.Errorf("%w: the store no longer holds %s, which this machine last synced as snapshot %s (deleted or rolled back?): check the store and --profile, or remove the session's state under <git-common-dir>/ctx/sessions/state/ to push it as new",
			ErrConflict, key, base)
	}
	b := base
	if b == "" {
		b = "nothing (never pushed or pulled here)"
	}
	return fmt.Errorf("%w: the remote head of %s moved from %s to %s (another machine pushed it): pull it with 'git ctx session pull --session %s' (add --keep-both to keep this copy too)",
		ErrConflict, key, b, head, sessionPart(key))
}

func sessionPart(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' {
			return key[i+1:]
		}
	}
	return key
}

// exportBuffer is the buffer size of the export's writes and of its
// read-back hash.
const exportBuffer = 1 << 20

// export writes the normalised single-entry TAR of s into a temporary file
// (returned open, at offset 0) and returns its size and SHA-256, and the
// SHA-256 of the raw local file as read.
//
// The session is read and normalised once, straight into the TAR: the
// header is reserved (its length depends on the entry name only), the body
// and the trailer are written after it, and the header with the body's size
// is written over the reservation at the end. The bytes are those of
// session.WriteTAR. The TAR's SHA-256 is then read back from the file (the
// header, which comes first, is only known at the end).
func (c *Client) export(s agents.Session) (tarFile *os.File, size int64, sum, localHash string, err error) {
	tmpDir := filepath.Join(c.StateDir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return nil, 0, "", "", fmt.Errorf("export: %w", err)
	}
	norm, err := session.NewNormalizer(s.Agent, c.pathMap())
	if err != nil {
		return nil, 0, "", "", classifyExport(s, err)
	}
	reserved, err := session.TARHeader(s.Rel, 0, time.Time{})
	if err != nil {
		return nil, 0, "", "", classifyExport(s, err)
	}
	src, err := os.Open(s.Path)
	if err != nil {
		return nil, 0, "", "", fmt.Errorf("%w: open session %s: %w", ErrNotFound, s.Path, err)
	}
	defer src.Close()
	tf, err := os.CreateTemp(tmpDir, "export-*.tar")
	if err != nil {
		return nil, 0, "", "", fmt.Errorf("export: %w", err)
	}
	fail := func(err error) (*os.File, int64, string, string, error) {
		tf.Close()
		os.Remove(tf.Name())
		return nil, 0, "", "", err
	}
	raw := sha256.New()
	bw := bufio.NewWriterSize(tf, exportBuffer)
	bw.Write(reserved)
	body := &countWriter{w: bw}
	if err := session.TransformRecords(body, io.TeeReader(src, raw), norm.Line); err != nil {
		return fail(classifyExport(s, err))
	}
	hdr, err := session.TARHeader(s.Rel, body.n, time.Time{})
	if err != nil {
		return fail(classifyExport(s, err))
	}
	bw.Write(session.TARTrailer(body.n))
	if err := bw.Flush(); err != nil {
		return fail(fmt.Errorf("export %s: %w", s.Path, err))
	}
	if len(hdr) != len(reserved) {
		// A size of 8 GiB or more takes a PAX record: move the body.
		nf, err := c.reheader(tf, hdr, int64(len(reserved)), body.n, tmpDir)
		if err != nil {
			return nil, 0, "", "", fmt.Errorf("export %s: %w", s.Path, err)
		}
		tf = nf
	} else if _, err := tf.WriteAt(hdr, 0); err != nil {
		return fail(fmt.Errorf("export %s: %w", s.Path, err))
	}
	size = int64(len(hdr)) + body.n + int64(len(session.TARTrailer(body.n)))
	if size > session.MaxPayloadSize {
		return fail(fmt.Errorf("%w: session %s exceeds the %d-byte payload limit", ErrRefused, s.Path, int64(session.MaxPayloadSize)))
	}
	th := sha256.New()
	if _, err := tf.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	n, err := io.CopyBuffer(th, tf, make([]byte, exportBuffer))
	if err == nil && n != size {
		err = fmt.Errorf("the temporary TAR has %d bytes, want %d", n, size)
	}
	if err != nil {
		return fail(fmt.Errorf("export %s: %w", s.Path, err))
	}
	if _, err := tf.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return tf, size, hex.EncodeToString(th.Sum(nil)), hex.EncodeToString(raw.Sum(nil)), nil
}

// reheader returns a new temporary TAR made of hdr and the body (n bytes at
// offset off) and trailer of tf, and removes tf: the rare export whose
// final header is longer than the one reserved.
func (c *Client) reheader(tf *os.File, hdr []byte, off, n int64, tmpDir string) (*os.File, error) {
	defer func() { tf.Close(); os.Remove(tf.Name()) }()
	nf, err := os.CreateTemp(tmpDir, "export-*.tar")
	if err != nil {
		return nil, err
	}
	_, err = nf.Write(hdr)
	if err == nil {
		_, err = io.Copy(nf, io.NewSectionReader(tf, off, n+int64(len(session.TARTrailer(n)))))
	}
	if err != nil {
		nf.Close()
		os.Remove(nf.Name())
		return nil, err
	}
	return nf, nil
}

func classifyExport(s agents.Session, err error) error {
	if errors.Is(err, session.ErrRecordTooLarge) || errors.Is(err, session.ErrUnsafePath) || errors.Is(err, session.ErrTAREntryTooLarge) {
		return fmt.Errorf("%w: export %s: %w", ErrRefused, s.Path, err)
	}
	return fmt.Errorf("export %s: %w", s.Path, err)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// errUploadStopped is what the encrypting writer of an upload meets once the
// store no longer reads.
var errUploadStopped = errors.New("upload stopped")

// upload streams age(envelope "\n" TAR) into a create-if-absent write.
func (c *Client) upload(ctx context.Context, snapID string, env session.Envelope, tarFile io.Reader, size int64) error {
	var opts []session.EncryptOption
	if c.AllowWeak {
		opts = append(opts, session.AllowWeak())
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := func() error {
			c.phase(PhaseDerivingKey, 0)
			w, err := session.Encrypt(pw, c.Passphrase, c.WorkFactor, opts...)
			if err != nil {
				return err
			}
			c.phase(PhaseUploading, size)
			if err := session.WriteSnapshot(w, env, c.progressReader(tarFile), size); err != nil {
				return err
			}
			return w.Close()
		}()
		pw.CloseWithError(err)
		done <- err
	}()
	_, err := c.Store.Create(ctx, c.snapshotKey(snapID), pr)
	pr.CloseWithError(errUploadStopped)
	encErr := <-done
	if err != nil && errors.Is(encErr, errUploadStopped) {
		encErr = nil // the store stopped reading: its error says why
	}
	if encErr != nil && !errors.Is(encErr, io.ErrClosedPipe) {
		if errors.Is(encErr, session.ErrWeakWorkFactor) || errors.Is(encErr, session.ErrWorkFactorTooHigh) ||
			errors.Is(encErr, session.ErrEmptyPassphrase) || errors.Is(encErr, session.ErrPassphraseTooLong) {
			return fmt.Errorf("%w: encrypt: %w", ErrConfig, encErr)
		}
		return fmt.Errorf("encrypt snapshot: %w", encErr)
	}
	if err != nil {
		return fmt.Errorf("%w: upload snapshot to %s: %w", storeClass(err), c.Store.Describe(), err)
	}
	return nil
}

// updateManifest sets key's head to entry if the head is still parent: a
// compare-and-swap loop with jittered backoff. r is a fresh read to try
// first. A retry that finds the manifest's ciphertext unchanged writes the
// body it already encrypted (no derivation at all); one that finds it
// changed decrypts it and encrypts a new body (two).
func (c *Client) updateManifest(ctx context.Context, key, parent string, entry session.ManifestEntry, r *manifestRead) error {
	var body []byte
	var bodyBase [sha256.Size]byte // the ciphertext body was built on
	for attempt := 0; attempt < manifestAttempts; attempt++ {
		if attempt > 0 {
			d := time.Duration(10+mrand.IntN(40*attempt)) * time.Millisecond
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
			var err error
			if r, err = c.fetchManifest(ctx); err != nil {
				return err
			}
		}
		m := r.m
		if cur := m.Sessions[key].SnapshotID; cur != parent {
			return conflictErr(key, parent, cur)
		}
		if body == nil || !r.found || r.sum != bodyBase {
			now := session.FormatTime(c.now())
			entry.UpdatedAt = now
			if m.Sessions == nil {
				m.Sessions = map[string]session.ManifestEntry{}
			}
			m.Sessions[key] = entry
			m.Revision, m.UpdatedAt = entry.SnapshotID, now
			c.phase(PhaseDerivingKey, 0)
			var err error
			if body, err = c.encryptManifest(m); err != nil {
				return err
			}
			bodyBase = r.sum
		}
		c.phase(PhaseManifest, 0)
		var err error
		if r.found {
			_, err = c.Store.Update(ctx, c.manifestKey(), bytes.NewReader(body), r.v)
		} else {
			_, err = c.Store.Create(ctx, c.manifestKey(), bytes.NewReader(body))
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrVersionMismatch), errors.Is(err, store.ErrExists), errors.Is(err, store.ErrNoObject):
			continue
		default:
			return fmt.Errorf("%w: write the manifest to %s: %w", storeClass(err), c.Store.Describe(), err)
		}
	}
	return fmt.Errorf("%w: the manifest changed %d times while updating it: try again", ErrConflict, manifestAttempts)
}
