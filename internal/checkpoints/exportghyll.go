package checkpoints

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// GhyllVersion is the version ghyll's code writes, and the one a reader of
// a memory.db must assume: ghyll's schema has no column for it.
const GhyllVersion = 2

// GhyllMismatchNote is what ghyll says about an exported record that
// ghyll's VerifyCheckpoint does not accept, and why.
const GhyllMismatchNote = "they are hashed under git-ctx's rule (v 1, emb in the hash), and ghyll's " +
	"VerifyCheckpoint recomputes under its own (v 2, without emb), so it reports hash_mismatch"

// ExportOptions says how ExportGhyllDB writes.
type ExportOptions struct {
	// Replace replaces an existing file (--force); without it an existing
	// path is refused (workspace.ErrOutputExists) and left untouched.
	Replace bool
	// GhyllVerifiableOnly leaves out the records ghyll's VerifyCheckpoint
	// would report as hash_mismatch.
	GhyllVerifiableOnly bool
}

// ExportResult reports a ghyll export.
type ExportResult struct {
	Path string
	// Exported is the number of rows written.
	Exported int
	// Verifiable rows hold records under ghyll's rule with version 2:
	// ghyll's VerifyCheckpoint accepts them (version set to 2).
	Verifiable int
	// Mismatch rows hold records ghyll reports as hash_mismatch (git-ctx's
	// rule, or ghyll's rule with a version other than 2); see
	// GhyllMismatchNote.
	Mismatch int
	// LeftOut is the number of such records not written
	// (ExportOptions.GhyllVerifiableOnly).
	LeftOut int
	// EmbLeftOut is the number of records under ghyll's rule whose emb was
	// not written: their hash does not cover it, so it is not trusted.
	EmbLeftOut int
}

// ExportGhyllDB writes this repository's verified checkpoints (quarantined
// and unverified records never) into a new ghyll memory.db at path, in
// ghyll's code schema (cache.GhyllCodeSchema), oldest first. Records under
// ghyll's rule go as they are, but without their emb (outside their hash);
// records under git-ctx's rule keep their emb, and ghyll will report them
// as hash_mismatch (counted in Mismatch, or left out with
// GhyllVerifiableOnly). The database is built in a private temporary
// directory and published with internal/atomicfile: path shows either
// nothing (or its old content) or the complete file.
func ExportGhyllDB(ctx context.Context, w *workspace.Workspace, path string, opt ExportOptions) (*ExportResult, error) {
	if err := checkExportPath(path, opt.Replace); err != nil {
		return nil, err
	}
	entries, err := Log(ctx, w, Filter{})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Timestamp != b.Timestamp {
			return a.Timestamp < b.Timestamp
		}
		if a.DeviceID != b.DeviceID {
			return a.DeviceID < b.DeviceID
		}
		return a.Seq < b.Seq
	})
	res := &ExportResult{Path: path}
	var rows []*checkpoint.Checkpoint
	for _, e := range entries {
		if !e.Verified || e.Rule == "" {
			continue
		}
		c := *e.Checkpoint
		c.Extra = nil // ghyll's schema has no place for unknown members
		if e.Rule == checkpoint.RuleGhyllV2 && c.Version == GhyllVersion {
			res.Verifiable++
		} else {
			if opt.GhyllVerifiableOnly {
				res.LeftOut++
				continue
			}
			res.Mismatch++
		}
		if !e.Rule.CoversEmbedding() && c.Embedding != nil {
			c.Embedding = nil
			res.EmbLeftOut++
		}
		rows = append(rows, &c)
	}
	res.Exported = len(rows)
	tmp, err := os.MkdirTemp("", "git-ctx-export-")
	if err != nil {
		return nil, fault.Wrap(fault.Failed, fmt.Errorf("export: %w", err))
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, "memory.db")
	if err := cache.WriteGhyllDB(ctx, built, rows); err != nil {
		return nil, fault.Wrap(fault.Failed, fmt.Errorf("export: build the database: %w", err))
	}
	if err := publishExport(built, path, opt.Replace); err != nil {
		return nil, err
	}
	return res, nil
}

// checkExportPath refuses, before any work, a path whose directory is
// missing or which exists (unless replace).
func checkExportPath(path string, replace bool) error {
	if path == "" {
		return workspace.Tagged(errors.New("--ghyll-db needs a file path"), workspace.ErrInput)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return workspace.Tagged(fmt.Errorf("%s: the directory %s does not exist (create it first)", path, dir), workspace.ErrInput)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return workspace.Tagged(fmt.Errorf("%s is a directory: name the file to create", path), workspace.ErrInput)
		}
		if !replace {
			return existsErr(path)
		}
	}
	return nil
}

func existsErr(path string) error {
	return workspace.Tagged(fmt.Errorf("%s already exists: not replaced (--force replaces it)", path), workspace.ErrOutputExists)
}

// publishExport copies the built database to path through atomicfile (an
// I/O failure, such as a read-only directory, is fault.Failed).
func publishExport(built, path string, replace bool) error {
	f, err := os.Open(built)
	if err != nil {
		return fault.Wrap(fault.Failed, fmt.Errorf("export: %w", err))
	}
	defer f.Close()
	err = atomicfile.Write(path, f, atomicfile.Options{Replace: replace})
	switch {
	case errors.Is(err, atomicfile.ErrExists):
		return existsErr(path)
	case err != nil:
		return fault.Wrap(fault.Failed, fmt.Errorf("export: %w", err))
	}
	return nil
}
