package sync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// ReviewRecord is one thing a commit adds to the memory branch.
type ReviewRecord struct {
	Kind     string // checkpoint, device_key, chain, layout, package, unexpected
	Path     string
	Hash     string
	Device   string
	Session  string
	Turn     int
	Summary  string
	Status   string // verified, unverified, not merged, new key, changed key, …
	Modified bool
}

// ReviewCommit is one commit of the reviewed range.
type ReviewCommit struct {
	Commit  string
	Subject string
	Author  string
	Parents []string
	Records []ReviewRecord
}

// DefaultReviewRange is what a push would send (<remote>/ghyll/memory..ghyll/memory)
// when that is non-empty, else what the last pull brought, else the whole branch.
func DefaultReviewRange(ctx context.Context, m *workspace.Workspace) (string, error) {
	local, err := m.Store.Tip()
	if err != nil {
		return "", err
	}
	if local.IsZero() {
		return "", gitstore.ErrNotInitialized
	}
	if remote, err := ResolveRemote(m.Repo, ""); err == nil {
		if tracked, _ := m.Store.ResolveRef(TrackingRef(remote)); !tracked.IsZero() {
			if ahead, err := m.Store.IsAncestor(ctx, local, tracked); err == nil && !ahead {
				return TrackingRef(remote) + ".." + gitstore.BranchRef, nil
			}
		}
		db, err := m.Cache(ctx)
		if err == nil {
			base, _ := db.Tip(ctx, LastPullKey(remote))
			db.Close()
			if base != "" {
				return base + ".." + gitstore.BranchRef, nil
			}
		}
	}
	return gitstore.BranchRef, nil
}

// Review lists, per commit in rng (git revision range syntax; a single
// commit means just that commit), the records it adds and their status.
func Review(ctx context.Context, m *workspace.Workspace, rng string) ([]ReviewCommit, error) {
	if strings.HasPrefix(rng, "-") {
		return nil, fmt.Errorf("%w: bad range %q", workspace.ErrInput, rng)
	}
	args := []string{"rev-list", "--reverse", "--topo-order"}
	if strings.Contains(rng, "..") || rng == gitstore.BranchRef {
		args = append(args, rng)
	} else {
		args = append(args, "--no-walk", rng)
	}
	out, err := gitexec.Git(ctx, m.Repo.Dir, append(args, "--")...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", workspace.ErrInput, err)
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := reviewer{st: m.Store, db: db}
	commits := []ReviewCommit{}
	for _, line := range strings.Fields(string(out)) {
		rc, err := r.commit(ctx, m, line)
		if err != nil {
			return nil, err
		}
		commits = append(commits, rc)
	}
	return commits, nil
}

// reviewer states what each change of a commit adds.
type reviewer struct {
	st *gitstore.Store
	db *cache.DB // whether a checkpoint verified (the quarantine's verdict)
}

// commit reviews one commit against its first parent.
func (r reviewer) commit(ctx context.Context, m *workspace.Workspace, line string) (ReviewCommit, error) {
	c := plumbing.NewHash(line)
	view, err := r.st.ViewAt(c)
	if err != nil {
		return ReviewCommit{}, err
	}
	parents, err := r.st.Parents(c)
	if err != nil {
		return ReviewCommit{}, err
	}
	var before *gitstore.View
	if len(parents) > 0 {
		if before, err = r.st.ViewAt(parents[0]); err != nil {
			return ReviewCommit{}, err
		}
	}
	changes, err := r.st.Diff(before, view)
	if err != nil {
		return ReviewCommit{}, err
	}
	subject, author, err := commitHeader(ctx, m, line)
	if err != nil {
		return ReviewCommit{}, err
	}
	rc := ReviewCommit{Commit: line, Subject: subject, Author: author, Parents: []string{}, Records: []ReviewRecord{}}
	for _, p := range parents {
		rc.Parents = append(rc.Parents, p.String())
	}
	for _, ch := range changes {
		rec, err := r.record(ctx, view, parents, ch)
		if err != nil {
			return ReviewCommit{}, err
		}
		if rec.Kind == "chain" {
			continue // implied by the checkpoints; shown in --json only via records
		}
		rc.Records = append(rc.Records, rec)
	}
	return rc, nil
}

// record states what one change adds, by the kind of its path.
func (r reviewer) record(ctx context.Context, view *gitstore.View, parents []plumbing.Hash, ch gitstore.Change) (ReviewRecord, error) {
	rec := ReviewRecord{Path: ch.Path, Modified: !ch.Old.IsZero()}
	parts := strings.Split(ch.Path, "/")
	switch {
	case ch.Mode != filemode.Regular:
		rec.Kind, rec.Status = "unexpected", "not a regular file"
	case ch.Path == gitstore.LayoutFile:
		rec.Kind, rec.Status = "layout", "layout "+string(view.Layout)
	case isDeviceFile(parts, ".pub"):
		reviewKey(view, &rec, strings.TrimSuffix(parts[1], ".pub"))
	case isRepoPath(parts, "chains"):
		rec.Kind, rec.Device, rec.Status = "chain", strings.TrimSuffix(parts[3], ".jsonl"), "chain update"
	case isRepoPath(parts, "checkpoints"):
		if err := r.checkpoint(ctx, &rec, ch); err != nil {
			return rec, err
		}
	case len(parts) >= 5 && isRepoPath(parts, gitstore.PackagesDirName):
		r.pkg(&rec, parents, ch, parts[1])
	default:
		rec.Kind, rec.Status = "unexpected", "outside the layout"
	}
	return rec, nil
}

// reviewKey: a device key, new or CHANGED, with its fingerprint.
func reviewKey(view *gitstore.View, rec *ReviewRecord, device string) {
	rec.Kind, rec.Device = "device_key", device
	rec.Status = "new key"
	if rec.Modified {
		rec.Status = "CHANGED KEY"
	}
	if pub, _, err := view.DeviceKey(rec.Device); err == nil {
		rec.Hash = checkpoint.Fingerprint(pub)
	} else if errors.Is(err, gitstore.ErrTooLarge) {
		rec.Status = string(chain.TooLarge)
	}
}

// checkpoint: a checkpoint file, verified or not as the cache says.
func (r reviewer) checkpoint(ctx context.Context, rec *ReviewRecord, ch gitstore.Change) error {
	rec.Kind = "checkpoint"
	raw, err := r.st.ReadBlob(ch.Hash, checkpoint.MaxFileSize)
	if errors.Is(err, gitstore.ErrTooLarge) {
		rec.Status = string(chain.TooLarge)
		return nil
	}
	cp, perr := checkpoint.Parse(raw)
	if err != nil || perr != nil || !checkpoint.IsHexHash(cp.Hash) {
		// Nothing a record could be looked up or named by.
		rec.Status = "unreadable"
		return nil
	}
	rec.Hash, rec.Device, rec.Session, rec.Turn = cp.Hash, cp.DeviceID, cp.SessionID, cp.Turn
	rec.Summary = firstLine(cp.Summary)
	e, err := r.db.Get(ctx, cp.Hash)
	switch {
	case err != nil:
		return err
	case e == nil:
		rec.Status = "not in local memory"
	case e.Verified:
		rec.Status = "verified"
	default:
		rec.Status = "UNVERIFIED"
	}
	if rec.Modified {
		rec.Status = "MODIFIED " + rec.Status
	}
	return nil
}

// pkg: a package file, checked now (chain.CheckPackage); a modified one a
// merge took from another parent is this branch's copy SUPERSEDED.
func (r reviewer) pkg(rec *ReviewRecord, parents []plumbing.Hash, ch gitstore.Change, repo string) {
	rec.Kind, rec.Status = "package", "UNVERIFIED"
	raw, err := r.st.ReadBlob(ch.Hash, ctxpkg.MaxFileSize)
	if errors.Is(err, gitstore.ErrTooLarge) {
		rec.Status = string(chain.TooLarge)
		return
	}
	if err != nil {
		rec.Status = "unreadable"
		return
	}
	pkg, reason, _ := chain.CheckPackage(raw, ch.Path, gitstore.PackagePlacer(repo))
	if pkg != nil {
		rec.Hash, rec.Summary = pkg.Manifest.Integrity.SHA256, pkg.Manifest.Name+"@"+pkg.Manifest.Version
	}
	if reason == "" {
		rec.Status = "verified"
	} else {
		rec.Status += " (" + string(reason) + ")"
	}
	if !rec.Modified {
		return
	}
	rec.Status = "MODIFIED " + rec.Status
	if mergedFrom(r.st, parents, ch) {
		// A pull withdrew this branch's unpushed copy for the one the
		// remote had already published.
		rec.Status = "SUPERSEDED: this branch's copy (blob " + short(ch.Old.String()) +
			") withdrawn for the remote's, " + strings.TrimPrefix(rec.Status, "MODIFIED ")
	}
}

// mergedFrom reports whether a parent other than the first holds ch's new
// blob at its path (a merge took it from there).
func mergedFrom(st *gitstore.Store, parents []plumbing.Hash, ch gitstore.Change) bool {
	for _, p := range parents[min(1, len(parents)):] {
		v, err := st.ViewAt(p)
		if err != nil {
			continue
		}
		if h, err := v.BlobHash(ch.Path); err == nil && h == ch.Hash {
			return true
		}
	}
	return false
}

func commitHeader(ctx context.Context, m *workspace.Workspace, c string) (string, string, error) {
	out, err := gitexec.Git(ctx, m.Repo.Dir, "show", "-s", "--no-show-signature", "--format=%s%x00%an <%ae>", c, "--")
	if err != nil {
		return "", "", err
	}
	subject, author, _ := strings.Cut(strings.TrimSpace(string(out)), "\x00")
	return subject, author, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
