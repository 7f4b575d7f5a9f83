package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// DefaultPackEvery is how many writes to the memory branch (appends,
// snapshots, publishes) git-ctx lets pass before it packs the objects they
// wrote; git config ctx.packEvery changes it and 0 turns packing off.
//
// Each write leaves about ten small loose objects. Left alone, ten
// thousand appends would leave a hundred thousand loose files, slow every
// git command that scans them and make git's own automatic gc start in the
// middle of some later commit. Packing them in batches keeps the loose
// count below a few thousand at a cost of one `git pack-objects` and one
// `git prune-packed` per batch.
const DefaultPackEvery = 256

// packStateFile holds "<writes since the last pack> <tip packed last>".
const packStateFile = "pack-state"

// packEvery reads ctx.packEvery (DefaultPackEvery when unset or invalid).
func (s *Store) packEvery() int {
	v := strings.TrimSpace(s.Repo.Config("ctx.packEvery"))
	if v == "" {
		return DefaultPackEvery
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return DefaultPackEvery
	}
	return n
}

// afterWrite counts one write and packs the branch's loose objects when a
// batch is complete. It runs under the git-ctx lock and never fails the
// write that called it: packing is housekeeping, and an interrupted pack
// leaves only a temporary file that git ignores.
func (s *Store) afterWrite(ctx context.Context) {
	every := s.packEvery()
	if every == 0 {
		return
	}
	path := filepath.Join(s.Repo.CommonDir, "ctx", packStateFile)
	count, packed := 0, ""
	if b, err := os.ReadFile(path); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 1 {
			count, _ = strconv.Atoi(f[0])
		}
		if len(f) >= 2 && plumbing.IsHash(f[1]) {
			packed = f[1]
		}
	}
	count++
	if count >= every {
		if tip, err := s.Tip(); err == nil && !tip.IsZero() {
			if err := s.packSince(ctx, tip, packed); err == nil {
				count, packed = 0, tip.String()
			}
		}
	}
	// Best effort, not synced: a lost count only delays the next pack.
	_ = atomicfile.WriteFile(path, []byte(fmt.Sprintf("%d %s\n", count, packed)),
		atomicfile.Options{Perm: 0o644, Replace: true, NoSync: true})
}

// packSince packs the loose objects and keeps the number of packs small:
// `git repack -d --geometric=2` rolls the loose objects and the small packs
// into one new pack while every pack is at least twice the size of the next
// smaller one, so the pack count grows only logarithmically and git's own
// gc.autoPackLimit is never reached by git-ctx's writes. With a git older
// than 2.32 the objects reachable from tip and not from packed are packed
// with `git pack-objects` instead, and `git prune-packed` removes the loose
// copies.
func (s *Store) packSince(ctx context.Context, tip plumbing.Hash, packed string) error {
	if _, err := gitexec.Git(ctx, s.Repo.CommonDir, "repack", "-d", "-q", "--geometric=2"); err == nil {
		return nil
	}
	base := filepath.Join(s.Repo.CommonDir, "objects", "pack", "pack")
	revs := tip.String() + "\n"
	if packed != "" {
		revs += "^" + packed + "\n"
	}
	run := func(revs string) error {
		_, err := gitexec.Run(ctx, gitexec.Cmd{Dir: s.Repo.CommonDir, Stdin: strings.NewReader(revs),
			Args: []string{"pack-objects", "--revs", "--incremental", "--non-empty", "-q", base}})
		return err
	}
	if err := run(revs); err != nil {
		if packed == "" {
			return err
		}
		// The commit packed last is gone (e.g. pruned after a reset):
		// pack everything not packed yet.
		if err := run(tip.String() + "\n"); err != nil {
			return err
		}
	}
	_, err := gitexec.Git(ctx, s.Repo.CommonDir, "prune-packed", "-q")
	return err
}
