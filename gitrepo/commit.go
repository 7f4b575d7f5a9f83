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
	// "^{commit}" peels an annotated tag (git show would print the tag too).
	out, err := gitexec.Git(ctx, r.Dir, "show", "-s", "--no-show-signature", "--format=%H%x00%T%x00%P%x00%s%x00%b", rev+"^{commit}", "--")
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
	return ci, nil
}
