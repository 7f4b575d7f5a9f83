package sync

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
)

// Reasons of package rejections (besides gitstore.CheckPackageFile's).
const (
	// ReasonPackageConflict: the remote holds a different file under a
	// name@version this branch already published (packages are immutable).
	ReasonPackageConflict = "package_conflict"
)

// packageChanges collects the fetched package files (both layouts).
type packageChanges struct {
	files []gitstore.Change
}

// classify takes c when it lies under repos/<id>/packages/; it reports
// whether it did (rejecting rewrites and odd modes itself).
func (pc *packageChanges) classify(c gitstore.Change, reject func(repo, dev, record, reason, format string, args ...any)) bool {
	parts := strings.Split(c.Path, "/")
	if len(parts) < 4 || parts[0] != "repos" || parts[2] != gitstore.PackagesDirName {
		return false
	}
	switch {
	case c.Mode != filemode.Regular:
		reject(parts[1], "", c.Path, ReasonUnexpected, "not a package file (mode %o): not merged", uint32(c.Mode))
	case !c.Old.IsZero():
		reject(parts[1], "", c.Path, ReasonPackageConflict, "the remote holds a different package under a name and version this branch already published: not merged (published packages are immutable)")
	default:
		pc.files = append(pc.files, c)
	}
	return true
}

// planPackages verifies each fetched package file (gitstore.CheckPackageFile:
// it parses, validates, its integrity and any signature verify, and its
// path is its manifest's name and version) and takes those that pass.
func planPackages(remote *gitstore.View, pc *packageChanges, p *plan) error {
	sort.Slice(pc.files, func(i, j int) bool { return pc.files[i].Path < pc.files[j].Path })
	for _, c := range pc.files {
		repo := strings.Split(c.Path, "/")[1]
		reject := func(reason, format string, args ...any) {
			p.rejected = append(p.rejected, Rejection{Repo: repo, Record: c.Path, Reason: reason, Detail: fmt.Sprintf(format, args...)})
		}
		if err := gitrepo.ValidSegment(repo); err != nil {
			reject(ReasonBadRepoID, "%v", err)
			continue
		}
		raw, err := remote.ReadBlob(c.Hash, ctxpkg.MaxFileSize)
		if errors.Is(err, gitstore.ErrTooLarge) {
			reject("too_large", "%v", err)
			continue
		} else if err != nil {
			return fmt.Errorf("read fetched package %s: %w", c.Path, err)
		}
		if _, reason, detail := gitstore.CheckPackageFile(raw, repo, c.Path); reason != "" {
			reject(reason, "%s: not merged", detail)
			continue
		}
		p.edits[c.Path] = c.Hash
		p.packages++
	}
	return nil
}
