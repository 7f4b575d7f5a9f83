package integration

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksChainForeignHook: a post-commit hook that was there keeps
// running, exactly once per commit and before git-ctx's; install is
// idempotent; an edited stub is neither replaced nor removed without
// --force; uninstall puts the original back byte for byte, mode included.
func TestHooksChainForeignHook(t *testing.T) {
	t.Parallel()
	s, env, repo := cltStubHookRepo(t)
	hooksDir := filepath.Join(hkCommonDir(t, repo, env), "hooks")
	hook := filepath.Join(hooksDir, "post-commit")
	backup := hook + ".pre-git-ctx"
	runs := filepath.Join(s.root, "foreign-runs.txt")

	// The foreign hook appends "<HEAD> <memory tip>" per run: the tip shows
	// whether git-ctx had recorded the commit before it ran.
	foreign := "#!/bin/sh\n# the team's own post-commit hook\n" +
		"tip=$(git rev-parse -q --verify refs/heads/ghyll/memory || echo none)\n" +
		"echo \"$(git rev-parse HEAD) $tip\" >> '" + runs + "'\n"
	hkWriteExec(t, hook, foreign, 0o750)

	stub, names := tstForeignInstall(t, repo, env, hooksDir, foreign)
	// Installing again changes nothing: one stub, one backup.
	mustCtx(t, repo, env, "hooks", "install")
	if got := hkDirNames(t, hooksDir); strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("hooks directory after a second install: %q, want %q", got, names)
	}
	if !bytes.Equal(readFile(t, hook), stub) || string(readFile(t, backup)) != foreign {
		t.Fatal("a second install changed the stub or the backup")
	}
	tstForeignCommits(t, repo, env, runs)
	tstForeignEditedStub(t, repo, env, hook, foreign, stub)
	tstForeignUninstall(t, repo, env, hooksDir, foreign, runs)
}

// tstForeignInstall: before install, status names the foreign post-commit
// hook; install keeps it as post-commit.pre-git-ctx (content and mode) and
// puts a stub that runs it first. Returns the stub and the hooks
// directory's names.
func tstForeignInstall(t *testing.T, repo string, env []string, hooksDir, foreign string) (stub []byte, names []string) {
	t.Helper()
	hook := filepath.Join(hooksDir, "post-commit")
	backup := hook + ".pre-git-ctx"
	st := hkHooksStatus(t, repo, env)
	hkWantHook(t, "before install", st, "post-commit", false, "", false, false, true)
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "post-commit", "not installed (another hook is there")

	out := mustCtx(t, repo, env, "hooks", "install")
	if !strings.Contains(out, "post-commit.pre-git-ctx") {
		t.Fatalf("install over a foreign hook should say it is kept: %q", out)
	}
	if got := string(readFile(t, backup)); got != foreign || hkFileMode(t, backup) != 0o750 {
		t.Fatalf("the foreign hook was not kept as is: mode %v, %q", hkFileMode(t, backup), got)
	}
	stub = readFile(t, hook)
	if !bytes.Contains(stub, []byte("# git-ctx-hook: post-commit")) || hkFileMode(t, hook)&0o111 == 0 {
		t.Fatalf("post-commit stub: mode %v\n%s", hkFileMode(t, hook), stub)
	}
	names = hkDirNames(t, hooksDir)
	if strings.Join(names, " ") != "post-commit post-commit.pre-git-ctx post-merge" {
		t.Fatalf("hooks directory after install: %q", names)
	}
	st = hkHooksStatus(t, repo, env)
	hkWantHook(t, "after install", st, "post-commit", true, "stub", true, false, false)
	hkWantHook(t, "after install", st, "post-merge", true, "stub", false, false, false)
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "post-commit", "installed (stub), runs the previous hook first")
	return stub, names
}

// tstForeignCommits: each commit runs the foreign hook once, before
// git-ctx records it.
func tstForeignCommits(t *testing.T, repo string, env []string, runs string) {
	t.Helper()
	for i, msg := range []string{"first", "second"} {
		// The previous commit's detached drainer may still be recording:
		// a command drains first, waiting for the spool's lock (a detached
		// `hook drain` would not wait), so the tip is settled after it.
		mustCtx(t, repo, env, "log", "-n", "1")
		tipBefore := gitOut(t, repo, env, "rev-parse", memRef)
		c := hkQuietCommit(t, repo, env, msg, map[string]string{msg + ".txt": msg + "\n"})
		lines := strings.Split(strings.TrimSuffix(string(readFile(t, runs)), "\n"), "\n")
		if len(lines) != i+1 {
			t.Fatalf("after %d commits the foreign hook ran %d times:\n%q", i+1, len(lines), lines)
		}
		if lines[i] != c+" "+tipBefore {
			t.Fatalf("foreign hook run %d saw %q, want %q (it must run before git-ctx records)", i, lines[i], c+" "+tipBefore)
		}
	}
	if got := hkRecordedCommits(hkOldestFirst(t, repo, env)); len(got) != 2 {
		t.Fatalf("%d checkpoints for 2 commits", len(got))
	}

}

// tstForeignEditedStub: an edited stub: install refuses (exit 6),
// uninstall keeps it (exit 6); with --force install replaces it keeping the
// chain, and uninstall removes it and restores the original.
func tstForeignEditedStub(t *testing.T, repo string, env []string, hook, foreign string, stub []byte) {
	t.Helper()
	backup := hook + ".pre-git-ctx"
	edited := append(append([]byte(nil), stub...), "echo my addition\n"...)
	hkWriteExec(t, hook, string(edited), 0o755)
	r := gitCtx(t, repo, env, "hooks", "install")
	wantCode(t, "install over an edited stub", r, 6)
	if !strings.Contains(r.stderr, "--force") {
		t.Fatalf("install over an edited stub should mention --force: %q", r.stderr)
	}
	if !bytes.Equal(readFile(t, hook), edited) {
		t.Fatal("install replaced an edited stub without --force")
	}
	hkWantHook(t, "edited stub", hkHooksStatus(t, repo, env), "post-commit", true, "stub", true, true, false)
	hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "post-commit", "installed (stub edited by hand)")
	r = gitCtx(t, repo, env, "hooks", "uninstall")
	wantCode(t, "uninstall of an edited stub", r, 6)
	if !bytes.Equal(readFile(t, hook), edited) || string(readFile(t, backup)) != foreign {
		t.Fatal("uninstall without --force removed an edited stub or its backup")
	}

	// --force: install replaces the edited stub, keeping the chain.
	mustCtx(t, repo, env, "hooks", "install", "--force")
	if !bytes.Equal(readFile(t, hook), stub) || string(readFile(t, backup)) != foreign {
		t.Fatal("install --force did not restore the stub, or lost the backup")
	}
	hkWantHook(t, "after install --force", hkHooksStatus(t, repo, env), "post-commit", true, "stub", true, false, false)

	// uninstall --force removes an edited stub and restores the original.
	hkWriteExec(t, hook, string(edited), 0o755)
	mustCtx(t, repo, env, "hooks", "uninstall", "--force")
	if got := string(readFile(t, hook)); got != foreign || hkFileMode(t, hook) != 0o750 || hkExists(backup) {
		t.Fatalf("uninstall --force: post-commit mode %v %q, backup left: %v", hkFileMode(t, hook), got, hkExists(backup))
	}

}

// tstForeignUninstall: install and uninstall once more: the original is
// back byte for byte with its mode, nothing of ours is left, and commits
// run it alone.
func tstForeignUninstall(t *testing.T, repo string, env []string, hooksDir, foreign, runs string) {
	t.Helper()
	hook := filepath.Join(hooksDir, "post-commit")
	mustCtx(t, repo, env, "hooks", "install")
	out := mustCtx(t, repo, env, "hooks", "uninstall")
	if !strings.Contains(out, "restored the previous post-commit hook") {
		t.Fatalf("uninstall output: %q", out)
	}
	if got := string(readFile(t, hook)); got != foreign || hkFileMode(t, hook) != 0o750 {
		t.Fatalf("after uninstall post-commit is mode %v %q", hkFileMode(t, hook), got)
	}
	if got := hkDirNames(t, hooksDir); strings.Join(got, " ") != "post-commit" {
		t.Fatalf("hooks directory after uninstall: %q", got)
	}
	st := hkHooksStatus(t, repo, env)
	hkWantHook(t, "after uninstall", st, "post-commit", false, "", false, false, true)
	hkWantHook(t, "after uninstall", st, "post-merge", false, "", false, false, false)
	c := hkQuietCommit(t, repo, env, "third", map[string]string{"third.txt": "3\n"})
	if lines := strings.Split(strings.TrimSuffix(string(readFile(t, runs)), "\n"), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], c+" ") {
		t.Fatalf("after uninstall the foreign hook runs: %q", lines)
	}
	if n := len(logJSON(t, repo, env)); n != 2 {
		t.Fatalf("a commit after uninstall was recorded (%d checkpoints)", n)
	}
}

// TestHooksLocations: core.hooksPath, linked worktrees and bare
// repositories.
func TestHooksLocations(t *testing.T) {
	t.Parallel()

	t.Run("core.hooksPath", func(t *testing.T) {
		t.Parallel()
		s, env, repo := cltStubHookRepo(t)
		custom := s.dir(t, "shared-hooks")
		mustRun(t, repo, env, "git", "config", "core.hooksPath", custom)
		mustCtx(t, repo, env, "hooks", "install")
		if got := hkDirNames(t, custom); strings.Join(got, " ") != "post-commit post-merge" {
			t.Fatalf("core.hooksPath directory after install: %q", got)
		}
		if got := hkDirNames(t, filepath.Join(hkCommonDir(t, repo, env), "hooks")); len(got) != 0 {
			t.Fatalf("install wrote into .git/hooks despite core.hooksPath: %q", got)
		}
		st := hkHooksStatus(t, repo, env)
		hkWantHook(t, "core.hooksPath", st, "post-commit", true, "stub", false, false, false)
		if p := st.hook(t, "post-commit").Path; p != filepath.Join(custom, "post-commit") {
			t.Fatalf("hooks status path %q, want it under %s", p, custom)
		}
		c := hkQuietCommit(t, repo, env, "with core.hooksPath", map[string]string{"x": "1\n"})
		if got := hkRecordedCommits(logJSON(t, repo, env)); len(got) != 1 || got[0] != c {
			t.Fatalf("recorded %q, want %s", got, c)
		}
		mustCtx(t, repo, env, "hooks", "uninstall")
		if got := hkDirNames(t, custom); len(got) != 0 {
			t.Fatalf("uninstall left %q in core.hooksPath", got)
		}
	})

	t.Run("linked-worktree", func(t *testing.T) {
		t.Parallel()
		s, env, repo := cltStubHookRepo(t)
		wt := filepath.Join(s.root, "wt")
		mustRun(t, repo, env, "git", "worktree", "add", "-q", "-b", "topic", wt)
		// Installed from the linked worktree: the hooks are shared.
		mustCtx(t, wt, env, "hooks", "install")
		if got := hkDirNames(t, filepath.Join(repo, ".git", "hooks")); strings.Join(got, " ") != "post-commit post-merge" {
			t.Fatalf("hooks of the main repository after install from a worktree: %q", got)
		}
		for _, d := range []string{repo, wt} {
			hkWantHook(t, "worktree "+d, hkHooksStatus(t, d, env), "post-commit", true, "stub", false, false, false)
		}
		c1 := hkQuietCommit(t, wt, env, "in the linked worktree", map[string]string{"wt.txt": "1\n"})
		c2 := hkQuietCommit(t, repo, env, "in the main worktree", map[string]string{"main.txt": "1\n"})
		list := hkOldestFirst(t, repo, env)
		if got := hkRecordedCommits(list); strings.Join(got, " ") != c1+" "+c2 {
			t.Fatalf("recorded %q, want %s %s", got, c1, c2)
		}
		if list[0].Branch != "topic" || list[1].Branch != "main" {
			t.Fatalf("branches of the checkpoints: %q %q, want topic main", list[0].Branch, list[1].Branch)
		}
		hkWantCommitRecord(t, wt, env, list[0], c1)
		// One log, in the common git directory.
		if n := hkHookRuns(hkHookLog(t, wt, env), "post-commit"); n != 2 {
			t.Fatalf("hooks.log in the common dir has %d post-commit runs, want 2", n)
		}
	})

	t.Run("bare", func(t *testing.T) {
		t.Parallel()
		s, env := newHookSandbox(t)
		src := newRepo(t, s, "src")
		bare := filepath.Join(s.root, "bare.git")
		mustRun(t, s.root, env, "git", "clone", "-q", "--bare", src, bare)
		hkRequireStubHooks(t, bare, env)
		up := filepath.Join(s.root, "upstream.git")
		mustRun(t, s.root, env, "git", "init", "-q", "--bare", up)
		mustRun(t, bare, env, "git", "push", "-q", up, "main")
		mustRun(t, bare, env, "git", "remote", "add", "up", up)

		out := mustCtx(t, bare, env, "hooks", "install", "--pre-push")
		if !strings.Contains(out, "pre-push: installed in "+filepath.Join(bare, "hooks")) {
			t.Fatalf("install --pre-push in a bare repository: %q", out)
		}
		if got := hkDirNames(t, filepath.Join(bare, "hooks")); strings.Join(got, " ") != "pre-push" {
			t.Fatalf("bare hooks directory: %q", got)
		}
		st := hkHooksStatus(t, bare, env)
		hkWantHook(t, "bare", st, "pre-push", true, "stub", false, false, false)
		if st.Claude {
			t.Fatal("claude reported installed in a bare repository")
		}
		tip := gitOut(t, bare, env, "rev-parse", memRef)

		// A push from the bare repository takes the memory along.
		mustRun(t, bare, env, "git", "branch", "-q", "release", "main")
		if r := execute(t, bare, env, nil, "git", "push", "-q", "up", "release"); r.code != 0 {
			t.Fatalf("push from the bare repository: %s", r)
		}
		if got := gitOut(t, up, env, "rev-parse", memRef); got != tip {
			t.Fatalf("upstream ghyll/memory %s, want %s", got, tip)
		}

		// Agent hooks need a work tree: a clear error, nothing written.
		r := gitCtx(t, bare, env, "hooks", "install", "--agent", "claude")
		if r.code == 0 || !strings.Contains(r.stderr, "bare") {
			t.Fatalf("install --agent claude in a bare repository: %s", r)
		}
		if hkExists(filepath.Join(bare, ".claude")) || hkExists(filepath.Join(s.root, ".claude")) {
			t.Fatal("install --agent claude in a bare repository wrote a .claude directory")
		}
		mustCtx(t, bare, env, "hooks", "uninstall")
		if got := hkDirNames(t, filepath.Join(bare, "hooks")); len(got) != 0 {
			t.Fatalf("uninstall left %q in the bare repository", got)
		}
	})
}

// TestHooksManagers: with Husky or Lefthook the exact line to add is printed
// and no stub is written (exit 7); once the line is there, status says so;
// --force writes the stub anyway.
func TestHooksManagers(t *testing.T) {
	t.Parallel()

	t.Run("husky", func(t *testing.T) {
		t.Parallel()
		_, env, repo := cltStubHookRepo(t)
		hooksDir := filepath.Join(repo, ".git", "hooks")
		hkWriteExec(t, filepath.Join(repo, ".husky", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)

		r := gitCtx(t, repo, env, "hooks", "install")
		wantCode(t, "install with .husky/", r, 7)
		wantLine := "add this line to " + filepath.Join(repo, ".husky", "post-commit") + ": git-ctx hook post-commit || true\n"
		if !strings.Contains(r.stdout, wantLine) {
			t.Fatalf("install with .husky/ should print %q:\n%s", wantLine, r)
		}
		if got := hkDirNames(t, hooksDir); len(got) != 0 {
			t.Fatalf("install with .husky/ wrote %q", got)
		}
		st := hkHooksStatus(t, repo, env)
		if strings.Join(st.Managers, ",") != "husky" {
			t.Fatalf("managers %q, want husky", st.Managers)
		}
		hkWantHook(t, "husky, line not added", st, "post-commit", false, "", false, false, false)

		// --force writes the stub anyway; uninstall takes it back.
		mustCtx(t, repo, env, "hooks", "install", "--force")
		if got := hkDirNames(t, hooksDir); strings.Join(got, " ") != "post-commit post-merge" {
			t.Fatalf("install --force with .husky/: %q", got)
		}
		hkWantHook(t, "husky --force", hkHooksStatus(t, repo, env), "post-commit", true, "stub", false, false, false)
		mustCtx(t, repo, env, "hooks", "uninstall")
		if got := hkDirNames(t, hooksDir); len(got) != 0 {
			t.Fatalf("uninstall after --force left %q", got)
		}

		// The user adds the line, and Husky runs .husky (core.hooksPath).
		huskyLine := "#!/bin/sh\ngit-ctx hook post-commit || true\n"
		hkWriteExec(t, filepath.Join(repo, ".husky", "post-commit"), huskyLine, 0o755)
		mustRun(t, repo, env, "git", "config", "core.hooksPath", ".husky")
		st = hkHooksStatus(t, repo, env)
		hkWantHook(t, "husky, line added", st, "post-commit", true, "husky", false, false, false)
		hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "post-commit", "installed (husky)")
		r = gitCtx(t, repo, env, "hooks", "install", "--post-commit")
		if !strings.Contains(r.stdout, "husky already runs git-ctx for post-commit") {
			t.Fatalf("install with the line added: %s", r)
		}
		if !bytes.Equal(readFile(t, filepath.Join(repo, ".husky", "post-commit")), []byte(huskyLine)) {
			t.Fatal("install changed .husky/post-commit")
		}
		c := hkQuietCommit(t, repo, env, "through husky", map[string]string{"h.txt": "1\n"})
		if got := hkRecordedCommits(logJSON(t, repo, env)); len(got) != 1 || got[0] != c {
			t.Fatalf("commit through husky: recorded %q, want %s", got, c)
		}
	})

	t.Run("lefthook", func(t *testing.T) {
		t.Parallel()
		_, env, repo := cltStubHookRepo(t)
		hooksDir := filepath.Join(repo, ".git", "hooks")
		cfg := filepath.Join(repo, "lefthook.yml")
		orig := "pre-commit:\n  commands:\n    lint:\n      run: golangci-lint run\n"
		writeFile(t, cfg, orig)

		r := gitCtx(t, repo, env, "hooks", "install")
		wantCode(t, "install with lefthook.yml", r, 7)
		snippet := "post-commit:\n  commands:\n    git-ctx:\n      run: git-ctx hook post-commit || true"
		if !strings.Contains(r.stdout, "add to "+cfg+":\n"+snippet+"\n") {
			t.Fatalf("install with lefthook.yml should print the YAML snippet %q:\n%s", snippet, r)
		}
		if got := hkDirNames(t, hooksDir); len(got) != 0 {
			t.Fatalf("install with lefthook.yml wrote %q", got)
		}
		if string(readFile(t, cfg)) != orig {
			t.Fatal("install changed lefthook.yml")
		}
		st := hkHooksStatus(t, repo, env)
		if strings.Join(st.Managers, ",") != "lefthook" {
			t.Fatalf("managers %q, want lefthook", st.Managers)
		}
		hkWantHook(t, "lefthook, snippet not added", st, "post-commit", false, "", false, false, false)

		writeFile(t, cfg, orig+snippet+"\n")
		st = hkHooksStatus(t, repo, env)
		hkWantHook(t, "lefthook, snippet added", st, "post-commit", true, "lefthook", false, false, false)
		hkWantHook(t, "lefthook, snippet added", st, "post-merge", false, "", false, false, false)
		hkWantStatusLine(t, hkHooksStatusText(t, repo, env), "post-commit", "installed (lefthook)")

		mustCtx(t, repo, env, "hooks", "install", "--force")
		if got := hkDirNames(t, hooksDir); strings.Join(got, " ") != "post-commit post-merge" {
			t.Fatalf("install --force with lefthook.yml: %q", got)
		}
		c := hkQuietCommit(t, repo, env, "after --force", map[string]string{"l.txt": "1\n"})
		if got := hkRecordedCommits(logJSON(t, repo, env)); len(got) != 1 || got[0] != c {
			t.Fatalf("recorded %q, want %s", got, c)
		}
	})
}
