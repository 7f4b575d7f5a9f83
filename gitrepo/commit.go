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
		"--diff-merges=first-parent", "--no-show-signature", "--format="+commitFormat+"%x00", rev+"^{commit}", "--")
	if err == nil {
		if ci, names, ok := splitCommitHeader(out); ok {
			addFiles(ci, names, maxFiles)
			return ci, nil
		}
	}
	// "^{commit}" peels an annotated tag (git show would print the tag too).
	out, err = gitexec.Git(ctx, r.Dir, "show", "-s", "--no-show-signature", "--format="+commitFormat, rev+"^{commit}", "--")
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", rev, err)
	}
	// Exactly one record: a range would list several.
	parts := strings.Split(string(out), "\x00")
	if len(parts) != 5 {
		return nil, fmt.Errorf("read commit %s: unexpected output", rev)
	}
	ci := &CommitInfo{Hash: parts[0], Tree: parts[1], Parents: strings.Fields(parts[2]), Subject: parts[3], Body: strings.TrimSpace(parts[4])}
	names, err := gitexec.Git(ctx, r.Dir, "diff-tree", "-r", "-z", "--name-only", "--no-commit-id",
		"--root", "--diff-merges=first-parent", ci.Hash, "--")
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", rev, err)
	}
	addFiles(ci, names, maxFiles)
	return ci, nil
}

// commitFormat: hash, tree, parents, subject, body, NUL-separated.
const commitFormat = "%H%x00%T%x00%P%x00%s%x00%b"

// splitCommitHeader splits diff-tree --always -z output into the commit and
// the path list; ok is false unless it has exactly the expected shape.
func splitCommitHeader(out []byte) (*CommitInfo, []byte, bool) {
	parts := bytes.SplitN(out, []byte{0}, 6)
	if len(parts) != 6 || len(parts[0]) < 40 || len(parts[1]) < 40 {
		return nil, nil, false
	}
	rest := parts[5]
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
	ci := &CommitInfo{Hash: string(parts[0]), Tree: string(parts[1]), Parents: strings.Fields(string(parts[2])),
		Subject: string(parts[3]), Body: strings.TrimSpace(string(parts[4]))}
	return ci, rest, true
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
