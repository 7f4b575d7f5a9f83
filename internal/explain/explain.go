// Package explain answers a reviewer's question about code: for a code
// commit, a range of them, or a path (optionally one line of it), which
// checkpoints of the memory explain each commit — the record the
// post-commit hook made for it and the agent turns before it on that
// device and branch (the cache's commit_links, docs/FORMAT.md §9) — with
// device, session, turn, model, summary, files, tools and verification
// status. Records that failed verification are marked, never hidden:
// unverified rows of the branch, and records a pull quarantined (read from
// the remote-tracking ref the quarantine names and linked by the same
// rule). A commit without memory
// is reported with no records, so callers can say so plainly.
//
// The API, for the CLI and other front ends (an MCP tool):
//
//	spec, err := explain.ParseSpec(arg)            // "HEAD", "main..feature", "src/a.go:42"
//	report, err := explain.Explain(ctx, ws, spec)  // one Commit per code commit, oldest first
//
// Commits(ctx, ws, hashes) explains commits already resolved, and
// OnMemoryBranch tells a range of the memory branch (sync.Review's) from a
// code range. Git is run through gitexec with the caller's context; the
// package writes nothing and holds no terminal I/O (the caller makes
// others' text safe to print).
package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// MaxCommits bounds the commits one report explains (a long range or a
// path with a long history); Report.Truncated says when more were left out.
const MaxCommits = 1000

// MaxQuarantined bounds the quarantined records read from remote-tracking
// refs for one report.
const MaxQuarantined = 256

// maxArg bounds the argument of a spec.
const maxArg = 4096

// ErrSpec: the argument is not a commit, a range or a path git knows.
var ErrSpec = fault.Sentinel(fault.Refused, "not a commit, a range or a path")

// Record statuses.
const (
	StatusVerified    = "verified"
	StatusUnverified  = "unverified"  // on the branch, failed verification in the cache
	StatusQuarantined = "quarantined" // refused by a pull; read from the tracking ref
)

// SpecKind says what a Spec names.
type SpecKind string

// Spec kinds.
const (
	SpecCommit SpecKind = "commit"
	SpecRange  SpecKind = "range"
	SpecPath   SpecKind = "path"
)

// Spec is what to explain: a commit (any revision git resolves to one,
// short hashes included), a range (git's A..B or A...B), or a path, with
// Line > 0 for one line of it (the commit git blame names).
type Spec struct {
	Kind SpecKind
	Arg  string // the argument as given
	Rev  string // commit or range
	Path string
	Line int
}

// ParseSpec reads an argument: a range when it contains "..", else
// path:line when it ends in ":" and a positive number, else a revision or
// a path (decided by Explain, which asks git).
func ParseSpec(arg string) (Spec, error) {
	switch {
	case strings.TrimSpace(arg) == "":
		return Spec{}, fmt.Errorf("%w: empty argument", ErrSpec)
	case len(arg) > maxArg:
		return Spec{}, fmt.Errorf("%w: argument of %d bytes (limit %d)", ErrSpec, len(arg), maxArg)
	case strings.HasPrefix(arg, "-"):
		return Spec{}, fmt.Errorf("%w: %q starts with '-'", ErrSpec, arg)
	case strings.ContainsAny(arg, "\x00\n"):
		return Spec{}, fmt.Errorf("%w: %q holds a NUL or a newline", ErrSpec, arg)
	case strings.Contains(arg, ".."):
		return Spec{Kind: SpecRange, Arg: arg, Rev: arg}, nil
	}
	if i := strings.LastIndexByte(arg, ':'); i > 0 {
		if n, err := strconv.Atoi(arg[i+1:]); err == nil {
			if n <= 0 {
				return Spec{}, fmt.Errorf("%w: line %d of %s: lines start at 1", ErrSpec, n, arg[:i])
			}
			return Spec{Kind: SpecPath, Arg: arg, Path: arg[:i], Line: n}, nil
		}
	}
	return Spec{Kind: SpecCommit, Arg: arg, Rev: arg}, nil
}

// Record is one checkpoint linked to a commit.
type Record struct {
	Hash      string
	Kind      string // cache.LinkCommit (names the commit) or cache.LinkTurn
	Device    string
	Author    string
	Session   string
	Turn      int
	Model     string
	Branch    string
	Timestamp int64 // unix nanoseconds
	Summary   string
	Files     []string
	Tools     []string
	Verified  bool
	Status    string // StatusVerified, StatusUnverified or StatusQuarantined
	Reason    string // why it is quarantined (a chain reason), else ""
}

// Commit is one code commit and the records that explain it (none: no
// memory of it).
type Commit struct {
	Hash    string
	Subject string
	Author  string
	Time    int64 // unix seconds (committer date)
	Records []Record
}

// Report is the answer for one Spec.
type Report struct {
	Spec Spec
	// Commits, oldest first for a range, newest first for a path.
	Commits []Commit
	// Truncated: more than MaxCommits commits matched; the first
	// MaxCommits are explained.
	Truncated bool
}

// Explain resolves spec with git and explains each of its commits.
func Explain(ctx context.Context, w *workspace.Workspace, spec Spec) (*Report, error) {
	commits, truncated, err := resolve(ctx, w, &spec)
	if err != nil {
		return nil, err
	}
	if err := attach(ctx, w, commits); err != nil {
		return nil, err
	}
	return &Report{Spec: spec, Commits: commits, Truncated: truncated}, nil
}

// Commits explains the given full commit ids, in that order.
func Commits(ctx context.Context, w *workspace.Workspace, hashes []string) ([]Commit, error) {
	out := make([]Commit, 0, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	headers, _, err := gitCommits(ctx, w, append([]string{"--no-walk=unsorted", "--end-of-options"}, hashes...), "commits")
	if err != nil {
		return nil, err
	}
	byHash := make(map[string]Commit, len(headers))
	for _, c := range headers {
		byHash[c.Hash] = c
	}
	for _, h := range hashes {
		c := byHash[h]
		c.Hash = h
		out = append(out, c)
	}
	return out, attach(ctx, w, out)
}

// attach fills each commit's Records.
func attach(ctx context.Context, w *workspace.Workspace, commits []Commit) error {
	if len(commits) == 0 {
		return nil
	}
	l, err := openLinker(ctx, w)
	if err != nil {
		return err
	}
	defer l.close()
	for i := range commits {
		if commits[i].Records, err = l.records(ctx, commits[i].Hash); err != nil {
			return err
		}
	}
	return nil
}

// Links returns the checkpoints of the memory linked to one commit (any
// revision git resolves to a commit, short hashes included), verified or
// not, and the commit's full id: `git ctx log --commit` and `show COMMIT`.
// Records a pull quarantined are not in the memory: Explain reports them.
func Links(ctx context.Context, w *workspace.Workspace, rev string) (string, []cache.Link, error) {
	spec, err := ParseSpec(rev)
	if err != nil {
		return "", nil, err
	}
	if spec.Kind != SpecCommit {
		return "", nil, fmt.Errorf("%w: %q is not one commit", ErrSpec, rev)
	}
	hash, err := resolveCommit(ctx, w, rev)
	if err != nil {
		return "", nil, err
	}
	if hash == "" {
		return "", nil, fmt.Errorf("%w: %q is not a commit of this repository", ErrSpec, rev)
	}
	l, err := openLinker(ctx, w)
	if err != nil {
		return "", nil, err
	}
	defer l.close()
	links, err := l.db.Links(ctx, l.ids, hash)
	return hash, links, err
}

// ResolveCommit returns the full id of the commit rev names, or "" when
// git resolves it to no commit.
func ResolveCommit(ctx context.Context, w *workspace.Workspace, rev string) (string, error) {
	if _, err := ParseSpec(rev); err != nil || strings.Contains(rev, "..") {
		return "", nil
	}
	return resolveCommit(ctx, w, rev)
}

func resolveCommit(ctx context.Context, w *workspace.Workspace, rev string) (string, error) {
	out, err := gitexec.Git(ctx, w.Repo.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && ctx.Err() == nil {
			return "", nil // not a commit (rev-parse --quiet says nothing)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// OnMemoryBranch reports whether rng (a review range, or one revision)
// is about the memory branch rather than code: it names ghyll/memory (the
// branch or a tracking ref of it), or one of its ends shares history with
// the branch (a code commit never does: the branch is an orphan).
// `git ctx review` reviews the first as records added, the second with
// Explain.
func OnMemoryBranch(ctx context.Context, w *workspace.Workspace, rng string) (bool, error) {
	tip, err := w.Store.Tip()
	if err != nil || tip.IsZero() {
		return false, err
	}
	if strings.Contains(rng, "ghyll/memory") {
		return true, nil // a name of the memory branch or its tracking ref, whatever it holds
	}
	ends := []string{rng}
	if i := strings.Index(rng, ".."); i >= 0 {
		ends = []string{rng[:i], strings.TrimPrefix(rng[i+2:], ".")}
	}
	for _, end := range ends {
		if end == "" {
			end = "HEAD"
		}
		if strings.HasPrefix(end, "-") {
			return false, fmt.Errorf("%w: bad range %q", workspace.ErrInput, rng)
		}
		c, err := resolveCommit(ctx, w, end)
		if err != nil {
			return false, err
		}
		if c == "" {
			continue
		}
		if c == tip.String() {
			return true, nil
		}
		// The memory branch is an orphan: a code commit has no common
		// ancestor with it (merge-base exits 1 and prints nothing).
		out, err := gitexec.Git(ctx, w.Repo.Dir, "merge-base", c, tip.String())
		if err != nil && ctx.Err() != nil {
			return false, err
		}
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return true, nil
		}
	}
	return false, nil
}

// resolve lists spec's commits with their headers, one git call each
// (two for path:line), and completes spec.
func resolve(ctx context.Context, w *workspace.Workspace, spec *Spec) ([]Commit, bool, error) {
	limit := "-n" + strconv.Itoa(MaxCommits+1)
	switch spec.Kind {
	case SpecRange:
		return gitCommits(ctx, w, []string{"--reverse", "--topo-order", "--end-of-options", spec.Rev}, spec.Arg)
	case SpecPath:
		if spec.Line == 0 {
			return gitCommits(ctx, w, []string{limit, "--end-of-options", "HEAD", "--", spec.Path}, spec.Arg)
		}
		hash, err := blame(ctx, w, spec)
		if err != nil {
			return nil, false, err
		}
		return gitCommits(ctx, w, []string{"--no-walk", "--end-of-options", hash}, spec.Arg)
	}
	// A revision (one commit), else a path git knows.
	commits, _, err := gitCommits(ctx, w, []string{"--no-walk", "--end-of-options", spec.Rev + "^{commit}"}, spec.Arg)
	if err == nil && len(commits) == 1 {
		return commits, false, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	spec.Kind, spec.Path, spec.Rev = SpecPath, spec.Arg, ""
	commits, truncated, err := gitCommits(ctx, w, []string{limit, "--end-of-options", "HEAD", "--", spec.Path}, spec.Arg)
	if err != nil || len(commits) == 0 {
		return nil, false, fmt.Errorf("%w: %q is neither a commit nor a path with history in this repository", ErrSpec, spec.Arg)
	}
	return commits, truncated, nil
}

// commitFormat is git log's format for a Commit's header (NUL-separated,
// one commit per line).
const commitFormat = "--format=%H%x00%s%x00%an <%ae>%x00%ct"

// gitCommits runs `git log` with args (which end in revisions, or in
// "--" and paths) and reads each commit's header, at most MaxCommits of
// them (truncated says more were listed).
func gitCommits(ctx context.Context, w *workspace.Workspace, args []string, what string) ([]Commit, bool, error) {
	full := append([]string{"log", "--no-show-signature", commitFormat}, args...)
	if !slices.Contains(args, "--") {
		full = append(full, "--")
	}
	out, err := gitexec.Git(ctx, w.Repo.Dir, full...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("%w: %s: %v", ErrSpec, what, err)
	}
	commits := []Commit{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) < 4 {
			continue
		}
		if len(commits) == MaxCommits {
			return commits, true, nil
		}
		t, _ := strconv.ParseInt(f[3], 10, 64)
		commits = append(commits, Commit{Hash: f[0], Subject: f[1], Author: f[2], Time: t})
	}
	return commits, false, nil
}

// blame returns the commit that last changed spec.Line of spec.Path in
// HEAD.
func blame(ctx context.Context, w *workspace.Workspace, spec *Spec) (string, error) {
	l := strconv.Itoa(spec.Line)
	out, err := gitexec.Git(ctx, w.Repo.Dir, "blame", "--porcelain", "-L", l+","+l, "HEAD", "--", spec.Path)
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", fmt.Errorf("%w: %s: %v", ErrSpec, spec.Arg, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	hash, _, _ := strings.Cut(first, " ")
	if len(hash) != 40 && len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: %s: git blame named no commit", ErrSpec, spec.Arg)
	}
	return hash, nil
}

// linker reads the records linked to commits: the cache's links, and the
// records pulls quarantined that name a commit.
type linker struct {
	w      *workspace.Workspace
	db     *cache.DB
	ids    []string
	quar   map[string][]Record // commit → quarantined records naming it
	loaded bool
}

func openLinker(ctx context.Context, w *workspace.Workspace) (*linker, error) {
	tip, err := w.Store.Tip()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, gitstore.ErrNotInitialized
	}
	ids, err := w.RepoIDs(ctx)
	if err != nil {
		return nil, err
	}
	db, err := w.Cache(ctx)
	if err != nil {
		return nil, err
	}
	return &linker{w: w, db: db, ids: ids}, nil
}

func (l *linker) close() { l.db.Close() }

// records returns what is linked to commit: the cache's rows (verified or
// not), then the quarantined records naming it.
func (l *linker) records(ctx context.Context, commit string) ([]Record, error) {
	links, err := l.db.Links(ctx, l.ids, commit)
	if err != nil {
		return nil, err
	}
	out := []Record{}
	for _, k := range links {
		out = append(out, fromEntry(k.Entry, k.Kind))
	}
	if !l.loaded {
		if err := l.loadQuarantine(ctx); err != nil {
			return nil, err
		}
	}
	return append(out, l.quar[commit]...), nil
}

func fromEntry(e *cache.Entry, kind string) Record {
	r := Record{Hash: e.Hash, Kind: kind, Device: e.DeviceID, Author: e.AuthorID, Session: e.SessionID, Turn: e.Turn,
		Model: e.ActiveModel, Branch: e.Branch, Timestamp: e.Timestamp, Summary: e.Summary,
		Files: e.FilesTouched, Tools: e.ToolsUsed, Verified: e.Verified, Status: StatusVerified}
	if !e.Verified {
		r.Status = StatusUnverified
	}
	return r
}

// loadQuarantine reads the records pulls quarantined from the
// remote-tracking refs that hold them: for each device of this repository
// a quarantine row names (a record, or the whole device), the last
// MaxQuarantined records of its chain on that ref that the local memory
// lacks, linked to commits in memory by the rule of the cache
// (linkChain). Nothing is verified here: every such record is reported
// as quarantined, with the row's reason. What cannot be read is skipped.
func (l *linker) loadQuarantine(ctx context.Context) error {
	l.loaded, l.quar = true, map[string][]Record{}
	var rows []cache.Quarantined
	for _, id := range l.ids {
		q, err := l.db.Quarantine(ctx, id)
		if err != nil {
			return err
		}
		rows = append(rows, q...)
	}
	views := map[string]*gitstore.View{}
	done := map[string]bool{}
	for _, q := range rows {
		key := q.Ref + "\x00" + q.RepoID + "\x00" + q.Device
		if q.Ref == gitstore.BranchRef || q.RepoID == "" || q.Device == "" || done[key] {
			continue
		}
		done[key] = true
		v, ok := views[q.Ref]
		if !ok {
			if c, err := l.w.Store.ResolveRef(q.Ref); err == nil && !c.IsZero() {
				v, _ = l.w.Store.ViewAt(c)
			}
			views[q.Ref] = v
		}
		if v == nil {
			continue
		}
		if err := l.quarantinedChain(ctx, v, q); err != nil {
			return err
		}
	}
	return nil
}

// quarantinedChain links the records of q's device on v that the local
// memory lacks (at most the last MaxQuarantined).
func (l *linker) quarantinedChain(ctx context.Context, v *gitstore.View, q cache.Quarantined) error {
	entries, err := v.Chain(q.RepoID, q.Device)
	if err != nil || len(entries) == 0 {
		return nil
	}
	if len(entries) > MaxQuarantined {
		entries = entries[len(entries)-MaxQuarantined:]
	}
	var recs []Record
	for _, en := range entries {
		if e, err := l.db.Get(ctx, en.Hash); err != nil {
			return err
		} else if e != nil {
			continue // merged: the cache speaks for it
		}
		cp, err := v.Checkpoint(q.RepoID, en.Hash)
		if err != nil || cp.Hash != en.Hash || cp.DeviceID != q.Device {
			continue
		}
		recs = append(recs, Record{Hash: cp.Hash, Device: cp.DeviceID, Author: cp.AuthorID,
			Session: cp.SessionID, Turn: cp.Turn, Model: cp.ActiveModel, Branch: cp.Branch, Timestamp: cp.Timestamp,
			Summary: cp.Summary, Files: cp.FilesTouched, Tools: cp.ToolsUsed, Status: StatusQuarantined, Reason: q.Reason})
	}
	for commit, linked := range linkChain(recs) {
		l.quar[commit] = append(l.quar[commit], linked...)
	}
	return nil
}

// linkChain applies the cache's link rule (docs/FORMAT.md §9,
// commit_links) to one device's records in chain order: a record naming
// a commit links to it, with the records of its branch since the previous
// such record on that branch (of its session, when it has one).
func linkChain(recs []Record) map[string][]Record {
	out := map[string][]Record{}
	pending := map[string][]Record{} // branch → records since its last commit record
	for _, r := range recs {
		commit := cache.CommitTrailer(r.Summary)
		if commit == "" {
			pending[r.Branch] = append(pending[r.Branch], r)
			continue
		}
		for _, p := range pending[r.Branch] {
			if r.Session == "" || p.Session == r.Session {
				p.Kind = cache.LinkTurn
				out[commit] = append(out[commit], p)
			}
		}
		pending[r.Branch] = nil
		r.Kind = cache.LinkCommit
		out[commit] = append(out[commit], r)
	}
	return out
}

// Log is `git ctx log --commit REV`: the memory's checkpoints linked to
// the commit rev names, newest first (ties by device, then chain
// position, as log orders), at most limit of them (0: all).
func Log(ctx context.Context, w *workspace.Workspace, rev string, limit int) ([]*cache.Entry, error) {
	_, links, err := Links(ctx, w, rev)
	if err != nil {
		return nil, err
	}
	out := make([]*cache.Entry, 0, len(links))
	for _, l := range links {
		out = append(out, l.Entry)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Timestamp != b.Timestamp {
			return a.Timestamp > b.Timestamp
		}
		if a.DeviceID != b.DeviceID {
			return a.DeviceID < b.DeviceID
		}
		return a.Seq > b.Seq
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
