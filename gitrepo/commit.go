package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/git-ctx/git-ctx/gitexec"
)

// CommitInfo is what a checkpoint records about one commit.
type CommitInfo struct {
	Hash    string
	Tree    string
	Parents []string
	Subject string
	Body    string
	// Files are the paths the commit changed against its first parent (all
	// paths for a root commit), at most the limit given to Commit.
	Files []string
	// FilesOmitted counts changed paths left out by that limit.
	FilesOmitted int
}

// Commit describes rev. maxFiles bounds Files (0 means no limit).
func (r *Repo) Commit(ctx context.Context, rev string, maxFiles int) (*CommitInfo, error) {
	if strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("bad revision %q", rev)
	}
	// One git call usually suffices: diff-tree --always prints our five
	// NUL-terminated fields, a NUL ending the commit header, then (when the
	// commit changed paths) a newline and the NUL-terminated paths. Anything
	// else (a range, another output shape) takes the two-call path below.
	out, err := gitexec.Git(ctx, r.Dir, "diff-tree", "--always", "-r", "-z", "--name-only", "--root",
		"--diff-merges=first-parent", "--no-show-signature", "--encoding=UTF-8", "--format="+commitFormat+"%x00", rev+"^{commit}", "--")
	if err == nil {
		if ci, names, ok := splitCommitHeader(out); ok {
			addFiles(ci, names, maxFiles)
			return ci, nil
		}
	}
	// "^{commit}" peels an annotated tag (git show would print the tag too).
	out, err = gitexec.Git(ctx, r.Dir, "show", "-s", "--no-show-signature", "--encoding=UTF-8", "--format="+commitFormat, rev+"^{commit}", "--")
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", rev, err)
	}
	// Exactly one record: a range would list several.
	parts := bytes.Split(out, []byte{0})
	if len(parts) != 6 {
		return nil, fmt.Errorf("read commit %s: unexpected output", rev)
	}
	ci := newCommitInfo(parts)
	names, err := gitexec.Git(ctx, r.Dir, "diff-tree", "-r", "-z", "--name-only", "--no-commit-id",
		"--root", "--diff-merges=first-parent", ci.Hash, "--")
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", rev, err)
	}
	addFiles(ci, names, maxFiles)
	return ci, nil
}

// commitFormat: hash, tree, parents, the encoding header, subject, body,
// NUL-separated.
const commitFormat = "%H%x00%T%x00%P%x00%e%x00%s%x00%b"

// newCommitInfo builds a CommitInfo from commitFormat's six fields. The
// message is asked of git in UTF-8 (--encoding=UTF-8: git re-codes it from
// the commit's encoding header); whatever git could not re-code is decoded
// here (decodeText), so subject and body are always valid UTF-8.
func newCommitInfo(parts [][]byte) *CommitInfo {
	enc := string(parts[3])
	return &CommitInfo{Hash: string(parts[0]), Tree: string(parts[1]), Parents: strings.Fields(string(parts[2])),
		Subject: decodeText(parts[4], enc), Body: strings.TrimSpace(decodeText(parts[5], enc))}
}

// splitCommitHeader splits diff-tree --always -z output into the commit and
// the path list; ok is false unless it has exactly the expected shape.
func splitCommitHeader(out []byte) (*CommitInfo, []byte, bool) {
	parts := bytes.SplitN(out, []byte{0}, 7)
	if len(parts) != 7 || len(parts[0]) < 40 || len(parts[1]) < 40 {
		return nil, nil, false
	}
	rest := parts[6]
	if len(rest) == 0 || rest[0] != 0 {
		return nil, nil, false
	}
	rest = rest[1:]
	if len(rest) > 0 {
		if rest[0] != '\n' {
			return nil, nil, false
		}
		rest = rest[1:]
	}
	return newCommitInfo(parts[:6]), rest, true
}

// addFiles records the NUL-separated paths, at most maxFiles (0: all).
func addFiles(ci *CommitInfo, names []byte, maxFiles int) {
	seen := map[string]bool{}
	for _, n := range bytes.Split(names, []byte{0}) {
		if len(n) == 0 || seen[string(n)] {
			continue
		}
		seen[string(n)] = true
		if maxFiles > 0 && len(ci.Files) >= maxFiles {
			ci.FilesOmitted++
			continue
		}
		ci.Files = append(ci.Files, string(n))
	}
}
