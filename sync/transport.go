// Package sync exchanges the memory branch with remotes: fetch and push
// through the git executable (so credential helpers, ssh configuration,
// insteadOf and proxies work), verification of everything a fetch brings,
// a merge that takes only what verified, quarantine of the rest, and
// retrying pushes that never force. It acts through a *workspace.Workspace
// (repository, memory branch, identity, cache) and must not import the
// capabilities beside it (internal/checkpoints, snapshots, ctxpackages).
//
// A pull decides what to merge in makePlan (merge.go): it sorts the fetched
// paths, refuses what is not a record (unsafe or unexpected paths, device
// ids, keys, trust, repository ids and the REPO file: repoid.go) and merges
// chains (mergeChain), timelines (snapshots.go) and packages (packages.go);
// every record is judged by package chain (chain.Continue,
// chain.ContinueTimeline, chain.CheckPackage) and every rejection carries a
// chain.Reason.
package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Errors callers branch on.
var (
	// ErrTransport: the remote could not be reached or refused us.
	ErrTransport = fault.Sentinel(fault.Remote, "remote or transport failure")
	// ErrRejected: the push was not a fast-forward.
	ErrRejected = fault.Sentinel(fault.Conflict, "push rejected: the remote memory branch moved")
	// ErrNoRemote: no remote to sync with.
	ErrNoRemote = fault.Sentinel(fault.Config, "no remote to sync memory with: add one with 'git remote add origin URL' or set 'git config ctx.remote NAME'")
	// ErrEmptyRemote: pushing would create ghyll/memory as the only branch.
	ErrEmptyRemote = fault.Sentinel(fault.Refused, "the remote has no branches: pushing ghyll/memory first would make it the default branch on most hosts; push your code first, or pass --force-first-push")
	// ErrFork: a device's chain forked; nothing past the fork was merged.
	ErrFork = fault.Sentinel(fault.Conflict, "a device's chain forked")
	// ErrPackageConflict: the remote holds a different package under a
	// name@version this branch already publishes; it was not merged.
	ErrPackageConflict = fault.Sentinel(fault.Conflict, "published package conflict")
	// ErrUnverified: something fetched failed verification and was not merged.
	ErrUnverified = fault.Sentinel(fault.Failed, "fetched records failed verification")
)

// DefaultTimeout bounds every network operation unless ctx.timeout says
// otherwise (seconds).
const DefaultTimeout = 120 * time.Second

// Options configures a transport.
type Options struct {
	// Interactive allows git to prompt on the terminal for credentials.
	Interactive bool
	// Progress, when set, receives git's progress output.
	Progress io.Writer
}

// ResolveRemote picks the remote: the argument, else ctx.remote, else the
// current branch's upstream remote, else origin, else the only remote.
func ResolveRemote(r *gitrepo.Repo, arg string) (string, error) {
	name := arg
	if name == "" {
		name = r.Config("ctx.remote")
	}
	if name == "" {
		if b := r.CurrentBranch(); b != "" {
			if up := r.Config("branch." + b + ".remote"); up != "" && up != "." {
				name = up
			}
		}
	}
	if name == "" {
		name = r.MemoryRemote()
	}
	if name == "" {
		return "", ErrNoRemote
	}
	if strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n:") {
		return "", fmt.Errorf("%q is not a remote name", name)
	}
	if r.Config("remote."+name+".url") == "" {
		return "", fmt.Errorf("%w: no remote named %q", ErrNoRemote, name)
	}
	return name, nil
}

// TrackingRef is where a remote's memory branch is fetched to.
func TrackingRef(remote string) string { return "refs/remotes/" + remote + "/ghyll/memory" }

func timeout(r *gitrepo.Repo) time.Duration {
	if v := r.Config("ctx.timeout"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return DefaultTimeout
}

// netEnv keeps background git non-interactive: no terminal prompts, and
// ssh in batch mode with a connect timeout unless the user configured ssh.
func netEnv(r *gitrepo.Repo, interactive bool) []string {
	if interactive {
		return nil
	}
	if os.Getenv("GIT_SSH_COMMAND") != "" || os.Getenv("GIT_SSH") != "" || r.Config("core.sshCommand") != "" {
		return nil
	}
	return []string{"GIT_SSH_COMMAND=ssh -o BatchMode=yes -o ConnectTimeout=15"}
}

func transportErr(op, remote string, err error) error {
	var ge *gitexec.Error
	msg := err.Error()
	if errors.As(err, &ge) {
		msg = lastMeaningfulLine(ge.Stderr)
		if errors.Is(ge.Err, context.DeadlineExceeded) {
			msg = "timed out (raise git config ctx.timeout, in seconds)"
		}
	}
	return fmt.Errorf("%w: %s %s: %s", ErrTransport, op, remote, msg)
}

// lastMeaningfulLine picks the line of git's stderr that says what went
// wrong: the first "fatal:" or "error:" line (without that word), else the
// last line that is not a hint.
func lastMeaningfulLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		for _, p := range []string{"fatal: ", "error: "} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), p); ok && rest != "" {
				return rest
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "hint:") {
			return l
		}
	}
	return "failed"
}

// Fetch brings the remote's memory branch into TrackingRef(remote) and
// returns its tip (ZeroHash when the remote has no memory branch).
func Fetch(ctx context.Context, st *gitstore.Store, remote string, opt Options) (plumbing.Hash, error) {
	r := st.Repo
	ctx, cancel := context.WithTimeout(ctx, timeout(r))
	defer cancel()
	// A blob past core.bigFileThreshold is streamed to disk by git's
	// index-pack and unpack-objects instead of being held whole (git's
	// default, 512 MiB, would let a fetched blob of 500 MB sit in memory);
	// no file of the branch may be larger than gitstore.MaxBlob.
	args := []string{"-c", "core.bigFileThreshold=" + strconv.Itoa(gitstore.MaxBlob), "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules"}
	if opt.Progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, remote, "+"+gitstore.BranchRef+":"+TrackingRef(remote))
	_, err := gitexec.Run(ctx, gitexec.Cmd{Dir: r.Dir, Args: args, Env: netEnv(r, opt.Interactive),
		Interactive: opt.Interactive, Stderr: opt.Progress})
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			return plumbing.ZeroHash, nil
		}
		return plumbing.ZeroHash, transportErr("fetch from", remote, err)
	}
	return st.ResolveRef(TrackingRef(remote))
}

// RemoteHasBranches reports whether the remote has any branch at all.
func RemoteHasBranches(ctx context.Context, r *gitrepo.Repo, remote string, opt Options) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout(r))
	defer cancel()
	out, err := gitexec.Run(ctx, gitexec.Cmd{Dir: r.Dir, Args: []string{"ls-remote", "--heads", remote},
		Env: netEnv(r, opt.Interactive), Interactive: opt.Interactive})
	if err != nil {
		return false, transportErr("list branches of", remote, err)
	}
	return strings.TrimSpace(string(out)) != "", nil
}

// pushOnce pushes the memory branch without force. A non-fast-forward
// rejection is ErrRejected.
func pushOnce(ctx context.Context, r *gitrepo.Repo, remote string, opt Options) error {
	ctx, cancel := context.WithTimeout(ctx, timeout(r))
	defer cancel()
	args := []string{"push", "--no-verify", "--porcelain"}
	if opt.Progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, remote, gitstore.BranchRef+":"+gitstore.BranchRef)
	out, err := gitexec.Run(ctx, gitexec.Cmd{Dir: r.Dir, Args: args, Env: netEnv(r, opt.Interactive),
		Interactive: opt.Interactive, Stderr: opt.Progress})
	if err == nil {
		return nil
	}
	text := string(out)
	var ge *gitexec.Error
	if errors.As(err, &ge) {
		text += "\n" + ge.Stderr
	}
	if strings.Contains(text, "[rejected]") || strings.Contains(text, "non-fast-forward") ||
		strings.Contains(text, "fetch first") || strings.Contains(text, "[remote rejected]") && strings.Contains(text, "cannot lock ref") {
		return ErrRejected
	}
	return transportErr("push to", remote, err)
}
