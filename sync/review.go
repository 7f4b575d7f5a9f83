package sync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/memory"
)

// ReviewRecord is one thing a commit adds to the memory branch.
type ReviewRecord struct {
	Kind     string `json:"kind"` // checkpoint, device_key, chain, layout, package, unexpected
	Path     string `json:"path"`
	Hash     string `json:"hash,omitempty"`
	Device   string `json:"device,omitempty"`
	Session  string `json:"session,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	Summary  string `json:"summary,omitempty"`
	Status   string `json:"status"` // verified, unverified, not merged, new key, changed key, …
	Modified bool   `json:"modified"`
}

// ReviewCommit is one commit of the reviewed range.
type ReviewCommit struct {
	Commit  string         `json:"commit"`
	Subject string         `json:"subject"`
	Author  string         `json:"author"`
	Parents []string       `json:"parents"`
	Records []ReviewRecord `json:"records"`
}

// DefaultReviewRange is what a push would send (<remote>/ghyll/memory..ghyll/memory)
// when that is non-empty, else what the last pull brought, else the whole branch.
func DefaultReviewRange(ctx context.Context, m *memory.Memory) (string, error) {
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
func Review(ctx context.Context, m *memory.Memory, rng string) ([]ReviewCommit, error) {
	if strings.HasPrefix(rng, "-") {
		return nil, fmt.Errorf("%w: bad range %q", memory.ErrInput, rng)
	}
	args := []string{"rev-list", "--reverse", "--topo-order"}
	if strings.Contains(rng, "..") || rng == gitstore.BranchRef {
		args = append(args, rng)
	} else {
		args = append(args, "--no-walk", rng)
	}
	out, err := gitexec.Git(ctx, m.Repo.Dir, append(args, "--")...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", memory.ErrInput, err)
	}
	db, err := m.Cache(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st := m.Store
	commits := []ReviewCommit{}
	for _, line := range strings.Fields(string(out)) {
		c := plumbing.NewHash(line)
		view, err := st.ViewAt(c)
		if err != nil {
			return nil, err
		}
		parents, err := st.Parents(c)
		if err != nil {
			return nil, err
		}
		var before *gitstore.View
		if len(parents) > 0 {
			if before, err = st.ViewAt(parents[0]); err != nil {
				return nil, err
			}
		}
		changes, err := st.Diff(before, view)
		if err != nil {
			return nil, err
		}
		subject, author, err := commitHeader(ctx, m, line)
		if err != nil {
			return nil, err
		}
		rc := ReviewCommit{Commit: line, Subject: subject, Author: author, Parents: []string{}, Records: []ReviewRecord{}}
		for _, p := range parents {
			rc.Parents = append(rc.Parents, p.String())
		}
		for _, ch := range changes {
			rec := ReviewRecord{Path: ch.Path, Modified: !ch.Old.IsZero()}
			parts := strings.Split(ch.Path, "/")
			switch {
			case ch.Mode != filemode.Regular:
				rec.Kind, rec.Status = "unexpected", "not a regular file"
			case ch.Path == gitstore.LayoutFile:
				rec.Kind, rec.Status = "layout", "layout "+string(view.Layout)
			case len(parts) == 2 && parts[0] == "devices" && strings.HasSuffix(parts[1], ".pub"):
				rec.Kind, rec.Device = "device_key", strings.TrimSuffix(parts[1], ".pub")
				rec.Status = "new key"
				if rec.Modified {
					rec.Status = "CHANGED KEY"
				}
				if pub, _, err := view.DeviceKey(rec.Device); err == nil {
					rec.Hash = checkpoint.Fingerprint(pub)
				} else if errors.Is(err, gitstore.ErrTooLarge) {
					rec.Status = string(chain.TooLarge)
				}
			case len(parts) >= 4 && parts[0] == "repos" && parts[2] == "chains":
				rec.Kind, rec.Device, rec.Status = "chain", strings.TrimSuffix(parts[3], ".jsonl"), "chain update"
			case len(parts) >= 4 && parts[0] == "repos" && parts[2] == "checkpoints":
				rec.Kind = "checkpoint"
				raw, err := st.ReadBlob(ch.Hash, checkpoint.MaxFileSize)
				if errors.Is(err, gitstore.ErrTooLarge) {
					rec.Status = string(chain.TooLarge)
					break
				}
				cp, perr := checkpoint.Parse(raw)
				if err != nil || perr != nil || !checkpoint.IsHexHash(cp.Hash) {
					// Nothing a record could be looked up or named by.
					rec.Status = "unreadable"
					break
				}
				rec.Hash, rec.Device, rec.Session, rec.Turn = cp.Hash, cp.DeviceID, cp.SessionID, cp.Turn
				rec.Summary = firstLine(cp.Summary)
				e, err := db.Get(ctx, cp.Hash)
				switch {
				case err != nil:
					return nil, err
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
			case len(parts) >= 5 && parts[0] == "repos" && parts[2] == gitstore.PackagesDirName:
				rec.Kind, rec.Status = "package", "UNVERIFIED"
				raw, err := st.ReadBlob(ch.Hash, ctxpkg.MaxFileSize)
				if errors.Is(err, gitstore.ErrTooLarge) {
					rec.Status = string(chain.TooLarge)
					break
				}
				if err != nil {
					rec.Status = "unreadable"
					break
				}
				pkg, reason, _ := gitstore.CheckPackageFile(raw, parts[1], ch.Path)
				if pkg != nil {
					rec.Hash, rec.Summary = pkg.Manifest.Integrity.SHA256, pkg.Manifest.Name+"@"+pkg.Manifest.Version
				}
				if reason == "" {
					rec.Status = "verified"
				} else {
					rec.Status += " (" + reason + ")"
				}
				if rec.Modified {
					rec.Status = "MODIFIED " + rec.Status
					if mergedFrom(st, parents, ch) {
						// A pull withdrew this branch's unpushed copy for
						// the one the remote had already published.
						rec.Status = "SUPERSEDED: this branch's copy (blob " + short(ch.Old.String()) +
							") withdrawn for the remote's, " + strings.TrimPrefix(rec.Status, "MODIFIED ")
					}
				}
			default:
				rec.Kind, rec.Status = "unexpected", "outside the layout"
			}
			if rec.Kind == "chain" {
				continue // implied by the checkpoints; shown in --json only via records
			}
			rc.Records = append(rc.Records, rec)
		}
		commits = append(commits, rc)
	}
	return commits, nil
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

func commitHeader(ctx context.Context, m *memory.Memory, c string) (string, string, error) {
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
