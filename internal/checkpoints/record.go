package checkpoints

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
	"github.com/git-ctx/git-ctx/redact"
)

// Limits on what one checkpoint may hold; bigger input is refused (workspace.ErrInput).
const (
	MaxSummary   = 64 << 10
	MaxFiles     = 1000
	MaxPathLen   = 4096
	MaxTools     = 256
	MaxListItem  = 256
	MaxEmbedding = 16384
	// CommitFiles bounds the files taken from a commit; the summary says how
	// many were left out.
	CommitFiles = 200
	// CommitBody bounds the commit message body taken into a summary.
	CommitBody = 4096
)

// RecordInput is what a caller knows about a checkpoint.
type RecordInput struct {
	Summary    string
	FromCommit string // a revision: summary and files from that commit
	// Commit, when set, is used instead of reading FromCommit.
	Commit     *gitrepo.CommitInfo
	Session    string // "" = $GIT_CTX_SESSION, else git config ctx.session
	Turn       int    // 0 = next in this session on this device
	Model      string // "" = $GIT_CTX_MODEL, else git config ctx.model
	Files      []string
	Tools      []string
	Injections []string // nil = what a briefing remembered for the session (RememberInjections), forgotten once recorded
	Embedding  []float32
	// NoRedact keeps secret-shaped text as it is. By default every string
	// is redacted before anything is cut, hashed, signed or written, and the
	// summary then says how many secrets of which kinds were removed.
	NoRedact bool
	// SummaryLimit cuts the summary (after redaction) to this many bytes,
	// "…" marking the cut; 0 means no cut beyond MaxSummary.
	SummaryLimit int
	// OncePerCommit skips the record (ErrAlreadyRecorded) when this device's
	// previous checkpoint already recorded the same commit.
	OncePerCommit bool
	// OncePerTurn skips the record (ErrAlreadyRecorded) when this device's
	// previous checkpoint has the same session and summary: a spooled agent
	// turn replayed after a crash between its append and its removal from
	// the spool.
	OncePerTurn bool
	// Branch, when set, is the branch recorded instead of the current one
	// (a spooled commit names the branch it was made on).
	Branch string
}

// ErrAlreadyRecorded: the commit was already recorded (OncePerCommit).
var ErrAlreadyRecorded = fault.Sentinel(fault.Failed, "commit already recorded")

// commitTrailer is the summary line naming the recorded commit.
const commitTrailer = "Commit: "

// Record appends one checkpoint by this device and returns it.
func Record(ctx context.Context, w *workspace.Workspace, in RecordInput) (*checkpoint.Checkpoint, error) {
	ci := in.Commit
	if ci == nil && in.FromCommit != "" {
		var err error
		if ci, err = w.Repo.Commit(ctx, in.FromCommit, CommitFiles); err != nil {
			return nil, err
		}
	}
	// Secrets are removed from the whole text before anything is cut, so
	// that no secret survives as a prefix too short to be recognised.
	var tail []string
	limit := in.SummaryLimit
	if ci != nil {
		head := ci.Subject
		if ci.Body != "" {
			head += "\n\n" + ci.Body
		}
		if in.Summary != "" {
			head = in.Summary + "\n\n" + head
		}
		in.Summary = head
		if limit == 0 || limit > len(head)-len(ci.Body)+CommitBody {
			limit = len(head) - len(ci.Body) + CommitBody
		}
		if ci.FilesOmitted > 0 {
			tail = append(tail, fmt.Sprintf("(%d more changed files not listed)", ci.FilesOmitted))
		}
		tail = append(tail, commitTrailer+ci.Hash)
		in.Files = append(in.Files, ci.Files...)
	}
	in.Session = firstNonEmpty(in.Session, os.Getenv("GIT_CTX_SESSION"), w.Repo.Config("ctx.session"))
	in.Model = firstNonEmpty(in.Model, os.Getenv("GIT_CTX_MODEL"), w.Repo.Config("ctx.model"))
	var pending []byte
	if in.Injections == nil {
		in.Injections, pending = PendingInjections(w.Repo, in.Session)
	}
	// Text is made valid UTF-8 before it is redacted, cut, hashed or signed
	// (an argument or a file name may hold Latin-1 bytes): JSON cannot carry
	// invalid bytes, and a record hashed over them would never verify.
	in = validUTF8(in)
	if !in.NoRedact {
		var note string
		in, note = redactInput(in)
		if note != "" {
			tail = append(tail, note)
		}
	}
	if limit > 0 && len(in.Summary) > limit {
		in.Summary = strings.ToValidUTF8(in.Summary[:limit], "") + "…"
	}
	for _, t := range tail {
		in.Summary += "\n\n" + t
	}
	if err := checkInput(in); err != nil {
		return nil, err
	}
	dev, err := w.Device()
	if err != nil {
		return nil, err
	}
	repoID, err := w.RepoID(ctx)
	if err != nil {
		return nil, err
	}
	_, email := w.Repo.Identity()
	draft := gitstore.Draft{
		AuthorID: email, RepoRemote: w.RepoField(repoID), Branch: firstNonEmpty(in.Branch, w.Repo.CurrentBranch()),
		SessionID: in.Session, Turn: in.Turn, ActiveModel: in.Model, Summary: in.Summary,
		Embedding: in.Embedding, FilesTouched: in.Files, ToolsUsed: in.Tools, InjectionSig: in.Injections,
	}
	res, err := w.Store.Append(ctx, gitstore.AppendRequest{
		RepoID: repoID, Device: dev, Author: w.Author(), Drafts: []gitstore.Draft{draft}, FixRepoID: true,
		Prepare: func(d *gitstore.Draft, prev *checkpoint.Checkpoint, lookup func(string) (*checkpoint.Checkpoint, error)) error {
			if recordedBefore(in, ci, d, prev) {
				return ErrAlreadyRecorded
			}
			if d.Turn == 0 {
				d.Turn = nextTurn(prev, d.SessionID, lookup)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		forgetInjections(w.Repo, in.Session, pending)
	}
	return res.Checkpoints[0], nil
}

// recordedBefore: OncePerCommit or OncePerTurn, and prev (this device's
// previous checkpoint) already records what d would.
func recordedBefore(in RecordInput, ci *gitrepo.CommitInfo, d *gitstore.Draft, prev *checkpoint.Checkpoint) bool {
	switch {
	case prev == nil:
		return false
	case in.OncePerCommit && ci != nil:
		return strings.Contains(prev.Summary, commitTrailer+ci.Hash)
	case in.OncePerTurn:
		return prev.SessionID == d.SessionID && prev.Summary == d.Summary
	}
	return false
}

// turnWalk bounds how far back along this device's chain the last turn of
// a session is looked for (only when the previous record belongs to
// another session).
const turnWalk = 2048

// nextTurn is one more than the last turn of session on this device's
// chain, found by walking back from prev; 1 when the session is new.
func nextTurn(prev *checkpoint.Checkpoint, session string, lookup func(string) (*checkpoint.Checkpoint, error)) int {
	for i := 0; prev != nil && i < turnWalk; i++ {
		if prev.SessionID == session {
			return prev.Turn + 1
		}
		if prev.ParentHash == checkpoint.ZeroHash {
			break
		}
		p, err := lookup(prev.ParentHash)
		if err != nil {
			break
		}
		prev = p
	}
	return 1
}

// validUTF8 replaces each invalid UTF-8 byte in in's text with U+FFFD.
func validUTF8(in RecordInput) RecordInput {
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	in.Summary, in.Session, in.Model = valid(in.Summary), valid(in.Session), valid(in.Model)
	for _, l := range []*[]string{&in.Files, &in.Tools, &in.Injections} {
		if *l == nil {
			continue
		}
		c := make([]string, len(*l))
		for i, s := range *l {
			c[i] = valid(s)
		}
		*l = c
	}
	return in
}

func checkInput(in RecordInput) error {
	switch {
	case strings.TrimSpace(in.Summary) == "":
		return fmt.Errorf("%w: a checkpoint needs a summary (-m TEXT, --from-commit REV or --stdin)", workspace.ErrInput)
	case len(in.Summary) > MaxSummary:
		return fmt.Errorf("%w: summary is %d bytes (limit %d)", workspace.ErrInput, len(in.Summary), MaxSummary)
	case len(in.Files) > MaxFiles:
		return fmt.Errorf("%w: %d files (limit %d)", workspace.ErrInput, len(in.Files), MaxFiles)
	case len(in.Tools) > MaxTools || len(in.Injections) > MaxTools:
		return fmt.Errorf("%w: more than %d tools or injections", workspace.ErrInput, MaxTools)
	case len(in.Embedding) > MaxEmbedding:
		return fmt.Errorf("%w: embedding has %d dimensions (limit %d)", workspace.ErrInput, len(in.Embedding), MaxEmbedding)
	case in.Turn < 0:
		return fmt.Errorf("%w: turn must not be negative", workspace.ErrInput)
	}
	for _, f := range in.Files {
		if f == "" || len(f) > MaxPathLen {
			return fmt.Errorf("%w: empty or over-long file path", workspace.ErrInput)
		}
	}
	for _, l := range [][]string{in.Tools, in.Injections} {
		for _, t := range l {
			if t == "" || len(t) > MaxListItem {
				return fmt.Errorf("%w: empty or over-long tool or injection name", workspace.ErrInput)
			}
		}
	}
	for _, s := range []string{in.Session, in.Model} {
		if len(s) > MaxListItem {
			return fmt.Errorf("%w: session or model longer than %d bytes", workspace.ErrInput, MaxListItem)
		}
	}
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// redactInput removes secret-shaped text from every string of in and
// returns the note saying how many secrets of which kinds were removed ("" if
// none).
func redactInput(in RecordInput) (RecordInput, string) {
	total := 0
	kinds := map[string]bool{}
	note := func(r redact.Result) {
		total += r.Count
		for _, k := range r.Kinds {
			kinds[k] = true
		}
	}
	one := func(s string) string {
		r := redact.String(s)
		note(r)
		return r.Text
	}
	list := func(l []string) []string {
		out, r := redact.Strings(l)
		note(r)
		return out
	}
	in.Summary = one(in.Summary)
	in.Session, in.Model = one(in.Session), one(in.Model)
	in.Files, in.Tools, in.Injections = list(in.Files), list(in.Tools), list(in.Injections)
	if total == 0 {
		return in, ""
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return in, fmt.Sprintf("[git-ctx redacted %d secret(s): %s]", total, strings.Join(names, ", "))
}
