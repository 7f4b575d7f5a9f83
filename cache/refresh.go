package cache

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/gitstore"
)

// errRewritten means the branch no longer extends what the cache holds.
var errRewritten = errors.New("memory branch history was rewritten")

// Mirror keeps the cache in Dir the mirror of the memory branch of Store:
// it opens the cache and refreshes it from the branch (incrementally, or by a
// rebuild), verifying every record it indexes (chain.Verify, the timeline
// checks of gitstore) and quarantining what fails. One Mirror serves one
// repository for the life of a process (it remembers that Dir is
// unwritable and how many records it indexed).
type Mirror struct {
	Store *gitstore.Store
	Dir   string // <git-common-dir>/ctx
	// Notice, when set, receives one-line notices (e.g. a cache rebuild).
	Notice func(string)
	// Progress, when set, is told how many records an index or rebuild has
	// processed so far, and -1 when it is over.
	Progress func(done int)
	// Preverified holds, by hash, the checkpoints a pull verified moments
	// ago (Preverified): indexing does not check their signatures again
	// and, for those it carries, does not read, parse or hash them again.
	Preverified map[string]Preverified
	// OwnDevice, when set, names this device (its failures get OwnChainHint
	// in their notice).
	OwnDevice func() string
	// OwnChainHint is the advice added to the notice of a failure on this
	// device's own chain.
	OwnChainHint func() string
	// settled, set on a build ahead (BuildAhead), gives the records of
	// each chain a pull verified, once it has (in place of Preverified).
	settled Settled
	indexed int // records indexed by this process (for Progress)
	// unwritable: Dir could not be written; this process builds temporary
	// caches.
	unwritable bool
}

// Preverified is one checkpoint a pull verified (its hash, its signature
// under Key, its entry) on the blob Blob. The cache takes it as verified
// only for the chain of the device whose key on the branch is Key, when
// the branch holds Blob at the record's path; the chain's linkage and the
// repository binding are checked as for any record.
type Preverified struct {
	Key  ed25519.PublicKey
	Blob plumbing.Hash
	// CP and Rule: the record as the pull parsed it and the hash rule it
	// matched (CP nil: the pull did not keep it; it is read and hashed
	// again, only its signature is not checked again).
	CP   *checkpoint.Checkpoint
	Rule checkpoint.Rule
}

// Open opens the cache and brings it up to the branch tip: incrementally
// when the tip moved forward (whoever moved it), by a rebuild when the cache
// is missing, corrupt, of another schema, or the branch was rewritten. The
// caller must Close it.
//
// When the cache directory cannot be written (a read-only file system or
// repository), the cache is built from the branch in a new temporary
// directory instead, which Close removes, and a notice says once that the
// cache is not kept.
func (m *Mirror) Open(ctx context.Context) (*DB, error) {
	if m.Progress != nil {
		defer m.Progress(-1) // done: a progress line may be cleared
	}
	if !m.unwritable {
		db, err := m.openIn(ctx, m.Dir, false)
		if err == nil || !IsUnwritable(err) {
			return db, err
		}
		m.unwritable = true
		m.notice("%s is read-only: the cache is not kept (built in a temporary directory for this command)", m.Dir)
	}
	dir, err := os.MkdirTemp("", "git-ctx-cache-*")
	if err != nil {
		return nil, fmt.Errorf("temporary cache: %w", err)
	}
	db, err := m.openIn(ctx, dir, true)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	db.DiscardOnClose()
	return db, nil
}

// cacheIn opens the cache in dir and brings it up to the branch tip; temp:
// dir is a new temporary directory (no notice of a first build).
func (m *Mirror) openIn(ctx context.Context, dir string, temp bool) (*DB, error) {
	for attempt := 0; attempt < 3; attempt++ {
		db, err := Open(ctx, dir)
		if errors.Is(err, ErrNeedRebuild) || IsCorrupt(err) {
			why := err
			if errors.Is(err, ErrMissing) {
				why = nil // a first build, or after 'rm db': nothing went wrong
				if tip, _ := m.Store.Tip(); !tip.IsZero() && !temp {
					m.notice("building the cache of the memory branch")
				}
			}
			if err := m.rebuild(ctx, dir, why); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		err = m.refresh(ctx, db)
		if err == nil {
			return db, nil
		}
		db.Close()
		if errors.Is(err, errRewritten) || IsCorrupt(err) {
			if err := m.rebuild(ctx, dir, err); err != nil {
				return nil, err
			}
			continue
		}
		return nil, err
	}
	return nil, errors.New("cache: could not bring it up to date")
}

func (m *Mirror) notice(format string, args ...any) {
	if m.Notice != nil {
		m.Notice(fmt.Sprintf(format, args...))
	}
}

// Reindex rebuilds the cache from the branch.
func (m *Mirror) Reindex(ctx context.Context) error {
	if m.Progress != nil {
		defer m.Progress(-1)
	}
	return m.rebuild(ctx, m.Dir, nil)
}

func (m *Mirror) rebuild(ctx context.Context, dir string, why error) error {
	if why != nil {
		m.notice("rebuilding the cache (%v)", why)
	}
	tip, err := m.Store.Tip()
	if err != nil {
		return err
	}
	return Rebuild(ctx, dir, m.fillAt(ctx, tip))
}

// fillAt is the fill of a rebuild that mirrors commit tip (zero: an empty
// branch): every key and record of its tree, and tip as the indexed tip.
func (m *Mirror) fillAt(ctx context.Context, tip plumbing.Hash) func(w *Writer) error {
	return func(w *Writer) error {
		if !tip.IsZero() {
			v, err := m.Store.ViewAt(tip)
			if err != nil {
				return err
			}
			if err := m.index(ctx, w, nil, v); err != nil {
				return err
			}
		}
		return w.SetTip(gitstore.BranchRef, tip.String())
	}
}

// refresh indexes what the branch gained since the cached tip.
func (m *Mirror) refresh(ctx context.Context, db *DB) error {
	tip, err := m.Store.Tip()
	if err != nil {
		return err
	}
	// A no-op costs the ref read above and nothing more: the indexed tip
	// was read with the schema when the file was opened.
	if db.openTip == tip.String() && db.openTip != "" {
		return nil
	}
	return db.Update(ctx, func(w *Writer) error {
		// Another process may have refreshed while we waited for the lock.
		cached, err := w.Tip(gitstore.BranchRef)
		if err != nil || cached == tip.String() {
			return err
		}
		if tip.IsZero() {
			return fmt.Errorf("%w: the branch was deleted", errRewritten)
		}
		v, err := m.Store.ViewAt(tip)
		if err != nil {
			return err
		}
		var old *gitstore.View
		if c := plumbing.NewHash(cached); cached != "" && !c.IsZero() {
			o, err := m.Store.ViewAt(c)
			if err != nil || o.Layout != v.Layout || o.Fanout != v.Fanout {
				return fmt.Errorf("%w: the indexed tip %s is gone or of another layout", errRewritten, short(cached))
			}
			if ok, err := m.Store.IsAncestor(ctx, c, tip); err != nil || !ok {
				return fmt.Errorf("%w: %s does not descend from the indexed tip %s", errRewritten, short(tip.String()), short(cached))
			}
			if err := unchangedHistory(m.Store, o, v); err != nil {
				return err
			}
			old = o
		}
		if err := m.index(ctx, w, old, v); err != nil {
			return err
		}
		return w.SetTip(gitstore.BranchRef, tip.String())
	})
}

// unchangedHistory returns errRewritten when v changes or drops anything
// the indexed view old held: a checkpoint file or a key edited in place, or
// a chain that disappeared. Appends only ever add files and extend chains.
func unchangedHistory(st *gitstore.Store, old, v *gitstore.View) error {
	changes, err := st.Diff(old, v)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if !c.Old.IsZero() && !isChainPath(c.Path) && !isPackagePath(c.Path) {
			return fmt.Errorf("%w: %s was changed in place", errRewritten, c.Path)
		}
	}
	repos, err := old.Repos()
	if err != nil {
		return err
	}
	for _, r := range repos {
		devs, err := old.ChainDevices(r)
		if err != nil {
			return err
		}
		for _, d := range devs {
			if id, err := v.ChainID(r, d); err != nil || id.IsZero() {
				return fmt.Errorf("%w: the chain of %s disappeared", errRewritten, d)
			}
		}
	}
	return nil
}

// isPackagePath: published packages are not cached (pkg list and get read
// the tree), and a pull may replace one this branch never pushed with the
// remote's copy (sync/packages.go): no reason to rebuild.
func isPackagePath(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 4 && parts[0] == "repos" && parts[2] == gitstore.PackagesDirName
}

// isChainPath: chain and timeline files are rewritten by every append (the
// last segment, or ghyll-v1's single chain file); indexing checks they only
// grew.
func isChainPath(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 4 && parts[0] == "repos" && (parts[2] == "chains" || parts[2] == "timelines")
}

// index adds to w every device key and every chain entry of v that is not
// cached yet. With old (the previously indexed view), chains whose object
// id did not change are skipped without reading them.
func (m *Mirror) index(ctx context.Context, w *Writer, old, v *gitstore.View) error {
	devices, err := v.Devices()
	if err != nil {
		return err
	}
	keys := map[string][]byte{}
	now := time.Now().Unix()
	for _, d := range devices {
		pub, raw, err := v.DeviceKey(d)
		if err != nil {
			continue // verification reports it; the device's records stay unverified
		}
		keys[d] = raw
		if err := w.PutDevice(Device{ID: d, PublicKey: string(raw), Fingerprint: checkpoint.Fingerprint(pub), FirstSeen: now}); err != nil {
			return err
		}
	}
	repos, err := v.Repos()
	if err != nil {
		return err
	}
	for _, repoID := range repos {
		chains, err := v.ChainDevices(repoID)
		if err != nil {
			return err
		}
		tree := v.ChainTree()
		if old == nil && len(chains) > 0 {
			// A whole repository to index (a rebuild): its records' files
			// read from listings of their directories.
			tree = newWalkedTree(v, repoID)
		}
		var jobs []*chainJob
		for _, dev := range chains {
			if err := ctx.Err(); err != nil {
				return err
			}
			if old != nil {
				a, errA := old.ChainID(repoID, dev)
				b, errB := v.ChainID(repoID, dev)
				if errA == nil && errB == nil && a == b {
					if oldKey, _, err := old.DeviceKey(dev); err == nil {
						if newKey, _, err := v.DeviceKey(dev); err == nil && oldKey.Equal(newKey) {
							continue
						}
					}
				}
			}
			job := &chainJob{repoID: repoID, dev: dev, tree: tree, preverified: m.Preverified}
			if job.count, job.lastHash, job.lastVerified, err = w.HeadState(repoID, dev); err != nil {
				return err
			}
			jobs = append(jobs, job)
		}
		if err := m.runChainJobs(ctx, w, v, jobs); err != nil {
			return err
		}
		if err := m.indexTimelines(w, old, v, repoID); err != nil {
			return err
		}
	}
	return nil
}

// indexTimelines caches the snapshot timeline entries of repoID beyond what
// is cached, each checked for its line signature (chain.CheckTimelineLines)
// and against the snapshot file it names (integrity, signature by a key on
// the branch, fields) before it is stored as verified.
func (m *Mirror) indexTimelines(w *Writer, old, v *gitstore.View, repoID string) error {
	if v.Layout != gitstore.LayoutCtxV1 {
		return nil
	}
	devices, err := v.TimelineDevices(repoID)
	if err != nil {
		return err
	}
	var keys map[string]ed25519.PublicKey
	for _, dev := range devices {
		if old != nil {
			a, errA := old.TimelineID(repoID, dev)
			b, errB := v.TimelineID(repoID, dev)
			if errA == nil && errB == nil && a == b {
				continue
			}
		}
		count, lastID, lastVerified, err := w.SnapshotHead(repoID, dev)
		if err != nil {
			return err
		}
		lines, err := v.TimelineLines(repoID, dev)
		if err != nil {
			// An unreadable timeline ends this repository's timelines.
			return m.quarantine(w, repoID, dev, "", chain.Malformed, err.Error())
		}
		entries := gitstore.TimelineEntries(lines)
		if count > 0 && (len(entries) < count || entries[count-1].SnapshotID != lastID) {
			return fmt.Errorf("%w: the snapshot timeline of %s no longer holds %s at position %d", errRewritten, dev, short(lastID), count)
		}
		if keys == nil {
			if keys, err = branchKeys(v); err != nil {
				return err
			}
		}
		auth := chain.CheckTimelineLines(repoID, dev, lines, keys[dev])
		tl := timelineTail{repoID: repoID, dev: dev, entries: entries, from: count, verified: lastVerified, auth: auth, keys: keys}
		if err := m.indexTimelineTail(w, v, tl); err != nil {
			return err
		}
	}
	return nil
}

// branchKeys reads every device key on the branch of v (devices whose key
// does not parse are left out).
func branchKeys(v *gitstore.View) (map[string]ed25519.PublicKey, error) {
	keys := map[string]ed25519.PublicKey{}
	ids, err := v.Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range ids {
		if pub, _, err := v.DeviceKey(d); err == nil {
			keys[d] = pub
		}
	}
	return keys, nil
}

// timelineTail is the part of one device's timeline not cached yet.
type timelineTail struct {
	repoID, dev string
	entries     []snapshot.TimelineEntry
	from        int  // entries already cached
	verified    bool // whether the last cached entry verified
	auth        chain.LineAuth
	keys        map[string]ed25519.PublicKey
}

// indexTimelineTail checks and caches the entries of tl from tl.from on:
// once one fails (its line signature, or its snapshot file), it and every
// later entry are cached as unverified and the first failure quarantined.
func (m *Mirror) indexTimelineTail(w *Writer, v *gitstore.View, tl timelineTail) error {
	verified := tl.verified
	for i := tl.from; i < len(tl.entries); i++ {
		e := tl.entries[i]
		if verified && i >= tl.auth.Good {
			verified = false
			if err := m.quarantine(w, tl.repoID, tl.dev, e.SnapshotID, tl.auth.Reason, tl.auth.Detail); err != nil {
				return err
			}
		}
		raw, err := v.SnapshotFile(tl.repoID, e.SnapshotID)
		if errors.Is(err, gitstore.ErrNotExist) {
			raw, err = nil, nil
		}
		if err != nil {
			return err
		}
		if verified {
			if reason, detail := chain.CheckTimelineEntry(e, raw, tl.dev, tl.keys[tl.dev], chain.KeySigner(tl.keys)); reason != "" {
				verified = false
				if err := m.quarantine(w, tl.repoID, tl.dev, e.SnapshotID, reason, detail); err != nil {
					return err
				}
			}
		}
		if err := w.AddSnapshot(SnapshotRow{RepoID: tl.repoID, Device: tl.dev, Seq: i, Entry: e, Verified: verified}); err != nil {
			return err
		}
	}
	return nil
}

// chainJob is one device's chain to index: what the cache holds of it
// already (indexChain does the rest).
type chainJob struct {
	repoID, dev  string
	tree         chain.Tree // the branch, as VerifyNew reads it
	preverified  map[string]Preverified
	count        int // records cached already
	lastHash     string
	lastVerified bool
}

// errStopped stops a chain's verification when writing a record failed
// (the write error is what the refresh returns).
var errStopped = errors.New("indexing stopped")

// chainAhead is how many verified records of one chain may wait for the
// writer; chainsAtOnce how many chains are verified at once (the one being
// written and the next).
const (
	chainAhead   = 1024
	chainsAtOnce = 2
)

// chainRun is one chain job under way: its verifier hands the records
// that verified to the writer through rows, in chain order, and closes it
// after setting res and err (VerifyNew's result).
type chainRun struct {
	job  *chainJob
	rows chan verifiedRow
	res  chain.IncrementResult
	err  error
}

// verifiedRow is one record that verified, at seq of its chain.
type verifiedRow struct {
	seq  int
	cp   *checkpoint.Checkpoint
	rule checkpoint.Rule
}

// runChainJobs indexes the jobs' chains, their rows written in the jobs'
// order and each chain's in chain order, as a sequential indexing would
// write them (the same rowids, links, quarantine rows and notices). The
// writing (SQLite, on the caller's goroutine) and the verification run at
// the same time: each chain is verified on a goroutine of its own
// (chain.VerifyNew, whose look-ahead checks the records on GOMAXPROCS
// workers) that hands its records to the writer through a bounded channel,
// and the next chain's verification starts while the current one is being
// written. At most chainsAtOnce chains are under way, each holding at most
// chainAhead rows beside VerifyNew's look-ahead, however long the chains.
func (m *Mirror) runChainJobs(ctx context.Context, w *Writer, v *gitstore.View, jobs []*chainJob) error {
	if len(jobs) == 0 {
		return nil
	}
	stop := make(chan struct{})
	slots := make(chan struct{}, chainsAtOnce)
	runs := make([]*chainRun, len(jobs))
	for i, j := range jobs {
		runs[i] = &chainRun{job: j, rows: make(chan verifiedRow, chainAhead)}
	}
	var wg sync.WaitGroup
	// On any return, stop the verifiers (a send to rows gives up) and wait
	// for them: nothing reads the view or the rows after this returns.
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, r := range runs {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.verifyChain(ctx, v, r, stop)
			}()
		}
	}()
	for _, r := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.writeChain(w, r); err != nil {
			return err
		}
		<-slots
	}
	return nil
}

// verifyChain reads the chain of r's job from the last cached entry on
// and verifies the new records, handing each one that verified to r.rows
// until stop is closed.
func (m *Mirror) verifyChain(ctx context.Context, v *gitstore.View, r *chainRun, stop <-chan struct{}) {
	j := r.job
	if m.settled != nil {
		pre, err := m.settled(ctx, j.repoID, j.dev)
		if err != nil {
			r.err = fmt.Errorf("%w: %v", errNotSettled, err)
			close(r.rows)
			return
		}
		j.preverified = pre
	}
	pre, known := preverifiedFuncs(v, j)
	r.res, r.err = chain.VerifyNew(j.tree, chain.Increment{
		Repo: j.repoID, Device: j.dev, Have: j.count, LastHash: j.lastHash, Preverified: pre, Known: known,
		SessionRoots: v.Layout.SessionRoots(),
		Verified: func(i int, cp *checkpoint.Checkpoint, rule checkpoint.Rule) error {
			select {
			case r.rows <- verifiedRow{seq: i, cp: cp, rule: rule}:
				return nil
			case <-stop:
				return errStopped
			}
		},
	})
	close(r.rows)
}

// writeChain writes the rows of r as they verify; once its verification is
// over, the failing record and every later one whose file can still be
// read are kept as unverified rows, and the failure quarantined.
func (m *Mirror) writeChain(w *Writer, r *chainRun) error {
	j := r.job
	for row := range r.rows {
		if err := m.addRow(w, Row{CP: row.cp, RepoID: j.repoID, Seq: row.seq, Verified: j.lastVerified, Rule: row.rule}); err != nil {
			return err
		}
	}
	res := r.res
	switch {
	case errors.Is(r.err, errNotSettled):
		return r.err
	case r.err != nil: // *chain.DivergedError: the history was rewritten
		return fmt.Errorf("%w: %v", errRewritten, r.err)
	case res.Unreadable != "":
		return m.quarantine(w, j.repoID, j.dev, "", chain.Malformed, res.Unreadable)
	}
	for _, u := range res.After {
		if err := m.addRow(w, Row{CP: u.CP, RepoID: j.repoID, Seq: u.Seq, Verified: false, Rule: u.Rule}); err != nil {
			return err
		}
	}
	if f := res.Failure; f != nil {
		return m.quarantine(w, j.repoID, j.dev, f.Hash, f.Reason, f.Detail)
	}
	return nil
}

// walkedTree is the chain.Tree of a view for a rebuild: a record's file is
// its blob read by id from a listing of its fan-out directory, where
// View.CheckpointFile resolves the record's path from the root again. At
// 100k records with two fan-out levels the store's tree cache cannot keep
// the 65,536 leaf trees, so resolving every path read them again and again
// (~20% of a reindex's CPU); listed here, each directory is read once, by
// whichever verifier first needs it (no walk before verification starts).
// Only files at the path the layout prescribes for their name are listed
// (what CheckpointFile reads); a hash not listed, or a blob that cannot be
// read, goes the view's way, which gives the same answer and error.
type walkedTree struct {
	chain.Tree
	v    *gitstore.View
	repo string
	mu   sync.Mutex
	dirs map[string]*walkedDir // by the record's top fan-out directory
}

// walkedDir is one top fan-out directory's checkpoint files, listed once.
type walkedDir struct {
	once  sync.Once
	blobs map[[32]byte]plumbing.Hash
}

func newWalkedTree(v *gitstore.View, repoID string) *walkedTree {
	return &walkedTree{Tree: v.ChainTree(), v: v, repo: repoID, dirs: map[string]*walkedDir{}}
}

// CheckpointFile reads the blob listed for hash, else asks the view.
func (t *walkedTree) CheckpointFile(repo, hash string) ([]byte, error) {
	if k, ok := hashKey(hash); ok && repo == t.repo {
		if b, ok := t.dir(hash).blobs[k]; ok && !b.IsZero() {
			if raw, err := t.v.ReadBlob(b, checkpoint.MaxFileSize); err == nil {
				return raw, nil
			}
		}
	}
	return t.Tree.CheckpointFile(repo, hash)
}

// dir returns the listing of the top fan-out directory of hash (a
// checkpoint hash), listing it first if no one has.
func (t *walkedTree) dir(hash string) *walkedDir {
	key := ""
	if t.v.Fanout > 0 {
		key = hash[:2]
	}
	t.mu.Lock()
	d := t.dirs[key]
	if d == nil {
		d = &walkedDir{}
		t.dirs[key] = d
	}
	t.mu.Unlock()
	d.once.Do(func() {
		// The directory holding the record's path below checkpoints/
		// (the path without its last max(fanout, 1) elements).
		top := t.v.CheckpointPath(t.repo, hash)
		for i := 0; i < max(t.v.Fanout, 1); i++ {
			top = path.Dir(top)
		}
		d.blobs = map[[32]byte]plumbing.Hash{}
		t.list(d, top, max(t.v.Fanout, 1)-1)
	})
	return d
}

// list adds to d the checkpoint files under dir, depth directory levels
// above the files (an unreadable directory adds nothing: its records go
// the view's way).
func (t *walkedTree) list(d *walkedDir, dir string, depth int) {
	es, err := t.v.List(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		full := dir + "/" + e.Name
		if depth > 0 {
			if e.Mode == filemode.Dir {
				t.list(d, full, depth-1)
			}
			continue
		}
		h, ok := strings.CutSuffix(e.Name, ".json")
		if k, isHash := hashKey(h); ok && isHash && e.Mode == filemode.Regular && t.v.CheckpointPath(t.repo, h) == full {
			if _, twice := d.blobs[k]; twice {
				// A tree naming one file twice (hand-made): which entry
				// counts is the view's decision, so none is listed.
				d.blobs[k] = plumbing.ZeroHash
				continue
			}
			d.blobs[k] = e.Hash
		}
	}
}

// hashKey is a checkpoint hash (64 lowercase hex digits) as 32 bytes.
func hashKey(h string) (k [32]byte, ok bool) {
	if !checkpoint.IsHexHash(h) {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(h))
	return k, err == nil
}

// preverifiedFuncs returns chain's Preverified and Known for the chain of
// j in v (nil, nil when nothing was preverified): a record counts only
// when it was verified under the key the device has in v and v holds the
// blob it was verified on at its path (safe for concurrent use).
func preverifiedFuncs(v *gitstore.View, j *chainJob) (func(string) bool, func(string) (*checkpoint.Checkpoint, checkpoint.Rule, bool)) {
	p := j.preverified
	if len(p) == 0 {
		return nil, nil
	}
	key, _, err := v.DeviceKey(j.dev)
	if err != nil {
		return nil, nil
	}
	get := func(h string) (Preverified, bool) {
		r, ok := p[h]
		if !ok || !key.Equal(r.Key) {
			return Preverified{}, false
		}
		b, err := v.BlobHash(v.CheckpointPath(j.repoID, h))
		return r, err == nil && b == r.Blob
	}
	pre := func(h string) bool { _, ok := get(h); return ok }
	known := func(h string) (*checkpoint.Checkpoint, checkpoint.Rule, bool) {
		r, ok := get(h)
		if !ok || r.CP == nil {
			return nil, "", false
		}
		return r.CP, r.Rule, true
	}
	return pre, known
}

// addRow writes one record's row and counts it for Progress.
func (m *Mirror) addRow(w *Writer, r Row) error {
	if err := w.AddCheckpoint(r); err != nil {
		return err
	}
	m.indexed++
	if m.Progress != nil && m.indexed%500 == 0 {
		m.Progress(m.indexed)
	}
	return nil
}

func (m *Mirror) quarantine(w *Writer, repoID, dev, record string, reason chain.Reason, detail string) error {
	hint := ""
	if dev != "" && m.OwnDevice != nil && m.OwnChainHint != nil && dev == m.OwnDevice() {
		hint = "; " + m.OwnChainHint()
	}
	m.notice("device %s: checkpoint %s failed verification (%s): it is not trusted; see 'git ctx log --unverified'%s", dev, short(record), reason, hint)
	return w.AddQuarantine(Quarantined{Ref: gitstore.BranchRef, RepoID: repoID, Device: dev, Record: record, Reason: string(reason), Detail: detail})
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(chain)"
	}
	return h
}
