package gitstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/gitname"
)

// Published context packages (both layouts; see docs/FORMAT.md):
//
//	repos/<repo-id>/packages/<name>/<version>.ctxpkg   the file as published, byte for byte
//
// A name holding '/' (e.g. "@team/auth") is a directory path. A published
// name@version is immutable: it is never rewritten or removed.
const PackagesDirName = "packages"

// Package errors callers branch on.
var (
	// ErrPackageExists: a different package is already published under the
	// same name and version (a conflict).
	ErrPackageExists = fault.Sentinel(fault.Conflict, "a different package is already published under this name and version")
	// ErrPackagePath: the name or version cannot be stored as a path.
	ErrPackagePath = fault.Sentinel(fault.Refused, "package name or version cannot be stored on the branch")
	// ErrPackageInvalid: the package does not verify (integrity, signature,
	// validation).
	ErrPackageInvalid = fault.Sentinel(fault.Failed, "package does not verify")
)

// PackageDir is the directory of repoID's published packages.
func PackageDir(repoID string) string { return path.Join(RepoDir(repoID), PackagesDirName) }

// PackagePath is where name@version is published in repoID (name and
// version must pass CheckPackagePath).
func PackagePath(repoID, name, version string) string {
	return path.Join(PackageDir(repoID), name, version+ctxpkg.Extension)
}

// CheckPackagePath refuses a name or version that is not a safe, unambiguous
// path: lean-ctx's character rules (Manifest.Validate), ctxpkg.SafeName, and
// no name segment that git refuses or reads as .git or .gitmodules (any
// case, NTFS and HFS+ aliases: gitname.Check) or that ends in ".ctxpkg" or
// ".lctxpkg" (which could collide with a version file).
func CheckPackagePath(name, version string) error {
	m := ctxpkg.Manifest{SchemaVersion: 1, Name: name, Version: version}
	if err := m.Validate(); err != nil {
		var ve *ctxpkg.ValidationError
		if errors.As(err, &ve) {
			for _, re := range ve.Errs {
				switch {
				case errors.Is(re, ctxpkg.ErrNameEmpty), errors.Is(re, ctxpkg.ErrNameTooLong), errors.Is(re, ctxpkg.ErrNameChars),
					errors.Is(re, ctxpkg.ErrVersionEmpty), errors.Is(re, ctxpkg.ErrVersionTooLong), errors.Is(re, ctxpkg.ErrVersionChars),
					errors.Is(re, ctxpkg.ErrVersionDot), errors.Is(re, ctxpkg.ErrUnsafeName):
					return fmt.Errorf("%w: %s", ErrPackagePath, re.Msg)
				}
			}
		}
	}
	if !ctxpkg.SafeName(name) {
		return fmt.Errorf("%w: unsafe name %q", ErrPackagePath, name)
	}
	for _, seg := range strings.Split(name, "/") {
		if gitname.Check(seg) != nil || strings.HasSuffix(seg, ctxpkg.Extension) || strings.HasSuffix(seg, ctxpkg.LegacyExtension) {
			return fmt.Errorf("%w: name segment %q is not allowed", ErrPackagePath, seg)
		}
	}
	if err := gitname.Check(version + ctxpkg.Extension); err != nil {
		return fmt.Errorf("%w: version %q: %v", ErrPackagePath, version, err)
	}
	return nil
}

// PackagePlacer places packages in repoID for chain.CheckPackage: a name
// and version that pass CheckPackagePath belong at PackagePath.
func PackagePlacer(repoID string) chain.PackagePlace {
	return func(name, version string) (string, error) {
		if err := CheckPackagePath(name, version); err != nil {
			return "", err
		}
		return PackagePath(repoID, name, version), nil
	}
}

// PackageEntry is one published package file found by WalkPackages.
type PackageEntry struct {
	Path    string
	Name    string // from the path
	Version string // from the path
	Blob    plumbing.Hash
}

// maxPackageDepth bounds the directory walk (a 128-byte name has at most 64
// segments).
const maxPackageDepth = 65

// WalkPackages lists repoID's published package files, sorted by path;
// entries the layout does not allow (another mode, another extension, too
// deep) go to bad.
func (v *View) WalkPackages(repoID string) (good []PackageEntry, bad []string, err error) {
	base := PackageDir(repoID)
	err = v.walk(base, 0, func(dir string, e object.TreeEntry, full string, depth int) bool {
		switch {
		case e.Mode == filemode.Dir && depth < maxPackageDepth:
			return true
		case e.Mode == filemode.Regular && dir != base && strings.HasSuffix(e.Name, ctxpkg.Extension):
			good = append(good, PackageEntry{Path: full, Name: strings.TrimPrefix(dir, base+"/"),
				Version: strings.TrimSuffix(e.Name, ctxpkg.Extension), Blob: e.Hash})
		default:
			bad = append(bad, full)
		}
		return false
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(good, func(i, j int) bool { return good[i].Path < good[j].Path })
	return good, bad, nil
}

// PackageFile reads the published file of name@version in repoID
// (ErrNotExist when there is none).
func (v *View) PackageFile(repoID, name, version string) ([]byte, error) {
	if err := CheckPackagePath(name, version); err != nil {
		return nil, err
	}
	return v.ReadFile(PackagePath(repoID, name, version), ctxpkg.MaxFileSize)
}

// PublishRequest asks for one package file to be published.
type PublishRequest struct {
	RepoID string
	Device Device
	Author Author
	// Data is the package file, stored byte for byte.
	Data []byte
}

// PublishResult says what PublishPackage did.
type PublishResult struct {
	Package *ctxpkg.Package
	Path    string
	Existed bool // the identical file was already published: nothing written
	Commit  plumbing.Hash
}

// PublishPackage stores a package file at its name@version path in one
// commit "ctx: package <name>@<version> by <device>". The file must verify
// (ErrPackageInvalid) and have a storable name (ErrPackagePath). The
// identical file already there is a no-op (Existed); a different one is
// ErrPackageExists. Like Append it holds the lock and retries on a
// concurrent move.
func (s *Store) PublishPackage(ctx context.Context, req PublishRequest) (*PublishResult, error) {
	if len(req.Data) > ctxpkg.MaxFileSize {
		return nil, fmt.Errorf("%w: package is %d bytes (limit %d)", ctxpkg.ErrTooLarge, len(req.Data), ctxpkg.MaxFileSize)
	}
	pkg, err := ctxpkg.ParseFile(req.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackageInvalid, err)
	}
	m := &pkg.Manifest
	if err := CheckPackagePath(m.Name, m.Version); err != nil {
		return nil, err
	}
	p := PackagePath(req.RepoID, m.Name, m.Version)
	if _, reason, detail := chain.CheckPackage(req.Data, p, PackagePlacer(req.RepoID)); reason != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrPackageInvalid, reason, detail)
	}
	return lockedEdit(ctx, s, func(e *branchEdit) (*PublishResult, error) { return e.publishPackage(ctx, req, pkg, p) })
}

// publishPackage adds the package file at p (with the device's key when
// missing) and commits it, unless that path holds a file already: the
// identical one is Existed, another ErrPackageExists.
func (e *branchEdit) publishPackage(ctx context.Context, req PublishRequest, pkg *ctxpkg.Package, p string) (*PublishResult, error) {
	res := &PublishResult{Package: pkg, Path: p}
	m := &pkg.Manifest
	if h, err := e.v.BlobHash(p); err == nil {
		if h == plumbing.ComputeHash(plumbing.BlobObject, req.Data) {
			res.Existed = true
			return res, nil
		}
		return nil, e.packageExists(h, m)
	} else if !errors.Is(err, ErrNotExist) {
		return nil, err
	}
	dev := req.Device
	e.files[p] = req.Data
	if _, err := e.publishKey(dev); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("ctx: package %s@%s by %s\n\nPackage: %s@%s\nSHA256: %s\n", m.Name, m.Version, dev.ID, m.Name, m.Version, m.Integrity.SHA256)
	c, err := e.commit(ctx, req.Author, time.Now(), msg, "ctx: package")
	if err != nil {
		return nil, err
	}
	res.Commit = c
	return res, nil
}

// packageExists is the ErrPackageExists of m, whose path holds blob h,
// naming both digests when the published file reads.
func (e *branchEdit) packageExists(h plumbing.Hash, m *ctxpkg.Manifest) error {
	old, err := e.s.readBlob(h, ctxpkg.MaxFileSize)
	detail := ""
	if err == nil {
		if op, err := ctxpkg.ParseFile(old); err == nil && op.Manifest.Integrity.SHA256 != m.Integrity.SHA256 {
			detail = fmt.Sprintf(" (published sha256 %s, this one %s)", short12(op.Manifest.Integrity.SHA256), short12(m.Integrity.SHA256))
		}
	}
	return fmt.Errorf("%w: %s@%s%s; publish it under a new version", ErrPackageExists, m.Name, m.Version, detail)
}

func short12(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// PackageReport is the verification of one published package file.
type PackageReport struct {
	Repo    string
	Path    string
	Name    string
	Version string
	SHA256  string
	Signed  bool
	Reason  string
	Detail  string
}

// verifyPackages checks every published package file of repoID
// (chain.CheckPackage) and reports paths outside the layout as problems.
func (v *View) verifyPackages(repoID string, rep *Report, problem func(string, string, ...any)) error {
	good, bad, err := v.WalkPackages(repoID)
	if err != nil {
		return err
	}
	for _, b := range bad {
		problem(b, "not a package file of the %s layout", v.Layout)
	}
	for _, e := range good {
		pr := PackageReport{Repo: repoID, Path: e.Path, Name: e.Name, Version: e.Version}
		raw, err := v.s.readBlob(e.Blob, ctxpkg.MaxFileSize)
		if errors.Is(err, ErrTooLarge) {
			pr.Reason, pr.Detail = string(chain.TooLarge), err.Error()
		} else if err != nil {
			return err
		} else {
			pkg, reason, detail := chain.CheckPackage(raw, e.Path, PackagePlacer(repoID))
			pr.Reason, pr.Detail = string(reason), detail
			if pkg != nil {
				pr.SHA256, pr.Signed = pkg.Manifest.Integrity.SHA256, pkg.Manifest.Signature != nil
			}
		}
		rep.Packages = append(rep.Packages, pr)
	}
	return nil
}
