package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/rand/v2"

	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

// Author is who commits on the memory branch (the user's git identity).
type Author struct{ Name, Email string }

func (a Author) signature(now time.Time) object.Signature {
	name, email := identClean(a.Name), identClean(a.Email)
	if name == "" {
		name = "git-ctx"
	}
	if email == "" {
		email = "git-ctx@localhost"
	}
	return object.Signature{Name: name, Email: email, When: now}
}

// identClean drops from a user.name or user.email what would break the
// commit header (git's fsck: badName, badEmail, and a newline would start
// a header line of its own): control characters, "<" and ">", as git does
// when it makes an ident; then surrounding spaces.
func identClean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// Device is the writing device: its id and private key.
type Device struct {
	ID  string
	Key ed25519.PrivateKey
}

func (d Device) public() ed25519.PublicKey { return d.Key.Public().(ed25519.PublicKey) }

// InitOptions configures Init.
type InitOptions struct {
	Layout Layout // "" = DefaultLayout (ignored when the branch exists)
	// Fanout is a new ctx-v1 branch's depth (FanoutOne or FanoutTwo; 0 =
	// DefaultFanout); ignored for ghyll-v1 and when the branch exists.
	Fanout int
	Device Device
	Author Author
	// RepoID, when set, is written to the REPO file of a new branch:
	// every clone then reads the id from there. (A clone that fetched a
	// memory branch starts from its verified merge, sync.AdoptFetched,
	// never from this.)
	RepoID string
}

// InitResult says what Init did.
type InitResult struct {
	Created   bool // the branch was created (a new root)
	Published bool // this device's key was added
	Layout    Layout
	Fanout    int // the branch's depth (View.Fanout)
	Tip       plumbing.Hash
}

// maxCASRetries bounds retries when plain git moves the ref under us.
const maxCASRetries = 20

// Init creates the branch when missing and publishes this device's key.
// Running it again is harmless. A branch that holds another key under this
// device id is refused with ErrKeyConflict.
func (s *Store) Init(ctx context.Context, opt InitOptions) (InitResult, error) {
	return lockedRetry(ctx, s, func() (InitResult, error) { return s.initOnce(ctx, opt) })
}

// lockedRetry runs once under the git-ctx lock, and again (re-reading the
// tip each time) while plain git keeps moving the ref in between.
func lockedRetry[T any](ctx context.Context, s *Store, once func() (T, error)) (T, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer unlock()
	for attempt := 0; ; attempt++ {
		res, err := once()
		if err == nil {
			s.afterWrite(ctx)
		}
		if !errors.Is(err, ErrBranchMoved) || attempt >= maxCASRetries {
			return res, err
		}
		backoff(ctx, attempt)
	}
}

// branchEdit is one attempt at a commit on top of the branch tip, made
// under the git-ctx lock: the view of the tip it reads and the files it
// writes.
type branchEdit struct {
	s     *Store
	tip   plumbing.Hash
	v     *View
	files map[string][]byte // path on the branch -> content
}

// lockedEdit runs edit on the current tip of an existing branch under the
// git-ctx lock, and again on the new tip while plain git keeps moving the
// ref in between (lockedRetry). Every write to the branch but Init goes
// through it. A branch that does not exist is ErrNotInitialized.
func lockedEdit[T any](ctx context.Context, s *Store, edit func(e *branchEdit) (T, error)) (T, error) {
	return lockedRetry(ctx, s, func() (T, error) {
		e, err := s.beginEdit()
		if err != nil {
			var zero T
			return zero, err
		}
		return edit(e)
	})
}

// beginEdit reads the tip and its view (ErrNotInitialized without a branch).
func (s *Store) beginEdit() (*branchEdit, error) {
	v, err := s.View()
	if err != nil {
		return nil, err
	}
	return newEdit(v), nil
}

func (s *Store) editAt(tip plumbing.Hash) (*branchEdit, error) {
	v, err := s.ViewAt(tip)
	if err != nil {
		return nil, err
	}
	return newEdit(v), nil
}

// newEdit starts an edit on top of v's commit.
func newEdit(v *View) *branchEdit {
	return &branchEdit{s: v.s, tip: v.Commit, v: v, files: map[string][]byte{}}
}

// publishKey adds dev's public key to the files unless the branch holds it;
// a different key under dev's id is ErrKeyConflict (needsKey).
func (e *branchEdit) publishKey(dev Device) (bool, error) {
	publish, err := needsKey(e.v, dev)
	if err == nil && publish {
		e.files[DeviceKeyPath(dev.ID)] = checkpoint.EncodePublicKey(dev.public())
	}
	return publish, err
}

// commit writes the files into the tip's tree, commits that tree on the
// tip as author at now with msg, and moves the branch from the tip
// (ErrBranchMoved when it moved meanwhile); reason is the reflog message.
func (e *branchEdit) commit(ctx context.Context, author Author, now time.Time, msg, reason string) (plumbing.Hash, error) {
	tree, err := e.s.treeWith(e.v.Root, e.files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c, err := e.s.writeCommit(tree, []plumbing.Hash{e.tip}, author.signature(now), msg)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := e.s.casRef(ctx, e.tip, c, reason); err != nil {
		return plumbing.ZeroHash, err
	}
	return c, nil
}

func (s *Store) initOnce(ctx context.Context, opt InitOptions) (InitResult, error) {
	res := InitResult{}
	tip, err := s.Tip()
	if err != nil {
		return res, err
	}
	now := time.Now()
	if tip.IsZero() {
		layout := opt.Layout
		if layout == "" {
			layout = DefaultLayout
		}
		fanout := layout.baseFanout()
		edits := map[string][]byte{DeviceKeyPath(opt.Device.ID): checkpoint.EncodePublicKey(opt.Device.public())}
		if layout == LayoutCtxV1 {
			fanout = opt.Fanout
			if fanout == 0 {
				fanout = DefaultFanout
			}
			if fanout != FanoutOne && fanout != FanoutTwo {
				return res, fmt.Errorf("%w: fan-out depth %d (want %d or %d)", ErrLayoutUnknown, fanout, FanoutOne, FanoutTwo)
			}
			edits[LayoutFile] = LayoutFileContent(layout, fanout)
		}
		if opt.RepoID != "" {
			edits[RepoFile] = (&RepoIDs{ID: opt.RepoID}).Marshal()
		}
		tree, err := s.treeWith(plumbing.ZeroHash, edits)
		if err != nil {
			return res, err
		}
		msg := fmt.Sprintf("ctx: init memory branch (%s) by %s\n", LayoutName(layout, fanout), opt.Device.ID)
		c, err := s.writeCommit(tree, nil, opt.Author.signature(now), msg)
		if err != nil {
			return res, err
		}
		if err := s.casRef(ctx, plumbing.ZeroHash, c, "ctx: init"); err != nil {
			return res, err
		}
		return InitResult{Created: true, Published: true, Layout: layout, Fanout: fanout, Tip: c}, nil
	}
	e, err := s.editAt(tip)
	if err != nil {
		return res, err
	}
	res.Layout, res.Fanout, res.Tip = e.v.Layout, e.v.Fanout, tip
	publish, err := e.publishKey(opt.Device)
	if err != nil || !publish {
		return res, err
	}
	c, err := e.commit(ctx, opt.Author, now, fmt.Sprintf("ctx: add device %s\n", opt.Device.ID), "ctx: add device")
	if err != nil {
		return res, err
	}
	res.Published, res.Tip = true, c
	return res, nil
}

// needsKey reports whether d's key must be added to v; it fails when the
// branch holds a different key (or garbage) under d's id.
func needsKey(v *View, d Device) (bool, error) {
	pub, _, err := v.DeviceKey(d.ID)
	switch {
	case errors.Is(err, ErrNotExist):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("%w: %s: %v", ErrKeyConflict, DeviceKeyPath(d.ID), err)
	case !pub.Equal(d.public()):
		return false, fmt.Errorf("%w: %s holds key %s, this machine has %s; pick another id with 'git config ctx.device NEW-ID'",
			ErrKeyConflict, DeviceKeyPath(d.ID), checkpoint.Fingerprint(pub), checkpoint.Fingerprint(d.public()))
	}
	return false, nil
}

// treeWith writes the blobs in files and returns base edited to hold them.
func (s *Store) treeWith(base plumbing.Hash, files map[string][]byte) (plumbing.Hash, error) {
	edits := make(map[string]plumbing.Hash, len(files))
	for p, data := range files {
		h, err := s.writeBlob(data)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write %s: %w", p, err)
		}
		edits[p] = h
	}
	return s.editTree(base, edits)
}

// Draft is a checkpoint to append. Parent, hash, signature, device and
// version are filled in by Append; a zero Timestamp means now.
type Draft = checkpoint.Checkpoint

// AppendRequest asks for one or more checkpoints on one device's chain.
type AppendRequest struct {
	RepoID string
	Device Device
	Author Author
	Drafts []Draft
	// Prepare, if set, runs under the lock for each draft, after its parent
	// is known: prev is the device's previous checkpoint in this repository
	// (nil for the first), and lookup reads any earlier checkpoint of the
	// branch by hash (to walk back along the chain). It may set fields such
	// as Turn.
	Prepare func(d *Draft, prev *checkpoint.Checkpoint, lookup func(hash string) (*checkpoint.Checkpoint, error)) error
	// KeepTimestamps writes each draft's Timestamp even when it is not after
	// the previous record's (imports of older records); by default a
	// timestamp that does not move forward is raised to previous+1.
	KeepTimestamps bool
	// FixRepoID writes RepoID to the REPO file when the branch has none and
	// holds no other repository's directory (a branch created before the id
	// could be derived, or by an older git-ctx).
	FixRepoID bool
}

// AppendResult is what one Append wrote.
type AppendResult struct {
	Checkpoints []*checkpoint.Checkpoint
	Commit      plumbing.Hash
}

// Append seals the drafts onto the device's chain in one commit. It holds
// the git-ctx lock, re-reads the tip on every attempt, and retries when plain
// git moved the ref in between.
func (s *Store) Append(ctx context.Context, req AppendRequest) (*AppendResult, error) {
	if len(req.Drafts) == 0 {
		return nil, errors.New("nothing to append")
	}
	return lockedEdit(ctx, s, func(e *branchEdit) (*AppendResult, error) { return e.append(ctx, req) })
}

// append seals the drafts onto the device's chain, after its last
// checkpoint, and commits them with the chain lines, the device's key and a
// REPO file when missing (FixRepoID).
func (e *branchEdit) append(ctx context.Context, req AppendRequest) (*AppendResult, error) {
	v, dev := e.v, req.Device
	if _, err := e.publishKey(dev); err != nil {
		return nil, err
	}
	if req.FixRepoID {
		fix, err := v.needsRepoFile(req.RepoID)
		if err != nil {
			return nil, err
		}
		if fix {
			e.files[RepoFile] = (&RepoIDs{ID: req.RepoID}).Marshal()
		}
	}
	seg, err := v.openSegment(req.RepoID, dev.ID)
	if err != nil {
		return nil, err
	}
	var prev *checkpoint.Checkpoint
	if seg.last != nil {
		if prev, err = v.Checkpoint(req.RepoID, seg.last.Hash); err != nil {
			return nil, fmt.Errorf("%w: last checkpoint %s of %s: %v", ErrCorrupt, seg.last.Hash[:12], dev.ID, err)
		}
	}
	now := time.Now()
	res := &AppendResult{}
	for _, d := range req.Drafts {
		cp, body, err := e.seal(req, d, prev, now, res.Checkpoints)
		if err != nil {
			return nil, err
		}
		e.files[v.CheckpointPath(req.RepoID, cp.Hash)] = body
		seg.add(cp.Entry())
		res.Checkpoints = append(res.Checkpoints, cp)
		prev = cp
	}
	for p, data := range seg.files() {
		e.files[p] = data
	}
	res.Commit, err = e.commit(ctx, req.Author, now, commitMessage(res.Checkpoints, dev.ID), "ctx: checkpoint")
	if err != nil {
		return nil, err
	}
	return res, nil
}

// seal fills in and seals one draft (a copy: a retry starts from the
// caller's draft) as the successor of prev, under the branch layout's rule
// (Layout.Rule), and returns it with the exact bytes to store, checked by
// reading them back (selfCheck). sealed are the records of this append so
// far, which Prepare's lookup also finds.
func (e *branchEdit) seal(req AppendRequest, cp Draft, prev *checkpoint.Checkpoint, now time.Time, sealed []*checkpoint.Checkpoint) (*checkpoint.Checkpoint, []byte, error) {
	dev, rule := req.Device, e.v.Layout.Rule()
	cp.Version, cp.DeviceID, cp.Hash, cp.Signature = rule.Version(), dev.ID, "", ""
	cp.ParentHash = checkpoint.ZeroHash
	if cp.Timestamp == 0 {
		cp.Timestamp = now.UnixNano()
	}
	if prev != nil {
		cp.ParentHash = prev.Hash
		if cp.Timestamp <= prev.Timestamp && !req.KeepTimestamps {
			cp.Timestamp = prev.Timestamp + 1 // keep ts increasing along the chain
		}
	}
	if req.Prepare != nil {
		lookup := func(hash string) (*checkpoint.Checkpoint, error) {
			for _, c := range sealed {
				if c.Hash == hash {
					return c, nil
				}
			}
			return e.v.Checkpoint(req.RepoID, hash)
		}
		if err := req.Prepare(&cp, prev, lookup); err != nil {
			return nil, nil, err
		}
	}
	if err := cp.SealRule(dev.Key, rule); err != nil {
		return nil, nil, fmt.Errorf("seal checkpoint: %w", err)
	}
	body, err := cp.MarshalFile()
	if err != nil {
		return nil, nil, err
	}
	if len(body) > checkpoint.MaxFileSize {
		return nil, nil, fmt.Errorf("%w: checkpoint is %d bytes (limit %d)", checkpoint.ErrTooLarge, len(body), checkpoint.MaxFileSize)
	}
	if err := selfCheck(body, &cp, dev.public(), rule); err != nil {
		return nil, nil, err
	}
	return &cp, body, nil
}

// selfCheck re-reads a sealed record from the exact bytes about to be
// written and verifies it as any reader would: a record that would fail its
// own hash or signature is refused (nothing is written) instead of poisoning
// the device's chain.
func selfCheck(body []byte, want *checkpoint.Checkpoint, pub ed25519.PublicKey, rule checkpoint.Rule) error {
	back, err := checkpoint.Parse(body)
	if err == nil {
		if back.Hash != want.Hash || back.Signature != want.Signature {
			err = errors.New("hash or signature changed on re-reading")
		} else if got, verr := back.Verify(pub); verr != nil {
			err = verr
		} else if got != rule {
			err = fmt.Errorf("matched rule %s, want %s", got, rule)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: the record does not verify when read back from its own bytes (%v); nothing was written", checkpoint.ErrUnencodable, err)
	}
	return nil
}

// segmentWriter tracks the chain file(s) an append rewrites.
type segmentWriter struct {
	layout         Layout
	repoID, device string
	index          int    // current segment number (ctx-v1)
	data           []byte // current segment (ctx-v1) or whole chain (ghyll-v1)
	lines          int
	dirty          map[string][]byte
	last           *checkpoint.ChainEntry
}

// openSegment loads the file a new chain line goes into and the chain's
// last entry. Only the last segment is read.
func (v *View) openSegment(repoID, device string) (*segmentWriter, error) {
	w := &segmentWriter{layout: v.Layout, repoID: repoID, device: device, dirty: map[string][]byte{}}
	var err error
	if v.Layout == LayoutGhyllV1 {
		w.data, err = v.ReadFile(ChainPath(repoID, device), MaxBlob)
		if errors.Is(err, ErrNotExist) {
			err = nil
		}
	} else {
		var segs []plumbing.Hash
		segs, err = v.segments(repoID, device)
		if err == nil && len(segs) > 0 {
			w.index = len(segs) - 1
			w.data, err = v.s.readBlob(segs[w.index], MaxBlob)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(w.data) > 0 {
		if w.data[len(w.data)-1] != '\n' {
			return nil, fmt.Errorf("%w: chain of %s does not end in a newline: run 'git ctx verify'", ErrCorrupt, device)
		}
		e, err := checkpoint.ParseChainLine(lastLine(w.data))
		if err != nil {
			return nil, fmt.Errorf("%w: last chain line of %s: %v: run 'git ctx verify'", ErrCorrupt, device, err)
		}
		w.last = &e
		w.lines = bytes.Count(w.data, []byte{'\n'})
	}
	return w, nil
}

func (w *segmentWriter) path() string {
	if w.layout == LayoutGhyllV1 {
		return ChainPath(w.repoID, w.device)
	}
	return SegmentPath(w.repoID, w.device, w.index)
}

func (w *segmentWriter) add(e checkpoint.ChainEntry) {
	if w.layout == LayoutCtxV1 && w.lines >= SegmentLines {
		w.index++
		w.data, w.lines = nil, 0
	}
	w.data = append(append([]byte(nil), w.data...), e.MarshalLine()...)
	w.lines++
	w.dirty[w.path()] = w.data
	w.last = &e
}

func (w *segmentWriter) files() map[string][]byte { return w.dirty }

// commitMessage: "ctx: checkpoint <hash12> by <device> (turn N): <summary>".
func commitMessage(cps []*checkpoint.Checkpoint, device string) string {
	var b strings.Builder
	if len(cps) == 1 {
		cp := cps[0]
		fmt.Fprintf(&b, "ctx: checkpoint %s by %s (turn %d): %s\n\n", cp.Hash[:12], device, cp.Turn, oneLine(cp.Summary, 72))
	} else {
		fmt.Fprintf(&b, "ctx: %d checkpoints by %s\n\n", len(cps), device)
	}
	for _, cp := range cps {
		fmt.Fprintf(&b, "Checkpoint: %s\n", cp.Hash)
	}
	return b.String()
}

// oneLine returns the first line of s cut to max runes, with what a
// terminal would act on escaped (termtext.Line).
func oneLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return termtext.Line(s)
}

func backoff(ctx context.Context, attempt int) {
	d := time.Duration(1+rand.IntN(5*(attempt+1))) * time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
