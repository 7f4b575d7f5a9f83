// Package memory is what git-ctx commands act on: one repository, its memory
// branch and this device's identity, plus the operations that combine them
// (initialise, record a checkpoint, read the log, find a record, verify).
// The CLI and the hooks call it; it holds no terminal I/O.
package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/identity"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// ErrInput marks input refused for safety (too large, not encodable).
var ErrInput = fault.Sentinel(fault.Refused, "input refused")

// ErrNotFound means no record matched.
var ErrNotFound = fault.Sentinel(fault.Failed, "not found")

// ErrLayoutMismatch means --layout asked for a layout the existing branch does not use.
var ErrLayoutMismatch = fault.Sentinel(fault.Usage, "layout mismatch")

// ErrOutputExists means a file to write already exists and replacing it was
// not asked for.
var ErrOutputExists = fault.Sentinel(fault.Refused, "output file exists")

// ErrAmbiguous means a prefix matched several records.
var ErrAmbiguous = fault.Sentinel(fault.Usage, "ambiguous")

// Memory is one repository's memory as seen from one directory.
type Memory struct {
	// Notice, when set, receives one-line notices (e.g. a cache rebuild).
	Notice func(string)
	// Progress, when set, is told how many records an index or rebuild has
	// processed so far, and -1 when it is over.
	Progress func(done int)
	// Preverified names checkpoints whose hash and signature were just
	// verified on the same bytes (by a pull); indexing skips re-signing them.
	Preverified map[string]bool
	Repo        *gitrepo.Repo
	Store       *gitstore.Store
	repoID      string
	ident       *identity.Identity
	ownID       string // OwnDeviceID, once read
	ownIDRead   bool
	indexed     int // records indexed by this process (for Progress)
	// cacheUnwritable: the cache directory could not be written; this
	// process builds temporary caches.
	cacheUnwritable bool
	// branchID caches BranchRepoID for the tip it was read at.
	branchID struct{ tip, id string }
}

// Open finds the repository containing dir.
func Open(ctx context.Context, dir string) (*Memory, error) {
	r, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	st, err := gitstore.Open(r)
	if err != nil {
		return nil, err
	}
	return &Memory{Repo: r, Store: st}, nil
}

// Identity loads (creating on first use) this device's identity, honouring
// git config ctx.device.
func (m *Memory) Identity() (*identity.Identity, error) {
	if m.ident != nil {
		return m.ident, nil
	}
	home, err := identity.Home()
	if err != nil {
		return nil, err
	}
	id, err := identity.Load(home, strings.TrimSpace(m.Repo.Config("ctx.device")))
	if err != nil {
		return nil, err
	}
	m.ident = id
	return id, nil
}

// RepoID names this repository on the branch: the id the branch's REPO
// file fixes, read by every clone; without one (no branch yet, or a branch
// of an older git-ctx or of ghyll) the id this clone derives
// (DerivedRepoID).
func (m *Memory) RepoID(ctx context.Context) (string, error) {
	if _, err := m.Repo.RepoIDOverride(); err != nil {
		return "", err // a bad ctx.repoId is refused even where the branch's id wins
	}
	if id, err := m.BranchRepoID(); err != nil || id != "" {
		return id, err
	}
	return m.DerivedRepoID(ctx)
}

// BranchRepoID is the id fixed by the branch's REPO file, "" when there is
// no branch or no such file.
func (m *Memory) BranchRepoID() (string, error) {
	tip, err := m.Store.Tip()
	if err != nil || tip.IsZero() {
		return "", err
	}
	if m.branchID.tip == tip.String() {
		return m.branchID.id, nil
	}
	v, err := m.Store.ViewAt(tip)
	if err != nil {
		return "", err
	}
	id := ""
	ids, err := v.RepoIDs()
	switch {
	case err == nil:
		id = ids.ID
	case !errors.Is(err, gitstore.ErrNotExist):
		return "", err
	}
	m.branchID.tip, m.branchID.id = tip.String(), id
	return id, nil
}

// DerivedRepoID is the id this clone computes from its configuration
// (gitrepo.Repo.RepoID: ctx.repoId, the memory remote's URL, the root
// commit). It names a new branch; an existing branch's REPO file wins.
func (m *Memory) DerivedRepoID(ctx context.Context) (string, error) {
	if m.repoID == "" {
		id, err := m.Repo.RepoID(ctx)
		if err != nil {
			return "", err
		}
		m.repoID = id
	}
	return m.repoID, nil
}

// RepoField is what a new record of repository repoID carries in its
// signed repo field: the memory remote's normalised URL when repoID is
// derived from it (SHA-256), else repoID itself, so that the field always
// binds to the record's directory (chain.BindsTo).
func (m *Memory) RepoField(repoID string) string {
	if u := m.Repo.RemoteURL(); u != "" && gitrepo.HashID(u) == repoID {
		return u
	}
	return repoID
}

func (m *Memory) author() gitstore.Author {
	name, email := m.Repo.Identity()
	return gitstore.Author{Name: name, Email: email}
}

func (m *Memory) device() (gitstore.Device, error) {
	id, err := m.Identity()
	if err != nil {
		return gitstore.Device{}, err
	}
	return gitstore.Device{ID: id.DeviceID, Key: id.Private}, nil
}

// Init creates the memory branch if needed (from the memory remote's
// fetched branch when there is one) and publishes this device's key.
func (m *Memory) Init(ctx context.Context, layout gitstore.Layout) (gitstore.InitResult, error) {
	dev, err := m.device()
	if err != nil {
		return gitstore.InitResult{}, err
	}
	// A new branch gets the id this clone derives, fixed in its REPO file.
	// A new repository without commits or a remote has none yet: it is
	// fixed at its first checkpoint (its root commit then exists).
	opt := gitstore.InitOptions{Layout: layout, Device: dev, Author: m.author()}
	if id, err := m.DerivedRepoID(ctx); err == nil {
		opt.RepoID = id
	} else if !errors.Is(err, gitrepo.ErrNoRepoID) {
		return gitstore.InitResult{}, err
	}
	if remote := m.Repo.MemoryRemote(); remote != "" {
		if h, err := m.Store.ResolveRef("refs/remotes/" + remote + "/ghyll/memory"); err == nil {
			opt.Base = h
		}
	}
	res, err := m.Store.Init(ctx, opt)
	if err == nil && layout != "" && res.Layout != layout {
		return res, fmt.Errorf("%w: the memory branch already uses layout %s; --layout %s applies only to a new branch", ErrLayoutMismatch, res.Layout, layout)
	}
	return res, err
}

// Limits on what one checkpoint may hold; bigger input is refused (ErrInput).
const (
	MaxSummary   = 64 << 10
	MaxFiles     = 1000
	MaxPathLen   = 4096
	MaxTools     = 256
	MaxListItem  = 256
	MaxEmbedding = 16384
	// CommitFiles bounds the files taken from a commit; the summary says how
	// many were left out.
	CommitFiles = 200
	// CommitBody bounds the commit message body taken into a summary.
	CommitBody = 4096
)

// RecordInput is what a caller knows about a checkpoint.
type RecordInput struct {
	Summary    string
	FromCommit string // a revision: summary and files from that commit
	// Commit, when set, is used instead of reading FromCommit.
	Commit     *gitrepo.CommitInfo
	Session    string // "" = $GIT_CTX_SESSION, else git config ctx.session
	Turn       int    // 0 = next in this session on this device
	Model      string // "" = $GIT_CTX_MODEL, else git config ctx.model
	Files      []string
	Tools      []string
	Injections []string
	Embedding  []float32
	// NoRedact keeps secret-shaped text as it is. By default every string
	// is redacted before anything is cut, hashed, signed or written, and the
	// summary then says how many secrets of which kinds were removed.
	NoRedact bool
	// SummaryLimit cuts the summary (after redaction) to this many bytes,
	// "…" marking the cut; 0 means no cut beyond MaxSummary.
	SummaryLimit int
	// OncePerCommit skips the record (ErrAlreadyRecorded) when this device's
	// previous checkpoint already recorded the same commit.
	OncePerCommit bool
}

// ErrAlreadyRecorded: the commit was already recorded (OncePerCommit).
var ErrAlreadyRecorded = fault.Sentinel(fault.Failed, "commit already recorded")

// commitTrailer is the summary line naming the recorded commit.
const commitTrailer = "Commit: "

// Record appends one checkpoint by this device and returns it.
func (m *Memory) Record(ctx context.Context, in RecordInput) (*checkpoint.Checkpoint, error) {
	ci := in.Commit
	if ci == nil && in.FromCommit != "" {
		var err error
		if ci, err = m.Repo.Commit(ctx, in.FromCommit, CommitFiles); err != nil {
			return nil, err
		}
	}
	// Secrets are removed from the whole text before anything is cut, so
	// that no secret survives as a prefix too short to be recognised.
	var tail []string
	limit := in.SummaryLimit
	if ci != nil {
		head := ci.Subject
		if ci.Body != "" {
			head += "\n\n" + ci.Body
		}
		if in.Summary != "" {
			head = in.Summary + "\n\n" + head
		}
		in.Summary = head
		if limit == 0 || limit > len(head)-len(ci.Body)+CommitBody {
			limit = len(head) - len(ci.Body) + CommitBody
		}
		if ci.FilesOmitted > 0 {
			tail = append(tail, fmt.Sprintf("(%d more changed files not listed)", ci.FilesOmitted))
		}
		tail = append(tail, commitTrailer+ci.Hash)
		in.Files = append(in.Files, ci.Files...)
	}
	in.Session = firstNonEmpty(in.Session, os.Getenv("GIT_CTX_SESSION"), m.Repo.Config("ctx.session"))
	in.Model = firstNonEmpty(in.Model, os.Getenv("GIT_CTX_MODEL"), m.Repo.Config("ctx.model"))
	// Text is made valid UTF-8 before it is redacted, cut, hashed or signed
	// (an argument or a file name may hold Latin-1 bytes): JSON cannot carry
	// invalid bytes, and a record hashed over them would never verify.
	in = validUTF8(in)
	if !in.NoRedact {
		var note string
		in, note = redactInput(in)
		if note != "" {
			tail = append(tail, note)
		}
	}
	if limit > 0 && len(in.Summary) > limit {
		in.Summary = strings.ToValidUTF8(in.Summary[:limit], "") + "…"
	}
	for _, t := range tail {
		in.Summary += "\n\n" + t
	}
	if err := checkInput(in); err != nil {
		return nil, err
	}
	dev, err := m.device()
	if err != nil {
		return nil, err
	}
	repoID, err := m.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	_, email := m.Repo.Identity()
	draft := gitstore.Draft{
		AuthorID: email, RepoRemote: m.RepoField(repoID), Branch: m.Repo.CurrentBranch(),
		SessionID: in.Session, Turn: in.Turn, ActiveModel: in.Model, Summary: in.Summary,
		Embedding: in.Embedding, FilesTouched: in.Files, ToolsUsed: in.Tools, InjectionSig: in.Injections,
	}
	res, err := m.Store.Append(ctx, gitstore.AppendRequest{
		RepoID: repoID, Device: dev, Author: m.author(), Drafts: []gitstore.Draft{draft}, FixRepoID: true,
		Prepare: func(d *gitstore.Draft, prev *checkpoint.Checkpoint, lookup func(string) (*checkpoint.Checkpoint, error)) error {
			if in.OncePerCommit && ci != nil && prev != nil && strings.Contains(prev.Summary, commitTrailer+ci.Hash) {
				return ErrAlreadyRecorded
			}
			if d.Turn == 0 {
				d.Turn = nextTurn(prev, d.SessionID, lookup)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return res.Checkpoints[0], nil
}

// turnWalk bounds how far back along this device's chain the last turn of
// a session is looked for (only when the previous record belongs to
// another session).
const turnWalk = 2048

// nextTurn is one more than the last turn of session on this device's
// chain, found by walking back from prev; 1 when the session is new.
func nextTurn(prev *checkpoint.Checkpoint, session string, lookup func(string) (*checkpoint.Checkpoint, error)) int {
	for i := 0; prev != nil && i < turnWalk; i++ {
		if prev.SessionID == session {
			return prev.Turn + 1
		}
		if prev.ParentHash == checkpoint.ZeroHash {
			break
		}
		p, err := lookup(prev.ParentHash)
		if err != nil {
			break
		}
		prev = p
	}
	return 1
}

// validUTF8 replaces each invalid UTF-8 byte in in's text with U+FFFD.
func validUTF8(in RecordInput) RecordInput {
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	in.Summary, in.Session, in.Model = valid(in.Summary), valid(in.Session), valid(in.Model)
	for _, l := range []*[]string{&in.Files, &in.Tools, &in.Injections} {
		if *l == nil {
			continue
		}
		c := make([]string, len(*l))
		for i, s := range *l {
			c[i] = valid(s)
		}
		*l = c
	}
	return in
}

func checkInput(in RecordInput) error {
	switch {
	case strings.TrimSpace(in.Summary) == "":
		return fmt.Errorf("%w: a checkpoint needs a summary (-m TEXT, --from-commit REV or --stdin)", ErrInput)
	case len(in.Summary) > MaxSummary:
		return fmt.Errorf("%w: summary is %d bytes (limit %d)", ErrInput, len(in.Summary), MaxSummary)
	case len(in.Files) > MaxFiles:
		return fmt.Errorf("%w: %d files (limit %d)", ErrInput, len(in.Files), MaxFiles)
	case len(in.Tools) > MaxTools || len(in.Injections) > MaxTools:
		return fmt.Errorf("%w: more than %d tools or injections", ErrInput, MaxTools)
	case len(in.Embedding) > MaxEmbedding:
		return fmt.Errorf("%w: embedding has %d dimensions (limit %d)", ErrInput, len(in.Embedding), MaxEmbedding)
	case in.Turn < 0:
		return fmt.Errorf("%w: turn must not be negative", ErrInput)
	}
	for _, f := range in.Files {
		if f == "" || len(f) > MaxPathLen {
			return fmt.Errorf("%w: empty or over-long file path", ErrInput)
		}
	}
	for _, l := range [][]string{in.Tools, in.Injections} {
		for _, t := range l {
			if t == "" || len(t) > MaxListItem {
				return fmt.Errorf("%w: empty or over-long tool or injection name", ErrInput)
			}
		}
	}
	for _, s := range []string{in.Session, in.Model} {
		if len(s) > MaxListItem {
			return fmt.Errorf("%w: session or model longer than %d bytes", ErrInput, MaxListItem)
		}
	}
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Verify checks the whole memory branch, including that every repository
// directory is this repository's id or an adopted one.
func (m *Memory) Verify(ctx context.Context) (*gitstore.Report, error) {
	v, err := m.Store.View()
	if err != nil {
		return nil, err
	}
	fallback, err := m.DerivedRepoID(ctx)
	if err != nil && !errors.Is(err, gitrepo.ErrNoRepoID) {
		return nil, err
	}
	return v.VerifyFor(fallback)
}
