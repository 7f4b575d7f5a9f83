package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpOpensManPage: git turns `git ctx --help` into `git help ctx`,
// which opens git-ctx(1) as install.sh installs it; the shipped binary's
// hidden `man` says where the page is instead of rendering it.
func TestHelpOpensManPage(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man on this machine")
	}
	s := newSandbox(t)
	env := s.env("dev")
	man1 := filepath.Join(s.root, "share", "man", "man1")
	os.MkdirAll(man1, 0o755)
	// install.sh installs docs/git-ctx.1 (the shipped binary has no roff
	// renderer; TestManPageUpToDate keeps the file generated).
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "git-ctx.1"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(man1, "git-ctx.1"), page, 0o644)
	env = append(env, "MANPATH="+filepath.Join(s.root, "share", "man"), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100")
	for _, args := range [][]string{{"ctx", "--help"}, {"help", "ctx"}} {
		r := execute(t, s.root, env, nil, append([]string{"git"}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "git-ctx - keep coding agents") || !strings.Contains(r.stdout, "EXIT STATUS") {
			t.Fatalf("git %s: %s", strings.Join(args, " "), r)
		}
	}
	r := execute(t, s.root, env, nil, binPath, "man")
	if r.code != 2 || !strings.Contains(r.stderr, "docs/git-ctx.1") || r.stdout != "" {
		t.Fatalf("git-ctx man in a shipped build: %s", r)
	}
	// A command's own help is complete, with examples.
	out := mustCtx(t, s.root, env, "pull", "--help")
	if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--json") {
		t.Fatalf("git ctx pull --help: %s", out)
	}
}

// TestBashCompletion: `git ctx <TAB>` completes through git's own bash
// completion once the script install.sh installs is sourced.
func TestBashCompletion(t *testing.T) {
	gitComp := "/usr/share/bash-completion/completions/git"
	if _, err := os.Stat(gitComp); err != nil {
		t.Skip("git's bash completion is not installed")
	}
	s := newSandbox(t)
	env := s.env("dev")
	script := filepath.Join(s.root, "git-ctx.bash")
	os.WriteFile(script, []byte(mustCtx(t, s.root, env, "completion", "bash")), 0o644)
	probe := `source ` + gitComp + `
source ` + script + `
try() {
  COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
  read -ra COMP_WORDS <<< "$1"
  [[ "$1" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  $2
  echo "$1|${COMPREPLY[*]}"
}
try "git ctx " __git_wrap__git_main
try "git ctx sy" __git_wrap__git_main
try "git ctx log --un" __git_wrap__git_main
try "git ctx hooks " __git_wrap__git_main
try "git-ctx pu" __git_ctx_main
`
	r := execute(t, s.root, env, nil, "bash", "-c", probe)
	if r.code != 0 {
		t.Fatalf("bash: %s", r)
	}
	want := map[string][]string{
		"git ctx ":         {"checkpoint", "pull", "push", "sync", "verify", "hooks"},
		"git ctx sy":       {"sync"},
		"git ctx log --un": {"--unverified"},
		"git ctx hooks ":   {"install", "uninstall", "status"},
		"git-ctx pu":       {"pull", "push"},
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		k, v, _ := strings.Cut(line, "|")
		got[k] = v
	}
	for line, words := range want {
		for _, w := range words {
			if !strings.Contains(" "+got[line]+" ", " "+w+" ") {
				t.Errorf("%q completes to %q, missing %q", line, got[line], w)
			}
		}
	}
	if strings.Contains(got["git ctx sy"], "pull") {
		t.Errorf("%q completes too much: %q", "git ctx sy", got["git ctx sy"])
	}
}

// TestDoctorExplainsBrokenSetup: a missing hook, a key readable by others
// and a stale cache are each found and explained; FAIL means exit 1.
func TestDoctorExplainsBrokenSetup(t *testing.T) {
	s := newSandbox(t)
	env := s.env("dev")
	repo := newRepo(t, s, "repo")
	mustCtx(t, repo, env, "init")
	mustCtx(t, repo, env, "checkpoint", "-m", "one")
	mustCtx(t, repo, env, "log") // builds the cache

	r := gitCtx(t, repo, env, "doctor")
	wantCode(t, "doctor without hooks", r, 0)
	if !strings.Contains(r.stdout, "WARN post-commit hook: not installed") || !strings.Contains(r.stdout, "fix: run git ctx hooks install") {
		t.Fatalf("missing hook not explained:\n%s", r.stdout)
	}
	mustCtx(t, repo, env, "hooks", "install")
	if out := mustCtx(t, repo, env, "doctor"); !strings.Contains(out, "OK   post-commit hook: installed (stub)") {
		t.Fatalf("installed hook not seen:\n%s", out)
	}

	// Stale cache: the branch moves behind the cache's back (plain git).
	tip := strings.TrimSpace(gitOut(t, repo, env, "rev-parse", "refs/heads/ghyll/memory"))
	mustCtx(t, repo, env, "checkpoint", "-m", "two")
	mustCtx(t, repo, env, "log")
	gitOut(t, repo, env, "update-ref", "refs/heads/ghyll/memory", tip)
	if out := mustCtx(t, repo, env, "doctor"); !strings.Contains(out, "WARN cache: stale") || !strings.Contains(out, "git ctx reindex") {
		t.Fatalf("stale cache not explained:\n%s", out)
	}

	// A key file readable by others is a FAIL with the chmod to run.
	keys, _ := filepath.Glob(filepath.Join(s.ctxHome("dev"), "keys", "*.key"))
	if len(keys) != 1 {
		t.Fatalf("keys: %v", keys)
	}
	os.Chmod(keys[0], 0o644)
	r = gitCtx(t, repo, env, "doctor")
	wantCode(t, "doctor with a loose key", r, 1)
	if !strings.Contains(r.stdout, "FAIL identity") || !strings.Contains(r.stdout, "chmod 600") {
		t.Fatalf("loose key not explained:\n%s", r.stdout)
	}
	r = gitCtx(t, repo, env, "doctor", "--json")
	if !strings.Contains(r.stdout, `"level": "FAIL"`) {
		t.Fatalf("doctor --json: %s", r.stdout)
	}
}
