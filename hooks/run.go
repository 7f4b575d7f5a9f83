package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/agentturn"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// Default time boxes (git config ctx.hookTimeout / ctx.prePushTimeout, in
// seconds, override them).
const (
	DefaultHookTimeout    = 10 * time.Second
	DefaultPrePushTimeout = 30 * time.Second
)

func seconds(r *gitrepo.Repo, key string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(r.Config(key)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return def
}

// AgentSummaryLimit bounds an agent turn's summary (the last assistant
// message), cut after redaction.
const AgentSummaryLimit = 4000

// Outcome is what a hook entry point did, for one line of output or a log.
type Outcome struct {
	Message string // "" when there is nothing to say
	// Spooled: the work was spooled; the drain logs its outcome to
	// hooks.log, so the hook itself does not.
	Spooled bool
}

// envTools names agents detected from the environment the commit ran in,
// plus $GIT_CTX_TOOLS (comma separated).
func envTools() []string {
	var tools []string
	if os.Getenv("CLAUDECODE") != "" {
		tools = append(tools, "claude-code")
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CODEX_SANDBOX") {
			tools = append(tools, "codex")
			break
		}
	}
	for _, t := range strings.Split(os.Getenv("GIT_CTX_TOOLS"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tools = append(tools, t)
		}
	}
	return tools
}

// RecordCommit is the post-commit and post-merge hook: it spools HEAD and
// starts a drainer (SpoolCommit), or, with $GIT_CTX_HOOK_SYNC set, drains
// the spool and then turns HEAD into one checkpoint. A post-merge that
// made no merge commit (a fast-forward) records nothing, and a commit
// recorded already is skipped.
func RecordCommit(ctx context.Context, dir, hook string) (Outcome, error) {
	if os.Getenv(SyncEnv) == "" {
		return SpoolCommit(ctx, dir, hook)
	}
	m, err := workspace.Open(ctx, dir)
	if err != nil {
		return Outcome{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, seconds(m.Repo, "ctx.hookTimeout", DefaultHookTimeout))
	defer cancel()
	if tip, err := m.Store.Tip(); err != nil {
		return Outcome{}, err
	} else if tip.IsZero() {
		return Outcome{}, gitstore.ErrNotInitialized
	}
	if _, err := Drain(ctx, m); err != nil {
		return Outcome{}, err
	}
	ci, err := m.Repo.Commit(ctx, "HEAD", checkpoints.CommitFiles)
	if err != nil {
		return Outcome{}, err
	}
	if hook == PostMerge && len(ci.Parents) < 2 {
		return Outcome{}, nil
	}
	_, err = checkpoints.Record(ctx, m, checkpoints.RecordInput{Commit: ci, Tools: envTools(), OncePerCommit: true})
	if errors.Is(err, checkpoints.ErrAlreadyRecorded) {
		return Outcome{}, nil
	}
	return Outcome{}, err
}

// PushAlongside is the pre-push hook: it pushes the memory branch to the
// remote the user is pushing to. It never fails the user's push: the caller
// reports the error as a warning.
func PushAlongside(ctx context.Context, dir, remote string) (Outcome, error) {
	if os.Getenv("GIT_CTX_IN_PRE_PUSH") != "" {
		return Outcome{}, nil
	}
	os.Setenv("GIT_CTX_IN_PRE_PUSH", "1") // inherited by every git we run
	m, err := workspace.Open(ctx, dir)
	if err != nil {
		return Outcome{}, err
	}
	if tip, err := m.Store.Tip(); err != nil || tip.IsZero() {
		return Outcome{}, err
	}
	if m.Repo.Config("remote."+remote+".url") == "" {
		return Outcome{Message: "memory not pushed: '" + remote + "' is a URL, not a configured remote"}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, seconds(m.Repo, "ctx.prePushTimeout", DefaultPrePushTimeout))
	defer cancel()
	res, err := ctxsync.Push(ctx, m, remote, ctxsync.PushOptions{})
	if errors.Is(err, ctxsync.ErrEmptyRemote) {
		return Outcome{Message: "memory not pushed yet: the remote has no branches (it will go with the next push)"}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Message: fmt.Sprintf("pushed memory to %s (%s)", remote, res.Pushed[:12])}, nil
}

// RecordClaudeTurn is Claude Code's Stop hook: the hook input on stdin names
// the session and the transcript, whose last turn becomes a checkpoint.
// Outside a git repository, or without a memory branch, it does nothing.
func RecordClaudeTurn(ctx context.Context, stdin io.Reader) (Outcome, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, agentturn.MaxHookInput+1))
	if err != nil {
		return Outcome{}, err
	}
	in, err := agentturn.ParseClaudeStop(data)
	if err != nil {
		return Outcome{}, err
	}
	turn := agentturn.Turn{Agent: "claude"}
	if in.TranscriptPath != "" {
		if turn, err = agentturn.ReadClaudeTranscript(in.TranscriptPath); err != nil {
			return Outcome{}, err
		}
	}
	if in.SessionID != "" {
		turn.SessionID = in.SessionID
	}
	if in.Cwd != "" {
		turn.Cwd = in.Cwd
	}
	return recordTurn(ctx, turn, "claude-code")
}

// RecordCodexTurn is Codex's notify program: its one argument reports a
// finished turn.
func RecordCodexTurn(ctx context.Context, arg string) (Outcome, error) {
	turn, err := agentturn.ParseCodexNotify([]byte(arg))
	if errors.Is(err, agentturn.ErrNotATurn) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	return recordTurn(ctx, turn, "codex")
}

func recordTurn(ctx context.Context, turn agentturn.Turn, agent string) (Outcome, error) {
	if os.Getenv(SyncEnv) == "" {
		return spoolTurn(ctx, turn, agent)
	}
	dir := turn.Cwd
	if dir == "" {
		dir = "."
	}
	m, err := workspace.Open(ctx, dir)
	if errors.Is(err, gitrepo.ErrNotARepo) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	if tip, err := m.Store.Tip(); err != nil || tip.IsZero() {
		return Outcome{}, err
	}
	if _, err := Drain(ctx, m); err != nil {
		return Outcome{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, seconds(m.Repo, "ctx.hookTimeout", DefaultHookTimeout))
	defer cancel()
	top, _ := m.Repo.WorkTree(ctx)
	_, err = checkpoints.Record(ctx, m, turnInput(turn, agent, top))
	return Outcome{}, err
}

// turnInput is the checkpoint of an agent's turn; top is the work tree.
func turnInput(turn agentturn.Turn, agent, top string) checkpoints.RecordInput {
	summary := turn.Summary
	if strings.TrimSpace(summary) == "" {
		summary = "(" + agent + " turn without a text reply)"
	}
	tools := turn.Tools
	if len(tools) == 0 {
		tools = []string{agent}
	}
	return checkpoints.RecordInput{
		Summary: summary, Session: turn.SessionID, Model: turn.Model,
		Files: relativeTo(top, turn.Files), Tools: tools, SummaryLimit: AgentSummaryLimit,
	}
}

// relativeTo rewrites absolute paths under top as paths relative to it.
func relativeTo(top string, files []string) []string {
	if top == "" || files == nil {
		return files
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f
		if filepath.IsAbs(f) {
			if rel, err := filepath.Rel(top, f); err == nil && !strings.HasPrefix(rel, "..") {
				out[i] = filepath.ToSlash(rel)
			}
		}
	}
	return out
}
