// Package doctor checks a git-ctx setup and explains what to fix: git,
// identity and key permissions, the memory branch and its layout, hook
// wiring (and hook managers) and the hook spool, the MCP server's registration, remote tracking and unpushed memory, cache
// freshness, quarantined records and repository health.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/hooks"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// Level of a finding.
const (
	OK   = "OK"
	Warn = "WARN"
	Fail = "FAIL"
)

// Finding is one line of the report.
type Finding struct {
	Level  string
	Check  string
	Detail string
	Fix    string
}

// Report is the whole diagnosis.
type Report struct {
	Findings []Finding
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Level == Fail {
			return true
		}
	}
	return false
}

func (r *Report) add(level, check, fix, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Level: level, Check: check, Detail: fmt.Sprintf(format, args...), Fix: fix})
}

// Run diagnoses the repository containing dir. It only reads: nothing is
// created, refreshed or fixed.
func Run(ctx context.Context, dir string) (*Report, error) {
	r := &Report{}
	checkGit(ctx, r)
	m, err := workspace.Open(ctx, dir)
	if err != nil {
		r.add(Fail, "repository", "run git ctx inside a git repository", "%v", err)
		return r, nil
	}
	id, err := m.Identity()
	if err != nil {
		r.add(Fail, "identity", fixFor(err), "%v", err)
	} else {
		r.add(OK, "identity", "", "device %s, key %s in %s", id.DeviceID, checkpoint.Fingerprint(id.Public), id.KeyPath)
	}
	v, err := m.Store.View()
	switch {
	case errors.Is(err, gitstore.ErrNotInitialized):
		r.add(Fail, "memory branch", "run git ctx init", "refs/heads/ghyll/memory does not exist")
	case err != nil:
		r.add(Fail, "memory branch", "run git ctx verify to see what is damaged", "%v", err)
	default:
		r.add(OK, "memory branch", "", "ghyll/memory at %s, layout %s", v.Commit.String()[:12], v.Layout)
		if id != nil {
			pub, _, kerr := v.DeviceKey(id.DeviceID)
			switch {
			case errors.Is(kerr, gitstore.ErrNotExist):
				r.add(Warn, "device key", "run git ctx init (or record a checkpoint) to publish it", "this device's key is not on the branch yet")
			case kerr != nil || !pub.Equal(id.Public):
				r.add(Fail, "device key", "pick another device id: git config ctx.device NEW-ID", "the branch holds a different key for device %s", id.DeviceID)
			default:
				r.add(OK, "device key", "", "published and matching")
			}
		}
		if repoID, err := m.RepoID(ctx); err != nil {
			r.add(Fail, "repository id", fixFor(err), "%v", err)
		} else {
			r.add(OK, "repository id", "", "%s (%s)", short(repoID), orNone(m.Repo.RemoteURL()))
			checkOwnChain(ctx, r, m)
			checkRepoIDs(ctx, r, m)
		}
	}
	checkHooks(ctx, r, m)
	checkMCP(ctx, r, m, exec.LookPath)
	if v != nil {
		checkRemote(ctx, r, m)
		checkCache(ctx, r, m, v)
	}
	checkRepo(ctx, r, m)
	return r, nil
}

// checkOwnChain: a record of this device that fails verification poisons
// every later one (they link to it); the fix is a new chain under a new id.
func checkOwnChain(ctx context.Context, r *Report, m *workspace.Workspace) {
	f, err := checkpoints.OwnChainFailure(ctx, m)
	switch {
	case err != nil:
		r.add(Warn, "own chain", "", "cannot verify this device's chain: %v", err)
	case f != nil:
		r.add(Fail, "own chain", workspace.NewChainCommand(),
			"this device's chain fails verification at entry %d (%s, checkpoint %s: %s): every later record links to it, so teammates quarantine them all; signed history cannot be repaired in place, start a new chain under a new device id (records that verified stay)",
			f.Index+1, f.Reason, short(f.Hash), f.Detail)
	default:
		r.add(OK, "own chain", "", "this device's records verify")
	}
}

func checkGit(ctx context.Context, r *Report) {
	major, minor, err := hooks.GitVersion(ctx)
	switch {
	case err != nil:
		r.add(Fail, "git", "install git 2.31 or later", "%v", err)
	case major < 2 || major == 2 && minor < 31:
		r.add(Fail, "git", "install git 2.31 or later", "git %d.%d is too old", major, minor)
	case hooks.ConfigHooksSupported(major, minor):
		r.add(OK, "git", "", "git %d.%d (config-based hooks available)", major, minor)
	default:
		r.add(OK, "git", "", "git %d.%d", major, minor)
	}
	if _, err := exec.LookPath("git-ctx"); err != nil {
		r.add(Warn, "PATH", "run ./install.sh and put its bin directory on PATH", "git-ctx is not on PATH: hooks cannot run it")
	}
}

func fixFor(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "run "); i >= 0 {
		return msg[i:]
	}
	return ""
}

func checkHooks(ctx context.Context, r *Report, m *workspace.Workspace) {
	st, err := hooks.GetStatus(ctx, m.Repo, exec.LookPath)
	if err != nil {
		r.add(Warn, "hooks", "", "cannot read hook state: %v", err)
		return
	}
	for _, h := range st.Hooks {
		switch {
		case h.Hook == hooks.PostCommit && !h.Installed && len(st.Managers) > 0:
			r.add(Warn, "post-commit hook", fmt.Sprintf("add '%s' to your %s configuration", hooks.Command(h.Hook), strings.Join(st.Managers, "/")),
				"not wired: %s manages hooks here", strings.Join(st.Managers, ", "))
		case h.Hook == hooks.PostCommit && !h.Installed:
			r.add(Warn, "post-commit hook", "run git ctx hooks install", "not installed: commits are not recorded automatically")
		case h.Modified:
			r.add(Warn, h.Hook+" hook", "run git ctx hooks install --force to restore it", "the git-ctx stub was edited by hand")
		case h.OldForm:
			r.add(Warn, h.Hook+" hook", "run git ctx hooks install", "the old form of the stub: it starts git-ctx on every commit instead of spooling the commit")
		case h.Installed:
			r.add(OK, h.Hook+" hook", "", "installed (%s)", h.Via)
		}
	}
	if strings.Contains(st.LastRun, " error: ") {
		r.add(Warn, "last hook run", "see "+hooks.LogFile(m.Repo), "%s", st.LastRun)
	}
	checkSpool(r, m)
}

// checkMCP: the MCP server registration in the project's .mcp.json
// (Claude Code) and in Codex's configuration: a file that does not parse,
// a "git-ctx" server that runs something else, or a server agents cannot
// start because git-ctx is not on PATH.
func checkMCP(ctx context.Context, r *Report, m *workspace.Workspace, lookPath func(string) (string, error)) {
	const check = "MCP server registration"
	top, err := m.Repo.WorkTree(ctx)
	if err != nil || top == "" {
		return
	}
	st := hooks.ClaudeMCPState(top)
	codex := hooks.CodexMCPInstalled()
	var where []string
	switch {
	case st.Problem != "":
		r.add(Fail, check, "fix "+st.Path+" (or remove it), then run git ctx hooks install --agent claude --mcp", "%s", st.Problem)
		return
	case st.Registered && !st.Ours:
		r.add(Warn, check, "run git ctx hooks install --agent claude --mcp --force to replace it", "%s registers a server named %s that does not run 'git ctx mcp'", st.Path, hooks.MCPServerName)
		return
	case st.Ours:
		where = append(where, st.Path)
	}
	if codex {
		where = append(where, "Codex's configuration")
	}
	if len(where) == 0 {
		r.add(OK, check, "", "not registered (optional: git ctx hooks install --agent claude --mcp)")
		return
	}
	bin, err := lookPath("git-ctx")
	if err != nil {
		r.add(Fail, check, "install git-ctx on PATH (./install.sh)", "registered in %s, but git-ctx is not on PATH: 'git ctx mcp' cannot start", strings.Join(where, " and "))
		return
	}
	if !companionInstalled(bin, lookPath) {
		r.add(Fail, check, "install both executables: ./install.sh (or make install)",
			"registered in %s, but git-ctx-full, which the installed git-ctx hands 'git ctx mcp' to, is neither beside %s nor on PATH", strings.Join(where, " and "), bin)
		return
	}
	r.add(OK, check, "", "'git ctx mcp' registered in %s", strings.Join(where, " and "))
}

// companionInstalled: git-ctx-full, which the shipped (lean) git-ctx
// hands `git ctx mcp` and s3:// session stores to, is beside bin (the
// git-ctx on PATH, symlinks resolved) or on PATH, as the hand-off finds it
// (cmd/git-ctx/companion.go).
func companionInstalled(bin string, lookPath func(string) (string, error)) bool {
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(bin), "git-ctx-full")); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return true
	}
	_, err := lookPath("git-ctx-full")
	return err == nil
}

// checkSpool warns about hook entries spooled long ago and still not
// recorded (no drainer ran, or every drain failed).
func checkSpool(r *Report, m *workspace.Workspace) {
	sp := hooks.Pending(m.Repo)
	switch {
	case sp.Pending == 0:
	case sp.Failed != "":
		r.add(Warn, "hook spool", "fix the error, then run git ctx hook drain (or any git ctx command)",
			"%d spooled hook entries not recorded: the last drain failed: %s", sp.Pending, sp.Failed)
	case time.Since(sp.Oldest) > hooks.StaleSpool:
		r.add(Warn, "hook spool", "run git ctx hook drain (or any git ctx command)",
			"%d spooled hook entries not recorded for %s", sp.Pending, time.Since(sp.Oldest).Round(time.Second))
	default:
		r.add(OK, "hook spool", "", "%d entries being recorded", sp.Pending)
	}
}

func checkRemote(ctx context.Context, r *Report, m *workspace.Workspace) {
	remote, err := ctxsync.ResolveRemote(m.Repo, "")
	if err != nil {
		r.add(Warn, "remote", "git remote add origin URL (or git config ctx.remote NAME)", "no remote: memory stays on this machine")
		return
	}
	tracked, _ := m.Store.ResolveRef(ctxsync.TrackingRef(remote))
	tip, _ := m.Store.Tip()
	switch {
	case tracked.IsZero():
		r.add(Warn, "remote", "run git ctx sync", "%s: the memory branch was never pushed or fetched", remote)
	case tracked == tip:
		r.add(OK, "remote", "", "%s: in step with the last fetch or push", remote)
	default:
		ahead, _ := m.Store.IsAncestor(ctx, tracked, tip)
		if ahead {
			out, _ := gitexec.Git(ctx, m.Repo.Dir, "rev-list", "--count", tracked.String()+".."+tip.String())
			r.add(Warn, "unpushed memory", "run git ctx push", "%s memory commits not pushed to %s", strings.TrimSpace(string(out)), remote)
		} else {
			r.add(Warn, "remote", "run git ctx sync", "%s has memory this branch has not merged", remote)
		}
	}
}

func checkCache(ctx context.Context, r *Report, m *workspace.Workspace, v *gitstore.View) {
	db, err := cache.Open(ctx, m.CacheDir())
	if errors.Is(err, cache.ErrMissing) {
		r.add(OK, "cache", "", "not built yet (the next read builds it)")
		return
	}
	if cache.IsUnwritable(err) {
		r.add(Warn, "cache", "make the repository writable to keep one", "%s is read-only: the cache is not kept (each read builds a temporary one from the branch)", m.CacheDir())
		return
	}
	if err != nil {
		r.add(Fail, "cache", "run git ctx reindex", "%v", err)
		return
	}
	defer db.Close()
	tip, err := db.Tip(ctx, gitstore.BranchRef)
	if err != nil {
		r.add(Fail, "cache", "run git ctx reindex", "%v", err)
		return
	}
	if tip != v.Commit.String() {
		r.add(Warn, "cache", "it refreshes on the next read; or run git ctx reindex", "stale: indexed %s, the branch is at %s", short(tip), v.Commit.String()[:12])
	} else {
		r.add(OK, "cache", "", "up to date")
	}
	if repoID, err := m.RepoID(ctx); err == nil {
		if q, err := db.Quarantine(ctx, repoID); err == nil && len(q) > 0 {
			r.add(Warn, "unverified records", "see git ctx log --unverified", "%d records failed verification and are not trusted", len(q))
		}
	}
}

// checkRepoIDs reports a ctx.repoId that disagrees with the id fixed on the
// branch, and records under ids that are neither this one nor adopted.
func checkRepoIDs(ctx context.Context, r *Report, m *workspace.Workspace) {
	if over, err := m.RepoIDOverride(); err == nil && over != "" {
		r.add(Warn, "repository id override", "unset it: git config --unset ctx.repoId",
			"git config ctx.repoId (%s) differs from the id fixed on the branch, which is used", over)
	}
	others, err := m.OtherRepos(ctx)
	if err != nil {
		r.add(Fail, "other repository ids", "run git ctx verify", "%v", err)
		return
	}
	for _, o := range others {
		r.add(Warn, "other repository id", "if they are this repository's: git ctx adopt "+o.ID,
			"repos/%s holds %d checkpoints that are not this repository's", o.ID, o.Checkpoints)
	}
}

func checkRepo(ctx context.Context, r *Report, m *workspace.Workspace) {
	if v := strings.ToLower(m.Repo.Config("extensions.refStorage")); v != "" && v != "files" {
		r.add(Fail, "ref storage", "git-ctx needs the files ref backend", "%s", v)
	}
	out, err := gitexec.Git(ctx, m.Repo.Dir, "count-objects", "-v")
	if err != nil {
		return
	}
	vals := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			vals[k] = n
		}
	}
	limit := 6700
	if s := m.Repo.Config("gc.auto"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	if limit > 0 && vals["count"] > limit*8/10 {
		r.add(Warn, "loose objects", "run git gc (or git maintenance run) when convenient", "%d loose objects (gc.auto %d): the next git command may start an automatic gc", vals["count"], limit)
	} else {
		r.add(OK, "loose objects", "", "%d loose, %d packs", vals["count"], vals["packs"])
	}
	if msg := gitstore.RepackFailure(m.Repo.CommonDir); msg != "" {
		r.add(Warn, "background repack", "see .git/ctx/repack.log; git-ctx retries after ever longer waits",
			"the last background repack failed: %s", msg)
	}
	if entries, err := os.ReadDir(filepath.Join(m.Repo.CommonDir, "worktrees")); err == nil && len(entries) > 0 {
		r.add(OK, "worktrees", "", "%d linked worktrees share this memory", len(entries))
	}
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "nothing"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no remote"
	}
	return s
}
