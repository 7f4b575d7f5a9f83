package snapshots

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/serdejson"
	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/boundedfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/redact"
)

// sessionWalk bounds how many of this device's latest checkpoints are read
// to find the checkpoints of its latest session.
const sessionWalk = 512

// branchView returns the branch tip, refusing a ghyll-v1 branch.
func branchView(w *workspace.Workspace) (*gitstore.View, error) {
	v, err := w.Store.View()
	if err != nil {
		return nil, err
	}
	if v.Layout != gitstore.LayoutCtxV1 {
		return nil, gitstore.ErrSnapshotLayout
	}
	return v, nil
}

// gitLine runs git with a timeout and returns its trimmed output.
func gitLine(ctx context.Context, w *workspace.Workspace, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := gitexec.Git(ctx, w.Repo.Dir, args...)
	return strings.TrimSpace(string(out)), err
}

func strPtr(s string) *string { return &s }

// projectIdentity is lean-ctx's project identity "git:<origin URL>", the
// URL with a trailing ".git" stripped, "git@host:" turned into "host/", and
// lower-cased (§2.7); nil without an origin.
func projectIdentity(w *workspace.Workspace) *string {
	urls := w.Repo.ConfigAll("remote.origin.url")
	if len(urls) == 0 || strings.TrimSpace(urls[0]) == "" {
		return nil
	}
	u := strings.TrimSpace(urls[0])
	u = strings.TrimSuffix(u, ".git")
	if rest, ok := strings.CutPrefix(u, "git@"); ok {
		if host, p, ok := strings.Cut(rest, ":"); ok {
			u = host + "/" + p
		}
	}
	return strPtr("git:" + strings.ToLower(u))
}

// CreateOptions configures Create.
type CreateOptions struct {
	// Sign signs the snapshot with the device key (the CLI always signs).
	Sign bool
	// From supplies the fields git-ctx has no source for (snapshot create
	// --from FILE); it may be nil.
	From *snapshot.Snapshot
	// Producer fills lean_ctx_version (the CLI passes its version; ""
	// means "dev").
	Producer string
}

// Create builds a snapshot of this repository's state (reference
// §2.7, mapped onto git-ctx), stores it and appends it to this device's
// timeline. Fields git-ctx has no source for (roi, lineage, ledger, session,
// project, lean_ctx_version) are taken from opt.From when it supplies them
// (snapshot create --from FILE): its roi, lineage and ledger when non-zero,
// its session and project hashes when set. The anchor, created_at,
// parent_id, id and signature are always git-ctx's own.
//
// Sources: git anchor from `git rev-parse HEAD`, `git rev-parse
// --abbrev-ref HEAD` and `git status --porcelain` (5 s each); project
// root_hash = ProjectHash(work tree, identity), identity_hash = BLAKE3 of the
// identity; session = this device's latest checkpoint session in this
// repository (task = the latest checkpoint's first summary line, decisions =
// first summary lines of the session's checkpoints, files_touched = the union
// of their files; first 64 each); lineage = one "other" item per file of
// those checkpoints (tool = the checkpoint's tools joined with ",", or
// "checkpoint"; tokens 0, ratio 1.0), the last 128 kept, items_recorded =
// the count before the cut. ROI and ledger are zero.
//
// The snapshot is signed with the device key when opt.Sign is set; unsigned
// ones are stored too, but other clones refuse them on pull (a timeline
// entry must be signed by a device key), so the CLI always signs.
func Create(ctx context.Context, w *workspace.Workspace, opt CreateOptions) (*gitstore.SnapshotResult, error) {
	v, err := branchView(w)
	if err != nil {
		return nil, err
	}
	dev, repoID, err := w.DeviceRepo(ctx)
	if err != nil {
		return nil, err
	}
	producer := opt.Producer
	if producer == "" {
		producer = "dev"
	}
	sign, from := opt.Sign, opt.From
	base := snapshot.New(serdejson.FormatRFC3339(time.Now()), producer)
	if commit, err := gitLine(ctx, w, 5*time.Second, "rev-parse", "HEAD"); err == nil && commit != "" {
		base.Git.Commit = strPtr(commit)
	}
	if br, err := gitLine(ctx, w, 5*time.Second, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && br != "" {
		base.Git.Branch = strPtr(br)
	}
	if st, err := gitLine(ctx, w, 5*time.Second, "status", "--porcelain"); err == nil {
		base.Git.Dirty = st != ""
	}
	ident := projectIdentity(w)
	if root, err := w.Repo.WorkTree(ctx); err == nil && root != "" {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		base.Project.RootHash = strPtr(snapshot.ProjectHash(snapshot.NormalizeRoot(root), ident))
	}
	if ident != nil {
		base.Project.IdentityHash = strPtr(snapshot.Blake3Hex([]byte(*ident)))
	}
	if err := sessionSlice(w, v, repoID, dev.ID, base); err != nil {
		return nil, err
	}
	if from != nil {
		mergeFrom(base, from)
	}
	base.ApplyCaps()
	return w.Store.AppendSnapshot(ctx, gitstore.SnapshotRequest{
		RepoID: repoID, Device: dev, Author: w.Author(),
		Build: func(head *snapshot.TimelineEntry) (*snapshot.Snapshot, error) {
			s := *base
			s.ParentID, s.Signature = nil, nil
			if head != nil {
				s.ParentID = strPtr(head.SnapshotID)
			}
			if sign {
				return &s, s.Sign(dev.Key)
			}
			return &s, s.Finalize()
		},
	})
}

func mergeFrom(dst, from *snapshot.Snapshot) {
	if from.LeanCtxVersion != "" {
		dst.LeanCtxVersion = from.LeanCtxVersion
	}
	if from.ROI != (snapshot.ROI{}) {
		dst.ROI = from.ROI
	}
	if from.Lineage.ItemsRecorded != 0 || len(from.Lineage.Items) > 0 {
		dst.Lineage = from.Lineage
	}
	if from.Ledger.WindowSize != 0 || from.Ledger.TotalTokensSent != 0 || from.Ledger.TotalTokensSaved != 0 || len(from.Ledger.Items) > 0 {
		dst.Ledger = from.Ledger
	}
	if from.Session != nil {
		dst.Session = from.Session
	}
	if from.Project.RootHash != nil {
		dst.Project.RootHash = from.Project.RootHash
	}
	if from.Project.IdentityHash != nil {
		dst.Project.IdentityHash = from.Project.IdentityHash
	}
}

// sessionSlice fills the session and lineage of s from this device's latest
// checkpoint session in repoID (nothing when the device has no checkpoint).
func sessionSlice(w *workspace.Workspace, v *gitstore.View, repoID, device string, s *snapshot.Snapshot) error {
	entries, err := v.Chain(repoID, device)
	if err != nil && !errors.Is(err, gitstore.ErrNotExist) {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	var cps []*checkpoint.Checkpoint // newest first
	session := ""
	for i := len(entries) - 1; i >= 0 && len(entries)-i <= sessionWalk; i-- {
		cp, err := v.Checkpoint(repoID, entries[i].Hash)
		if err != nil {
			return fmt.Errorf("read checkpoint %s: %w", entries[i].Hash[:12], err)
		}
		if i == len(entries)-1 {
			session = cp.SessionID
		}
		if cp.SessionID == session {
			cps = append(cps, cp)
		}
	}
	first := func(text string) string {
		line, _, _ := strings.Cut(strings.TrimSpace(redact.String(text).Text), "\n")
		return strings.TrimSpace(line)
	}
	sess := &snapshot.Session{Task: strPtr(first(cps[0].Summary)), Decisions: []string{}, FilesTouched: []string{}}
	if session != "" {
		sess.SessionID = strPtr(redact.String(session).Text)
	}
	seen := map[string]bool{}
	var items []snapshot.LineageItem
	for i := len(cps) - 1; i >= 0; i-- { // oldest first
		cp := cps[i]
		sess.Decisions = append(sess.Decisions, first(cp.Summary))
		tools, _ := redact.Strings(cp.ToolsUsed)
		files, _ := redact.Strings(cp.FilesTouched)
		tool := strings.Join(tools, ",")
		if tool == "" {
			tool = "checkpoint"
		}
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				sess.FilesTouched = append(sess.FilesTouched, f)
			}
			items = append(items, snapshot.LineageItem{Kind: "other", Tool: tool, Path: strPtr(f), CompressionRatio: 1.0})
		}
	}
	for i := range items {
		items[i].Seq = uint64(i + 1)
	}
	s.Session = sess
	s.Lineage = snapshot.Lineage{ItemsRecorded: uint64(len(items)), Items: items}
	if s.Lineage.Items == nil {
		s.Lineage.Items = []snapshot.LineageItem{}
	}
	return nil // ApplyCaps keeps the head of the lists and the tail of lineage
}

// ListEntry is one timeline entry with the device whose timeline
// holds it.
type ListEntry struct {
	Device string
	snapshot.TimelineEntry
	// Verified is false when the entry or its snapshot failed verification
	// (see git ctx log --unverified).
	Verified bool
	// LineSigned is true when the device vouches for the entry with a
	// timeline line signature (its own line's, or a later line's whose
	// prev chains over it); false for a legacy unsigned line.
	LineSigned bool
}

// List returns the snapshots of this repository, newest first: every
// device's, or only this device's timeline (mine). Newest is by created_at
// (text order; git-ctx writes UTC RFC 3339), then by timeline position.
func List(ctx context.Context, w *workspace.Workspace, mine bool) ([]ListEntry, error) {
	if _, err := branchView(w); err != nil {
		return nil, err
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	device := ""
	if mine {
		id, err := w.Identity()
		if err != nil {
			return nil, err
		}
		device = id.DeviceID
	}
	db, err := w.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Snapshots(ctx, repoID, device)
	if err != nil {
		return nil, err
	}
	attested, err := attestedLines(w, repoID)
	if err != nil {
		return nil, err
	}
	out := make([]ListEntry, len(rows))
	for i, r := range rows {
		out[i] = ListEntry{Device: r.Device, TimelineEntry: r.Entry, Verified: r.Verified, LineSigned: r.Seq < attested[r.Device]}
	}
	return out, nil
}

// attestedLines returns, per device with a timeline in repoID, how many of
// its leading timeline lines the device vouches for by line signatures
// (chain.LineAuth.Attested), read from the branch tip.
func attestedLines(w *workspace.Workspace, repoID string) (map[string]int, error) {
	v, err := branchView(w)
	if err != nil {
		return nil, err
	}
	devices, err := v.TimelineDevices(repoID)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, d := range devices {
		lines, err := v.TimelineLines(repoID, d)
		if err != nil {
			continue // unreadable: nothing attested (the cache marks it unverified)
		}
		out[d] = lineAttested(v, repoID, d, lines)
	}
	return out, nil
}

// lineAttested is how many leading lines of device's timeline lines the
// device vouches for by line signatures (chain.CheckTimelineLines) under
// the key it published on the branch (none when it published none).
func lineAttested(v *gitstore.View, repoID, device string, lines []snapshot.TimelineLine) int {
	var key ed25519.PublicKey
	if pub, _, err := v.DeviceKey(device); err == nil {
		key = pub
	}
	return chain.CheckTimelineLines(repoID, device, lines, key).Attested
}

// Shown is one snapshot found by prefix.
type Shown struct {
	Snapshot *snapshot.Snapshot
	Raw      []byte   // the stored file
	Devices  []string // whose timelines name it
	// Unsigned lists the devices of Devices whose timeline names it on a
	// line no line signature of that device vouches for (legacy).
	Unsigned []string
}

// Show resolves prefix git-style over every timeline of this
// repository (the reference's errors, wrapping workspace.ErrNotFound/workspace.ErrAmbiguous) and
// reads the stored snapshot (no integrity check).
func Show(ctx context.Context, w *workspace.Workspace, prefix string) (*Shown, error) {
	v, err := branchView(w)
	if err != nil {
		return nil, err
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	devices, err := v.TimelineDevices(repoID)
	if err != nil {
		return nil, err
	}
	byID := map[string][]string{}
	unsigned := map[string][]string{}
	var ids []string
	for _, d := range devices {
		tl, err := v.TimelineLines(repoID, d)
		if err != nil {
			return nil, err
		}
		attested := lineAttested(v, repoID, d, tl)
		for i, l := range tl {
			id := l.Entry.SnapshotID
			if _, ok := byID[id]; !ok {
				ids = append(ids, id)
			}
			byID[id] = append(byID[id], d)
			if i >= attested {
				unsigned[id] = append(unsigned[id], d)
			}
		}
	}
	id, err := snapshot.ResolveID(prefix, ids)
	switch {
	case errors.Is(err, snapshot.ErrAmbiguous), errors.Is(err, snapshot.ErrEmptyPrefix):
		return nil, workspace.Tagged(err, workspace.ErrAmbiguous)
	case err != nil:
		return nil, workspace.Tagged(err, workspace.ErrNotFound)
	}
	s, raw, err := v.Snapshot(repoID, id)
	if err != nil {
		return nil, err
	}
	return &Shown{Snapshot: s, Raw: raw, Devices: byID[id], Unsigned: unsigned[id]}, nil
}

// Outcomes of Verify (the reference's verify messages).
const (
	OK       = "OK"
	Unsigned = "UNSIGNED"
	Failed   = "FAILED"
)

// Verify checks the stored snapshot named by prefix: OK (signature
// and integrity), UNSIGNED or FAILED; err for malformed signature material.
func Verify(ctx context.Context, w *workspace.Workspace, prefix string) (*snapshot.Snapshot, string, error) {
	sh, err := Show(ctx, w, prefix)
	if err != nil {
		return nil, "", err
	}
	s := sh.Snapshot
	if s.Signature == nil {
		return s, Unsigned, nil
	}
	ok, err := s.Verify(nil)
	if err != nil {
		return s, "", err
	}
	if !ok {
		return s, Failed, nil
	}
	return s, OK, nil
}

// Publish writes the snapshot named by prefix as a pretty file at
// out (default ./<id12>.ctxsnapshot.json), signed with the device key when
// the stored copy is unsigned (a signed one is written as is). It returns
// the path and the written snapshot.
func Publish(ctx context.Context, w *workspace.Workspace, prefix, out string, replace bool) (string, *snapshot.Snapshot, error) {
	sh, err := Show(ctx, w, prefix)
	if err != nil {
		return "", nil, err
	}
	s := *sh.Snapshot
	if s.Signature == nil {
		dev, err := w.Device()
		if err != nil {
			return "", nil, err
		}
		if err := s.Sign(dev.Key); err != nil {
			return "", nil, err
		}
	}
	if out == "" {
		out = snapshot.PublishedFileName(s.SnapshotID)
	}
	data, err := s.MarshalFile()
	if err != nil {
		return "", nil, err
	}
	return out, &s, workspace.WriteOutput(out, data, replace)
}

// Imported says what Import did.
type Imported struct {
	*gitstore.SnapshotResult
	// Unsigned: the file carried no signature; the branch copy is signed
	// with this device's key (the id does not change), because pull accepts
	// only signed snapshots.
	Unsigned bool
}

// Import reads a snapshot file (boundedfile.Read), checks its integrity and
// signature (snapshot.CheckImport) and appends it to this device's
// timeline, keeping a signed file as it is. A file that is not regular or
// is too large wraps workspace.ErrInput; a failed check is a verification
// failure. Importing an id already on the timeline does
// nothing (Existed); a file already on the branch under that id is kept.
func Import(ctx context.Context, w *workspace.Workspace, file string) (*Imported, error) {
	if _, err := branchView(w); err != nil {
		return nil, err
	}
	data, err := boundedfile.Read(file, snapshot.MaxFileSize, workspace.ErrInput)
	if err != nil {
		return nil, err
	}
	s, err := snapshot.CheckImport(data)
	if errors.Is(err, snapshot.ErrTooLarge) {
		return nil, workspace.Tagged(err, workspace.ErrInput)
	} else if err != nil {
		return nil, fault.Default(fault.Failed, err) // a verification failure (exit 1)
	}
	if err := snapshot.CheckID(s.SnapshotID); err != nil || len(s.SnapshotID) != 64 {
		return nil, workspace.Tagged(fmt.Errorf("%w: %s", snapshot.ErrInvalidID, s.SnapshotID), workspace.ErrInput)
	}
	dev, repoID, err := w.DeviceRepo(ctx)
	if err != nil {
		return nil, err
	}
	out := &Imported{Unsigned: s.Signature == nil}
	if out.Unsigned {
		if err := s.Sign(dev.Key); err != nil {
			return nil, err
		}
	}
	res, err := w.Store.AppendSnapshot(ctx, gitstore.SnapshotRequest{
		RepoID: repoID, Device: dev, Author: w.Author(),
		Build: func(*snapshot.TimelineEntry) (*snapshot.Snapshot, error) { return s, nil },
	})
	if err != nil {
		return nil, err
	}
	out.SnapshotResult = res
	return out, nil
}

// RestoredSession is what restore hands the agent (written by --out).
type RestoredSession struct {
	SnapshotID   string   `json:"snapshot_id"`
	CreatedAt    string   `json:"created_at"`
	GitCommit    *string  `json:"git_commit"`
	GitBranch    *string  `json:"git_branch"`
	SessionID    *string  `json:"session_id"`
	Task         *string  `json:"task"`
	Decisions    []string `json:"decisions"`
	FilesTouched []string `json:"files_touched"`
	ProgressPct  *uint8   `json:"progress_pct"`
	HasSession   bool     `json:"has_session"`
}

// Git outcomes of Restore.
const (
	RestoreNotTouched = "not_touched"
	RestoreNoAnchor   = "no_anchor"
	RestoreDirty      = "dirty_tree"
	RestoreCheckedOut = "checked_out"
	RestoreFailed     = "failed"
)

// RestoreResult says what Restore did.
type RestoreResult struct {
	Session *RestoredSession
	Git     string // one of the Restore* outcomes
	Commit  string
	Detail  string // checkout failure text
}

// Restore returns the session slice of the snapshot named by prefix,
// writes it as JSON to out when out is set, and with checkout checks out
// the git anchor (detached) only when `git status --porcelain` is empty.
func Restore(ctx context.Context, w *workspace.Workspace, prefix string, checkout bool, out string, replace bool) (*RestoreResult, error) {
	sh, err := Show(ctx, w, prefix)
	if err != nil {
		return nil, err
	}
	s := sh.Snapshot
	rs := &RestoredSession{SnapshotID: s.SnapshotID, CreatedAt: s.CreatedAt, GitCommit: s.Git.Commit, GitBranch: s.Git.Branch,
		Decisions: []string{}, FilesTouched: []string{}}
	if s.Session != nil {
		rs.HasSession = true
		rs.SessionID, rs.ProgressPct = s.Session.SessionID, s.Session.ProgressPct
		if s.Session.Task != nil && strings.TrimSpace(*s.Session.Task) != "" {
			rs.Task = s.Session.Task
		}
		for _, d := range s.Session.Decisions {
			if strings.TrimSpace(d) != "" {
				rs.Decisions = append(rs.Decisions, d)
			}
		}
		for _, f := range s.Session.FilesTouched {
			if strings.TrimSpace(f) != "" {
				rs.FilesTouched = append(rs.FilesTouched, f)
			}
		}
	}
	res := &RestoreResult{Session: rs, Git: RestoreNotTouched}
	if s.Git.Commit != nil {
		res.Commit = *s.Git.Commit
	}
	if out != "" {
		data, err := jsonIndent(rs)
		if err != nil {
			return nil, err
		}
		if err := workspace.WriteOutput(out, data, replace); err != nil {
			return nil, err
		}
	}
	if !checkout {
		return res, nil
	}
	if res.Commit == "" || !w.Repo.InWorkTree {
		res.Git = RestoreNoAnchor
		return res, nil
	}
	st, err := gitLine(ctx, w, 5*time.Second, "status", "--porcelain")
	if err != nil {
		res.Git = RestoreNoAnchor
		return res, nil
	}
	if st != "" {
		res.Git = RestoreDirty
		return res, nil
	}
	if _, err := gitLine(ctx, w, 20*time.Second, "checkout", "--quiet", res.Commit); err != nil {
		res.Git, res.Detail = RestoreFailed, err.Error()
		var ge *gitexec.Error
		if errors.As(err, &ge) && ge.Stderr != "" {
			res.Detail = ge.Stderr
		}
		return res, nil
	}
	res.Git = RestoreCheckedOut
	return res, nil
}

func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}
