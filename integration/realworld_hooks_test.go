package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksStayInRepository: hooks install writes nothing that other
// repositories share (Codex's user configuration, a hooks directory named by
// the global git config) unless --global; such a shared entry is removed
// only with the last repository that installed it; a hooks directory inside
// the work tree is a file of the project and needs --force; the Claude
// settings file never shows up in `git status`.
func TestHooksStayInRepository(t *testing.T) {
	t.Parallel()
	t.Run("codex-shared-by-two-repositories", tstHooksCodexShared)
	t.Run("codex-uninstall-global", tstHooksCodexUninstallGlobal)
	t.Run("global-core-hooksPath", tstHooksGlobalHooksPath)
	t.Run("hooksPath-in-work-tree", tstHooksPathInWorkTree)
	t.Run("claude-settings-not-untracked", tstHooksClaudeSettingsIgnored)
}

// tstCodexNotifyLine is the line hooks install puts in Codex's config.toml.
const tstCodexNotifyLine = `notify = ["git-ctx", "hook", "codex-notify"]`

// tstHooksCodexShared: two repositories install Codex's notify (only with
// --global); it goes with the last one's uninstall, and the user's file
// comes back byte for byte.
func tstHooksCodexShared(t *testing.T) {
	t.Parallel()
	s, env := newHookSandbox(t)
	a, b, c := newRepo(t, s, "a"), newRepo(t, s, "b"), newRepo(t, s, "c")
	cfg := hkCodexConfig(env)
	writeFile(t, cfg, codexTOML)

	r := gitCtx(t, a, env, "hooks", "install", "--agent", "codex")
	wantCode(t, "install --agent codex without --global", r, 7)
	wantOneLine(t, "install --agent codex without --global", r.stderr)
	if !strings.Contains(r.stderr, "--global") || !strings.Contains(r.stderr, cfg) {
		t.Fatalf("the refusal should name the file and --global: %q", r.stderr)
	}
	tstWantFileText(t, cfg, codexTOML, "install without --global changed config.toml")

	mustCtx(t, a, env, "hooks", "install", "--agent", "codex", "--global")
	installed := string(readFile(t, cfg))
	if !strings.HasPrefix(installed, tstCodexNotifyLine+"\n") {
		t.Fatalf("config.toml after install --global:\n%s", installed)
	}
	out := mustCtx(t, b, env, "hooks", "install", "--agent", "codex", "--global")
	if !strings.Contains(out, "already") || string(readFile(t, cfg)) != installed {
		t.Fatalf("second repository's install: %q", out)
	}

	// The reported bug: one repository's uninstall removed the notify
	// another repository had installed.
	out = mustCtx(t, a, env, "hooks", "uninstall")
	if !strings.Contains(out, "still used by 1 other repository") {
		t.Fatalf("uninstall in a while b uses the notify: %q", out)
	}
	tstWantFileText(t, cfg, installed, "uninstall in a removed the notify b installed")
	// A repository that installed nothing leaves it alone.
	out = mustCtx(t, c, env, "hooks", "uninstall")
	if !strings.Contains(out, "not installed from this repository") || string(readFile(t, cfg)) != installed {
		t.Fatalf("uninstall in a repository that never installed it: %q\n%s", out, readFile(t, cfg))
	}
	if !hkHooksStatus(t, b, env).Codex {
		t.Fatal("codex not reported installed in b")
	}
	// The last user restores the user's file byte for byte.
	mustCtx(t, b, env, "hooks", "uninstall")
	tstWantFileText(t, cfg, codexTOML, "last uninstall did not restore config.toml")
	if names := hkDirNames(t, filepath.Join(filepath.Dir(cfg), ".git-ctx-backup")); len(names) != 0 {
		t.Fatalf("state left beside config.toml after the last uninstall: %q", names)
	}
}

// tstHooksCodexUninstallGlobal: uninstall --global removes Codex's notify
// for every repository.
func tstHooksCodexUninstallGlobal(t *testing.T) {
	t.Parallel()
	s, env := newHookSandbox(t)
	a, b := newRepo(t, s, "a"), newRepo(t, s, "b")
	cfg := hkCodexConfig(env)
	writeFile(t, cfg, codexTOML)
	mustCtx(t, a, env, "hooks", "install", "--agent", "codex", "--global")
	// b never installed it; --global removes it for everyone.
	mustCtx(t, b, env, "hooks", "uninstall", "--agent", "codex", "--global")
	tstWantFileText(t, cfg, codexTOML, "uninstall --global did not restore config.toml")
}

// tstHooksGlobalHooksPath: a hooks directory named by the global git config
// is written only with --global, and the user's hook there is restored after
// the last uninstall.
func tstHooksGlobalHooksPath(t *testing.T) {
	t.Parallel()
	s, env := newHookSandbox(t)
	a, b := newRepo(t, s, "a"), newRepo(t, s, "b")
	hkRequireStubHooks(t, a, env)
	shared := s.dir(t, "global-hooks")
	foreign := "#!/bin/sh\n# the user's own global hook\nexit 0\n"
	writeFile(t, filepath.Join(shared, "post-commit"), foreign)
	if err := os.Chmod(filepath.Join(shared, "post-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, a, env, "git", "config", "--global", "core.hooksPath", shared)

	r := gitCtx(t, a, env, "hooks", "install")
	wantCode(t, "install with a global core.hooksPath", r, 7)
	if !strings.Contains(r.stderr, "--global") || !strings.Contains(r.stderr, shared) {
		t.Fatalf("the refusal should name the directory and --global: %q", r.stderr)
	}
	if got := hkDirNames(t, shared); strings.Join(got, " ") != "post-commit" {
		t.Fatalf("install without --global wrote into the global hooks directory: %q", got)
	}
	if got := string(readFile(t, filepath.Join(shared, "post-commit"))); got != foreign {
		t.Fatalf("the user's global hook changed:\n%s", got)
	}

	mustCtx(t, a, env, "hooks", "install", "--global")
	mustCtx(t, b, env, "hooks", "install", "--global")
	st := hkHooksStatus(t, b, env)
	hkWantHook(t, "global hooks", st, "post-commit", true, "stub", true, false, false)
	if !strings.Contains(hkHooksStatusText(t, b, env), "every repository shares") {
		t.Fatalf("hooks status does not say the directory is shared:\n%s", hkHooksStatusText(t, b, env))
	}
	out := mustCtx(t, a, env, "hooks", "uninstall")
	if !strings.Contains(out, "still used by 1 other repository") {
		t.Fatalf("uninstall in a while b uses the global hook: %q", out)
	}
	c := hkQuietCommit(t, b, env, "b still records", map[string]string{"x": "1\n"})
	if got := hkRecordedCommits(logJSON(t, b, env)); len(got) != 1 || got[0] != c {
		t.Fatalf("b recorded %q after a's uninstall, want %s", got, c)
	}
	mustCtx(t, b, env, "hooks", "uninstall")
	if got := hkDirNames(t, shared); strings.Join(got, " ") != "post-commit" {
		t.Fatalf("global hooks directory after the last uninstall: %q", got)
	}
	if got := string(readFile(t, filepath.Join(shared, "post-commit"))); got != foreign {
		t.Fatalf("the user's global hook was not restored:\n%s", got)
	}
}

// tstHooksPathInWorkTree: a hooks directory inside the work tree is a file
// of the project: install needs --force.
func tstHooksPathInWorkTree(t *testing.T) {
	t.Parallel()
	_, env, repo := cltStubHookRepo(t)
	mustRun(t, repo, env, "git", "config", "core.hooksPath", ".githooks")
	r := gitCtx(t, repo, env, "hooks", "install")
	wantCode(t, "install into a hooks directory inside the work tree", r, 7)
	if !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stdout, "git-ctx hook post-commit || true") {
		t.Fatalf("install should print the line to add and mention --force: %s", r)
	}
	if hkExists(filepath.Join(repo, ".githooks")) {
		t.Fatal("install wrote into the work tree without --force")
	}
	if st := gitOut(t, repo, env, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree changed: %q", st)
	}
	mustCtx(t, repo, env, "hooks", "install", "--force")
	if got := hkDirNames(t, filepath.Join(repo, ".githooks")); strings.Join(got, " ") != "post-commit post-merge" {
		t.Fatalf("install --force: %q", got)
	}
	mustCtx(t, repo, env, "hooks", "uninstall")
	if got := hkDirNames(t, filepath.Join(repo, ".githooks")); len(got) != 0 {
		t.Fatalf("uninstall left %q", got)
	}
}

// tstHooksClaudeSettingsIgnored: the Claude settings file never shows up in
// git status; info/exclude is restored on uninstall and left alone when
// .gitignore covers the file.
func tstHooksClaudeSettingsIgnored(t *testing.T) {
	t.Parallel()
	_, env, repo := cltHookRepo(t)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	before := readFile(t, exclude)
	out := mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	if !strings.Contains(out, "info/exclude") {
		t.Fatalf("install does not say it ignored the settings file: %q", out)
	}
	if st := gitOut(t, repo, env, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after install --agent claude: %q", st)
	}
	mustCtx(t, repo, env, "hooks", "uninstall")
	if got := readFile(t, exclude); string(got) != string(before) {
		t.Fatalf("info/exclude after uninstall:\n%s\nwant:\n%s", got, before)
	}
	// Already ignored by the project: info/exclude is not touched.
	writeFile(t, filepath.Join(repo, ".gitignore"), ".claude/\n")
	mustCtx(t, repo, env, "hooks", "install", "--agent", "claude")
	if got := readFile(t, exclude); string(got) != string(before) {
		t.Fatalf("info/exclude changed although .gitignore covers the file:\n%s", got)
	}
}
