package recall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/agentturn"
	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/snapshots"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// DefaultBriefingBytes bounds the briefing (git config ctx.briefingBytes
// overrides it, between MinMaxBytes and MaxMaxBytes).
const DefaultBriefingBytes = 4 << 10

// Briefing limits: records per section, changed files considered.
const (
	briefBranchRecords = 5
	briefFileRecords   = 5
	briefChangedFiles  = 200
	briefLine          = 200
	// briefScan bounds the records a briefing reads (newest first): the
	// hook runs at every session start.
	briefScan = 2000
)

// Briefing is what a session is told when it starts.
type Briefing struct {
	Text string
	// Items are what Text lists, as recorded in a checkpoint's injections:
	// checkpoints.InjectionPrefix and a checkpoint hash, or that prefix,
	// "snapshot:" and a snapshot id.
	Items []string
}

// Brief builds the briefing for the work tree of w within budget bytes:
// this branch's recent verified checkpoints, the team's latest verified
// checkpoints touching the files changed in the work tree, and the newest
// verified snapshot of this branch. Unverified records are never in it.
func Brief(ctx context.Context, w *workspace.Workspace, budget int) (*Briefing, error) {
	branch := w.Repo.CurrentBranch()
	t := newBudget(budget)
	out := &Briefing{}
	t.addCut(fmt.Sprintf("git-ctx: verified team memory for branch %s (ask the git-ctx MCP tools search, log, show for more).\n", orDash(branch)))
	listed := map[string]bool{}
	line := func(e *cache.Entry, extra string) {
		if listed[e.Hash] {
			return
		}
		l := fmt.Sprintf("- %s %s %s%s: %s\n", e.Hash[:12], stamp(e.Timestamp)[:10], e.DeviceID, extra, firstLine(e.Summary, briefLine))
		if t.add(l) {
			listed[e.Hash] = true
			out.Items = append(out.Items, checkpoints.InjectionPrefix+e.Hash)
		}
	}
	if branch != "" {
		recent, err := recentEntries(ctx, w, checkpoints.Filter{}, recordFilter{branch: branch, scan: briefScan}, briefBranchRecords)
		if err != nil {
			return nil, err
		}
		if len(recent) > 0 {
			t.add("\nRecent decisions on this branch:\n")
			for _, e := range recent {
				line(e, "")
			}
		}
	}
	changed := changedFiles(ctx, w.Repo)
	if len(changed) > 0 {
		touching, err := recentEntries(ctx, w, checkpoints.Filter{}, recordFilter{files: changed, scan: briefScan}, briefFileRecords)
		if err != nil {
			return nil, err
		}
		if len(touching) > 0 {
			t.add("\nLatest on the files changed in your work tree:\n")
			for _, e := range touching {
				line(e, " ("+strings.Join(common(e.FilesTouched, changed, 3), ", ")+")")
			}
		}
	}
	if s := openSnapshot(ctx, w, branch); s != nil {
		l := fmt.Sprintf("\nOpen snapshot %s of %s (snapshot_restore gives it whole): %s\n", cutText(s.SnapshotID, 12), s.CreatedAt, firstLine(snapshotTask(ctx, w, s.SnapshotID), briefLine))
		if t.add(l) {
			out.Items = append(out.Items, checkpoints.InjectionPrefix+"snapshot:"+s.SnapshotID)
		}
	}
	if len(out.Items) == 0 {
		return &Briefing{}, nil
	}
	out.Text = t.String()
	return out, nil
}

// changedFiles are the paths `git status --porcelain` lists (at most
// briefChangedFiles; both sides of a rename).
func changedFiles(ctx context.Context, r *gitrepo.Repo) map[string]bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := gitexec.Git(ctx, r.Dir, "status", "--porcelain", "-z", "--untracked-files=normal")
	if err != nil {
		return nil
	}
	files := map[string]bool{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields) && len(files) < briefChangedFiles; i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		files[f[3:]] = true
		if f[0] == 'R' || f[0] == 'C' { // the next field is the source path
			i++
			if i < len(fields) && fields[i] != "" {
				files[fields[i]] = true
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	return files
}

// common lists up to n of files that are in set.
func common(files []string, set map[string]bool, n int) []string {
	var out []string
	for _, f := range files {
		if set[f] && len(out) < n {
			out = append(out, f)
		}
	}
	return out
}

// openSnapshot is the newest verified snapshot of branch (nil if none).
func openSnapshot(ctx context.Context, w *workspace.Workspace, branch string) *snapshots.ListEntry {
	if branch == "" {
		return nil
	}
	list, err := snapshots.List(ctx, w, false)
	if err != nil {
		return nil
	}
	for i := range list {
		e := &list[i]
		if e.Verified && e.GitBranch != nil && *e.GitBranch == branch {
			return e
		}
	}
	return nil
}

// snapshotTask is the snapshot's task ("" when it has none).
func snapshotTask(ctx context.Context, w *workspace.Workspace, id string) string {
	res, err := snapshots.Restore(ctx, w, id, false, "", false)
	if err != nil || res.Session.Task == nil {
		return "(no task)"
	}
	return *res.Session.Task
}

// SessionStart is Claude Code's SessionStart hook: the hook input on in
// names the session and its directory; the briefing goes to out (Claude
// Code adds a SessionStart hook's standard output to the session's context)
// and its items are remembered for the session's next checkpoint.
// Outside a repository, without a memory branch, or with nothing to say,
// it prints nothing.
func SessionStart(ctx context.Context, in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(in, agentturn.MaxHookInput+1))
	if err != nil {
		return err
	}
	// The SessionStart input has the Stop hook's members that matter here
	// (session_id, cwd), so the same parser reads it.
	hin, err := agentturn.ParseClaudeStop(data)
	if err != nil {
		return err
	}
	dir := hin.Cwd
	if dir == "" {
		dir = "."
	}
	w, err := workspace.Open(ctx, dir)
	if errors.Is(err, gitrepo.ErrNotARepo) {
		return nil
	}
	if err != nil {
		return err
	}
	if tip, err := w.Store.Tip(); err != nil || tip.IsZero() {
		return err
	}
	b, err := Brief(ctx, w, briefingBudget(w.Repo))
	if errors.Is(err, gitstore.ErrNotInitialized) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := checkpoints.RememberInjections(w.Repo, hin.SessionID, b.Items); err != nil {
		return err
	}
	if b.Text == "" {
		return nil
	}
	_, err = io.WriteString(out, b.Text)
	return err
}

// briefingBudget is git config ctx.briefingBytes when valid, else
// DefaultBriefingBytes.
func briefingBudget(r *gitrepo.Repo) int {
	var n int
	if _, err := fmt.Sscanf(r.Config("ctx.briefingBytes"), "%d", &n); err == nil && n >= MinMaxBytes && n <= MaxMaxBytes {
		return n
	}
	return DefaultBriefingBytes
}
