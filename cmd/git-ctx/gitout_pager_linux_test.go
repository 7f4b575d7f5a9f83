package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// goutOnTerminal runs git-ctx in process in dir with exactly env, its
// standard output on a fresh terminal (stderr a buffer), and returns the
// exit code, what the terminal received (\r\n as \n) and stderr.
func goutOnTerminal(t *testing.T, dir string, env []string, args ...string) (code int, term, stderr string) {
	t.Helper()
	m, s := psOpenPTY(t)
	defer m.Close()
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, m) // ends with EIO once the slave is closed everywhere
		got <- b.String()
	}()
	var errb bytes.Buffer
	inProcessEnv(t, dir, env, func() {
		code = run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(""), s, &errb)
	})
	s.Close()
	return code, strings.ReplaceAll(<-got, "\r\n", "\n"), errb.String()
}

// goutPaged is what a fake pager ("cat > FILE") received, "" when it
// never ran; the file is removed for the next run.
func goutPaged(t *testing.T, file string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	os.Remove(file)
	return string(b), true
}

// TestGitoutPagerOnTerminal: on a terminal log pages through the pager
// git would choose (GIT_PAGER, then core.pager, then PAGER; empty or cat
// is none), run by sh -c with LESS=FRX LV=-c, coloured as on a terminal;
// the terminal itself receives nothing then.
func TestGitoutPagerOnTerminal(t *testing.T) {
	repo, env, _ := goutFixture(t)
	dir := t.TempDir()
	g, c, p := filepath.Join(dir, "gitpager"), filepath.Join(dir, "corepager"), filepath.Join(dir, "pager")
	want := inproc.MustCtx(t, repo, env, "log", "--color=always")
	testrepo.MustGit(t, repo, env, "config", "core.pager", "cat > '"+c+"'")
	all := testrepo.WithEnv(env, "GIT_PAGER=cat > '"+g+"'", "PAGER=cat > '"+p+"'")

	code, term, stderr := goutOnTerminal(t, repo, all, "log")
	paged, ran := goutPaged(t, g)
	if code != 0 || term != "" || !ran || paged != want {
		t.Fatalf("GIT_PAGER: exit %d, terminal %q, pager ran %v with %q (want %q); stderr %q", code, term, ran, paged, want, stderr)
	}
	noGitPager := testrepo.WithEnv(env, "PAGER=cat > '"+p+"'")
	goutOnTerminal(t, repo, noGitPager, "log")
	if paged, ran := goutPaged(t, c); !ran || paged != want {
		t.Errorf("core.pager: ran %v with %q", ran, paged)
	}
	testrepo.MustGit(t, repo, env, "config", "--unset", "core.pager")
	goutOnTerminal(t, repo, noGitPager, "log")
	if paged, ran := goutPaged(t, p); !ran || paged != want {
		t.Errorf("PAGER: ran %v with %q", ran, paged)
	}
	for _, none := range []string{"GIT_PAGER=", "GIT_PAGER=cat"} {
		code, term, _ := goutOnTerminal(t, repo, testrepo.WithEnv(noGitPager, none), "log")
		if _, ran := goutPaged(t, p); ran || code != 0 || term != want {
			t.Errorf("%s: pager ran %v, exit %d, terminal %q, want %q", none, ran, code, term, want)
		}
	}
	envFile := filepath.Join(dir, "env")
	goutOnTerminal(t, repo, testrepo.WithEnv(env, `GIT_PAGER=printf '%s %s\n' "$LESS" "$LV" > '`+envFile+`'; cat >/dev/null`), "log")
	if got, _ := goutPaged(t, envFile); got != "FRX -c\n" {
		t.Errorf("pager environment: LESS and LV %q, want \"FRX -c\"", got)
	}
	goutOnTerminal(t, repo, testrepo.WithEnv(env, "LESS=-S", `GIT_PAGER=printf '%s\n' "$LESS" > '`+envFile+`'; cat >/dev/null`), "log")
	if got, _ := goutPaged(t, envFile); got != "-S\n" {
		t.Errorf("the user's LESS replaced: %q", got)
	}
	goutOnTerminal(t, repo, testrepo.WithEnv(all, "NO_COLOR=1"), "log")
	if got, _ := goutPaged(t, g); got == "" || strings.Contains(got, "\x1b[") {
		t.Errorf("NO_COLOR: the pager got %q", got)
	}
}

// TestGitoutPagerFlags: -P/--no-pager print on the terminal; -p pages a
// command that does not page by default (status) and --json; pager.ctx
// false turns paging off and a command value is the pager; the paged
// lists page, --json does not by default.
func TestGitoutPagerFlags(t *testing.T) {
	repo, env, recs := goutFixture(t)
	file := filepath.Join(t.TempDir(), "paged")
	penv := testrepo.WithEnv(env, "GIT_PAGER=cat > '"+file+"'")
	oneline := recs[0].Hash[:12] + " second\n" + recs[1].Hash[:12] + " first line\n"
	for _, flag := range []string{"--no-pager", "-P"} {
		code, term, stderr := goutOnTerminal(t, repo, penv, flag, "log", "--oneline", "--no-color")
		if _, ran := goutPaged(t, file); ran || code != 0 || term != oneline {
			t.Errorf("%s: pager ran %v, exit %d, terminal %q, stderr %q", flag, ran, code, term, stderr)
		}
	}
	status := inproc.MustCtx(t, repo, env, "status")
	if _, term, _ := goutOnTerminal(t, repo, penv, "status"); term != status {
		t.Errorf("status paged without -p: terminal %q", term)
	}
	for _, args := range [][]string{{"-p", "status"}, {"--paginate", "status"}} {
		if code, term, _ := goutOnTerminal(t, repo, penv, args...); code != 0 || term != "" {
			t.Errorf("%v: exit %d, terminal %q", args, code, term)
		}
		if got, _ := goutPaged(t, file); got != status {
			t.Errorf("%v: pager got %q, want %q", args, got, status)
		}
	}
	js := inproc.MustCtx(t, repo, env, "log", "--json")
	if _, term, _ := goutOnTerminal(t, repo, penv, "log", "--json"); term != js {
		t.Errorf("log --json paged by default: terminal %q", term)
	}
	goutOnTerminal(t, repo, penv, "-p", "log", "--json")
	if got, _ := goutPaged(t, file); got != js {
		t.Errorf("-p log --json: pager got %q", got)
	}
	for _, args := range [][]string{{"snapshot", "list"}, {"pkg", "list"}, {"search", "second"}, {"review"}} {
		code, term, stderr := goutOnTerminal(t, repo, penv, args...)
		if got, ran := goutPaged(t, file); code != 0 || term != "" || !ran || got == "" {
			t.Errorf("%v: exit %d, terminal %q, pager ran %v with %q; stderr %q", args, code, term, ran, got, stderr)
		}
	}
	testrepo.MustGit(t, repo, env, "config", "pager.ctx", "false")
	if _, term, _ := goutOnTerminal(t, repo, penv, "log", "--oneline", "--no-color"); term != oneline {
		t.Errorf("pager.ctx=false: terminal %q", term)
	}
	other := filepath.Join(t.TempDir(), "other")
	testrepo.MustGit(t, repo, env, "config", "pager.ctx", "cat > '"+other+"'")
	goutOnTerminal(t, repo, penv, "status")
	if got, _ := goutPaged(t, other); got != status {
		t.Errorf("pager.ctx=COMMAND: that pager got %q", got)
	}
}

// TestGitoutPagerQuitsEarly: a pager that exits without reading (the
// user quits at once) or fails leaves the exit code and stderr as they
// would be: more output than a pipe holds, so writes meet a closed pipe.
// Standard error is never paged: "no matches" stays on stderr.
func TestGitoutPagerQuitsEarly(t *testing.T) {
	repo, env, _ := goutFixture(t)
	huge := "--format=" + strings.Repeat("%H", 2000) // 128 KiB a record
	for _, pager := range []string{"exit 0", "exit 5", "head -c 10 >/dev/null"} {
		code, term, stderr := goutOnTerminal(t, repo, testrepo.WithEnv(env, "GIT_PAGER="+pager), "log", huge)
		if code != 0 || term != "" || stderr != "" {
			t.Errorf("pager %q: exit %d, terminal %q, stderr %q", pager, code, term[:min(len(term), 80)], stderr)
		}
	}
	file := filepath.Join(t.TempDir(), "paged")
	code, term, stderr := goutOnTerminal(t, repo, testrepo.WithEnv(env, "GIT_PAGER=cat > '"+file+"'"), "search", "nosuchword")
	got, _ := goutPaged(t, file)
	if code != 1 || term != "" || got != "" || !strings.Contains(stderr, "no matches") {
		t.Errorf("search without matches: exit %d, terminal %q, pager %q, stderr %q", code, term, got, stderr)
	}
}
