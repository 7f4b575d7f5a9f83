package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Git hooks git-ctx can install.
const (
	PostCommit = "post-commit"
	PostMerge  = "post-merge" // installed with post-commit: merges made by `git merge` run post-merge, not post-commit
	PrePush    = "pre-push"
)

// Marker is the line that identifies git-ctx's stubs.
const Marker = "# git-ctx-hook:"

// BackupSuffix is appended to a foreign hook that a stub chains to.
const BackupSuffix = ".pre-git-ctx"

// ErrManaged: a hook manager owns the hooks; nothing was written.
var ErrManaged = fault.Sentinel(fault.Refused, "hooks are managed by a hook manager")

// ErrModified: a git-ctx stub was edited by hand; it is left alone.
var ErrModified = fault.Sentinel(fault.Conflict, "hook stub was modified")

// Stub returns the exact bytes of git-ctx's stub for hook. The post-commit
// stub (form v2) starts no process but the drainer (HEAD is read with
// shell builtins; git only when that fails): it appends HEAD to the hook spool
// (<git-common-dir>/ctx/spool/queue) and starts `git-ctx hook drain`
// detached (not with $GIT_CTX_HOOK_DEFER set: the next git-ctx command
// drains), so the commit does not wait for the checkpoint; with
// $GIT_CTX_HOOK_SYNC set it runs `git-ctx hook post-commit` and waits. The
// post-merge and pre-push stubs run `git-ctx hook <hook>` (v1): merges are
// rare, a fast-forward records nothing, and pre-push must finish before
// the push does.
func Stub(hook string) []byte {
	if hook != PostCommit {
		return stubV1(hook)
	}
	return []byte(`#!/bin/sh
# Installed by 'git ctx hooks install'; 'git ctx hooks uninstall' removes it
# and restores any hook that was here before.
` + Marker + ` ` + hook + ` v2
status=0
prev="${0%/*}/` + hook + BackupSuffix + `"
if [ -x "$prev" ]; then
	"$prev" "$@" || status=$?
fi
if ! command -v git-ctx >/dev/null 2>&1; then
	echo "git-ctx: the ` + hook + ` hook needs git-ctx on PATH: install it (./install.sh), or run 'git ctx hooks uninstall'" >&2
	exit $status
fi
if [ -n "$GIT_CTX_HOOK_SYNC" ]; then
	git-ctx hook ` + hook + ` "$@" </dev/null || true
	exit $status
fi
# HEAD, its ref and the common git dir, read with shell builtins (no
# process started); anything unusual (GIT_DIR set, a HEAD or ref that is
# not a plain file) asks git.
c= b= d=
g=.git
if [ -z "$GIT_DIR" ] && [ -f "$g" ]; then
	read -r l <"$g" && g=${l#gitdir: }
fi
if [ -z "$GIT_DIR" ] && [ -f "$g/HEAD" ] && read -r h <"$g/HEAD"; then
	d=$g
	if [ -f "$g/commondir" ] && read -r l <"$g/commondir"; then
		case "$l" in /*) d=$l ;; *) d=$g/$l ;; esac
	fi
	case "$h" in
	"ref: refs/"*) b=${h#ref: }; [ -f "$d/$b" ] && read -r c <"$d/$b" ;;
	*) b=HEAD c=$h ;;
	esac
fi
case ${#c} in
40 | 64) ;;
*)
	{ read -r d; read -r c; read -r b; } <<EOF
$(git rev-parse --git-common-dir HEAD --symbolic-full-name HEAD 2>/dev/null)
EOF
	;;
esac
case "$c" in
[0-9a-f]*)
	s="$d/ctx/spool"
	[ -d "$s" ] || mkdir -p "$s" || exit $status
	t="${CLAUDECODE:+claude-code,}${CODEX_SANDBOX:+codex,}${CODEX_SANDBOX_NETWORK_DISABLED:+codex,}${GIT_CTX_TOOLS}"
	printf '\n%s %s %s\t%s\t%s\t%s\n' ` + hook + ` "$c" "$b" "$t" "$GIT_CTX_SESSION" "$GIT_CTX_MODEL" >>"$s/queue" || exit $status
	if [ -f "$s/failed" ]; then
		read -r w <"$s/failed"
		echo "git-ctx: warning: ` + hook + ` hook: commits are waiting to be recorded: $w" >&2
	fi
	[ -n "$GIT_CTX_HOOK_DEFER" ] || nice -n 19 git-ctx hook drain </dev/null >/dev/null 2>&1 &
	;;
esac
exit $status
`)
}

// stubV1 is the stub that runs `git-ctx hook <hook>`: the post-merge and
// pre-push stubs, and the post-commit stub from before the hook spool
// (which spools too now, but starts git-ctx on every commit: hooks status
// reports it as an old form and `hooks install` rewrites it).
func stubV1(hook string) []byte {
	return []byte(`#!/bin/sh
# Installed by 'git ctx hooks install'; 'git ctx hooks uninstall' removes it
# and restores any hook that was here before.
` + Marker + ` ` + hook + ` v1
status=0
prev="$(dirname "$0")/` + hook + BackupSuffix + `"
if [ -x "$prev" ]; then
	"$prev" "$@" || status=$?
fi
if command -v git-ctx >/dev/null 2>&1; then
	git-ctx hook ` + hook + ` "$@" </dev/null || true
else
	echo "git-ctx: the ` + hook + ` hook needs git-ctx on PATH: install it (./install.sh), or run 'git ctx hooks uninstall'" >&2
fi
exit $status
`)
}

// Command is what a hook manager or a config-based hook runs.
func Command(hook string) string { return "git-ctx hook " + hook }

// HooksDir returns the directory git runs hooks from (core.hooksPath
// honoured; linked worktrees and bare repositories handled by git).
func HooksDir(ctx context.Context, r *gitrepo.Repo) (string, error) {
	out, err := gitexec.Git(ctx, r.Dir, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// GitVersion returns git's major and minor version.
func GitVersion(ctx context.Context) (int, int, error) {
	out, err := gitexec.Git(ctx, "", "version")
	if err != nil {
		return 0, 0, err
	}
	return parseGitVersion(string(out))
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at start
	return regexp.MustCompile(`git version (\d+)\.(\d+)`)
})

func parseGitVersion(s string) (int, int, error) {
	m := versionRE().FindStringSubmatch(s)
	if m == nil {
		return 0, 0, fmt.Errorf("cannot read git version from %q", strings.TrimSpace(s))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major, minor, nil
}

// ConfigHooksSupported: git 2.54 added hook.<name>.event / .command.
func ConfigHooksSupported(major, minor int) bool { return major > 2 || major == 2 && minor >= 54 }

// configHookName is git-ctx's name for a config-based hook (never an event
// name: git treats that as fatal).
func configHookName(hook string) string { return "git-ctx-" + hook }

// Manager is a detected hook manager.
type Manager struct {
	Name string // husky or lefthook (the managers DetectManagers knows)
	File string // the file to edit
}

// DetectManagers looks for hook managers in the work tree.
func DetectManagers(ctx context.Context, r *gitrepo.Repo) ([]Manager, error) {
	top, err := r.WorkTree(ctx)
	if err != nil || top == "" {
		return nil, err
	}
	var out []Manager
	hooksPath := r.Config("core.hooksPath")
	if fi, err := os.Stat(filepath.Join(top, ".husky")); err == nil && fi.IsDir() || strings.Contains(hooksPath, ".husky") {
		out = append(out, Manager{Name: "husky", File: filepath.Join(top, ".husky")})
	}
	for _, f := range []string{"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml"} {
		if _, err := os.Stat(filepath.Join(top, f)); err == nil {
			out = append(out, Manager{Name: "lefthook", File: filepath.Join(top, f)})
			break
		}
	}
	return out, nil
}

// Advice is the exact text to add to a manager's configuration for hook.
func (m Manager) Advice(hook string) string {
	switch m.Name {
	case "husky":
		return fmt.Sprintf("add this line to %s: %s || true", filepath.Join(m.File, hook), Command(hook))
	case "lefthook":
		return fmt.Sprintf("add to %s:\n%s:\n  commands:\n    git-ctx:\n      run: %s || true", m.File, hook, Command(hook))
	}
	return ""
}

// Wired reports whether the manager's configuration already runs git-ctx
// for hook.
func (m Manager) Wired(hook string) bool {
	path := m.File
	if m.Name == "husky" {
		path = filepath.Join(m.File, hook)
	}
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(Command(hook)))
}

// HookState describes one git hook.
type HookState struct {
	Hook      string
	Path      string
	Installed bool
	Via       string // stub, config, husky, lefthook
	Modified  bool   // a stub with our marker but other bytes
	Chained   bool   // a foreign hook runs first
	// OldForm: git-ctx's stub from before the hook spool (v1), which starts
	// git-ctx on every commit; `hooks install` rewrites it.
	OldForm bool
	Foreign bool // a hook that is not ours is in the way
	// Shared: the hooks directory is shared by every repository
	// (core.hooksPath in the global or system git config).
	Shared bool
}

// InstallGitHook installs hook. With a manager present (and !Force) it
// returns ErrManaged and the advice; with a foreign hook it keeps it as
// <hook>.pre-git-ctx and chains to it. A hooks directory inside the work
// tree is treated like a manager (the hook would be a file of the project);
// one shared by every repository (core.hooksPath in the global or system
// config) needs Global, and records this repository as one of its users.
// Installing again is harmless.
func InstallGitHook(ctx context.Context, r *gitrepo.Repo, hook string, opt Options) (string, error) {
	major, minor, err := GitVersion(ctx)
	if err != nil {
		return "", err
	}
	if !opt.Force {
		if msg, handled, err := viaManagers(ctx, r, hook); handled {
			return msg, err
		}
	}
	if ConfigHooksSupported(major, minor) {
		return installConfigHook(ctx, r, hook, major, minor)
	}
	return installStub(ctx, r, hook, opt)
}

// viaManagers considers every hook manager in the work tree: when one
// already runs git-ctx for hook, that is reported; otherwise, with any
// manager present, the advice for each is returned with ErrManaged. handled
// is false when there is no manager.
func viaManagers(ctx context.Context, r *gitrepo.Repo, hook string) (msg string, handled bool, err error) {
	managers, err := DetectManagers(ctx, r)
	if err != nil {
		return "", true, err
	}
	for _, m := range managers {
		if m.Wired(hook) {
			return fmt.Sprintf("%s already runs git-ctx for %s", m.Name, hook), true, nil
		}
	}
	if len(managers) == 0 {
		return "", false, nil
	}
	var advice []string
	for _, m := range managers {
		advice = append(advice, m.Advice(hook))
	}
	return strings.Join(advice, "\n"), true, fmt.Errorf("%w (%s): %s", ErrManaged, managers[0].Name, strings.Join(advice, "; or "))
}

// installConfigHook installs hook as a config-based hook (git 2.54+).
func installConfigHook(ctx context.Context, r *gitrepo.Repo, hook string, major, minor int) (string, error) {
	name := configHookName(hook)
	for k, v := range map[string]string{"event": hook, "command": Command(hook)} {
		if err := r.SetConfig(ctx, "hook."+name+"."+k, v); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s: git config hook.%s (git %d.%d config-based hook)", hook, name, major, minor), nil
}

// installStub writes git-ctx's stub for hook into the hooks directory,
// keeping a foreign hook as <hook>.pre-git-ctx.
func installStub(ctx context.Context, r *gitrepo.Repo, hook string, opt Options) (string, error) {
	loc, err := locateHooks(ctx, r)
	if err != nil {
		return "", err
	}
	dir := loc.dir
	path := filepath.Join(dir, hook)
	stub := Stub(hook)
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	exists := err == nil
	installed := exists && bytes.Equal(cur, stub)
	if msg, refused, err := refuseLocation(loc, hook, path, installed, opt); refused {
		return msg, err
	}
	if loc.shared {
		if err := gitHooksUsers(dir, hook).add(repoKey(r)); err != nil {
			return "", err
		}
	}
	if installed {
		return fmt.Sprintf("%s: already installed in %s", hook, dir), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if exists {
		if err := setAside(path, cur, opt); err != nil {
			return "", err
		}
	}
	if err := writeExecutable(path, stub); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("%s: installed in %s", hook, dir)
	if loc.shared {
		msg += " (shared by every repository through core.hooksPath in your " + loc.scope + " git config)"
	}
	if _, err := os.Stat(path + BackupSuffix); err == nil {
		msg += fmt.Sprintf(" (runs the existing hook first, kept as %s%s)", hook, BackupSuffix)
	}
	return msg, nil
}

// refuseLocation stops an install into a hooks directory shared by every
// repository (without Global; one already installed there is reported) or
// inside the work tree (without Force). refused is false when the install
// may go on.
func refuseLocation(loc hooksLocation, hook, path string, installed bool, opt Options) (msg string, refused bool, err error) {
	switch {
	case loc.shared && !opt.Global:
		if installed {
			return fmt.Sprintf("%s: already installed in %s, which core.hooksPath in your %s git config shares with every repository", hook, loc.dir, loc.scope), true, nil
		}
		return "", true, fmt.Errorf("%w: core.hooksPath in your %s git config makes every repository run the hooks in %s; "+
			"pass --global to install the %s hook there for all of them, or add '%s || true' to your own %s hook",
			ErrShared, loc.scope, loc.dir, hook, Command(hook), hook)
	case loc.inWorkTree && !opt.Force && !installed:
		advice := fmt.Sprintf("add this line to %s: %s || true", path, Command(hook))
		return advice, true, fmt.Errorf("%w (core.hooksPath %s is inside the work tree, so a hook there is a file of the project): %s; or pass --force to write git-ctx's hook file there",
			ErrManaged, loc.dir, advice)
	}
	return "", false, nil
}

// setAside makes way for the stub at path, which holds cur: an edited stub
// of ours is refused without Force (and then simply replaced); a foreign
// hook is moved to <hook>.pre-git-ctx, unless that name is taken.
func setAside(path string, cur []byte, opt Options) error {
	if bytes.Contains(cur, []byte(Marker)) {
		if !opt.Force && !bytes.Equal(cur, stubV1(filepath.Base(path))) {
			return fmt.Errorf("%w: %s was edited after git-ctx installed it; pass --force to replace it", ErrModified, path)
		}
		return nil
	}
	backup := path + BackupSuffix
	if _, err := os.Lstat(backup); err == nil {
		return fmt.Errorf("both %s and %s exist: move one away, then install again", path, backup)
	}
	return os.Rename(path, backup)
}

// writeExecutable writes data atomically with mode 0755.
func writeExecutable(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, atomicfile.Options{Perm: 0o755, Replace: true})
}

// UninstallGitHook removes exactly what InstallGitHook added: our stub
// (unless edited, without Force) and our config entries, and moves a chained
// foreign hook back into place unchanged. In a hooks directory shared by
// every repository it only drops this repository from the stub's users
// while other repositories still use it, and leaves a stub this repository
// did not install alone unless Global.
func UninstallGitHook(ctx context.Context, r *gitrepo.Repo, hook string, opt Options) (string, error) {
	var msgs []string
	name := configHookName(hook)
	if r.Config("hook."+name+".command") != "" || r.Config("hook."+name+".event") != "" {
		if err := r.RemoveConfigSection(ctx, "hook."+name); err != nil {
			return "", err
		}
		msgs = append(msgs, "removed git config hook."+name)
	}
	loc, err := locateHooks(ctx, r)
	if err != nil {
		return "", err
	}
	path := filepath.Join(loc.dir, hook)
	cur, err := os.ReadFile(path)
	ours := err == nil && (bytes.Equal(cur, Stub(hook)) || bytes.Equal(cur, stubV1(hook)) || opt.Force && bytes.Contains(cur, []byte(Marker)))
	if ours && loc.shared {
		users := gitHooksUsers(loc.dir, hook)
		was, left, uerr := users.remove(repoKey(r))
		switch {
		case uerr != nil:
			return "", uerr
		case !was && !opt.Global:
			return fmt.Sprintf("%s: the hook in %s is shared by every repository (core.hooksPath in your %s git config) and was not installed from this one: left alone (pass --global to remove it for all of them)",
				hook, loc.dir, loc.scope), nil
		case left > 0 && !opt.Global:
			return fmt.Sprintf("%s: kept in %s: still used by %s", hook, loc.dir, otherRepos(left)), nil
		}
		if err := users.write(nil); err != nil {
			return "", err
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case ours:
		if err := os.Remove(path); err != nil {
			return "", err
		}
		msgs = append(msgs, "removed "+path)
		backup := path + BackupSuffix
		if _, err := os.Lstat(backup); err == nil {
			if err := os.Rename(backup, path); err != nil {
				return "", err
			}
			msgs = append(msgs, "restored the previous "+hook+" hook")
		}
	case bytes.Contains(cur, []byte(Marker)):
		return "", fmt.Errorf("%w: %s was edited after git-ctx installed it; remove it by hand or pass --force", ErrModified, path)
	}
	if len(msgs) == 0 {
		return hook + ": not installed", nil
	}
	return hook + ": " + strings.Join(msgs, "; "), nil
}

// GitHookState reports how hook is wired.
func GitHookState(ctx context.Context, r *gitrepo.Repo, hook string) (HookState, error) {
	st := HookState{Hook: hook}
	if r.Config("hook."+configHookName(hook)+".command") != "" {
		st.Installed, st.Via = true, "config"
	}
	managers, err := DetectManagers(ctx, r)
	if err != nil {
		return st, err
	}
	for _, m := range managers {
		if m.Wired(hook) {
			st.Installed, st.Via = true, m.Name
		}
	}
	loc, err := locateHooks(ctx, r)
	if err != nil {
		return st, err
	}
	st.Path, st.Shared = filepath.Join(loc.dir, hook), loc.shared
	cur, err := os.ReadFile(st.Path)
	if err == nil {
		switch {
		case bytes.Equal(cur, Stub(hook)):
			st.Installed, st.Via = true, "stub"
		case hook == PostCommit && bytes.Equal(cur, stubV1(hook)):
			st.Installed, st.Via, st.OldForm = true, "stub", true
		case bytes.Contains(cur, []byte(Marker)):
			st.Installed, st.Via, st.Modified = true, "stub", true
		default:
			st.Foreign = !st.Installed
		}
	}
	if _, err := os.Stat(st.Path + BackupSuffix); err == nil {
		st.Chained = true
	}
	return st, nil
}
