package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestGitoutNoPagerOffTerminal: with standard output a regular file or a
// buffer, nothing is paged, not even with -p or pager.ctx=true, and the
// output is plain (no colour).
func TestGitoutNoPagerOffTerminal(t *testing.T) {
	repo, env, _ := goutFixture(t)
	dir := t.TempDir()
	mark := filepath.Join(dir, "paged")
	penv := testrepo.WithEnv(env, "GIT_PAGER=cat > '"+mark+"'", "PAGER=cat > '"+mark+"'")
	testrepo.MustGit(t, repo, env, "config", "pager.ctx", "true")
	want := inproc.MustCtx(t, repo, env, "log")
	for _, args := range [][]string{{"log"}, {"-p", "log"}, {"--paginate", "review"}} {
		out, err := os.Create(filepath.Join(dir, "stdout"))
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		var code int
		inProcessEnv(t, repo, penv, func() {
			code = run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(""), out, &errb)
		})
		out.Close()
		got, _ := os.ReadFile(out.Name())
		if _, err := os.Stat(mark); err == nil || code != 0 || len(got) == 0 || bytes.Contains(got, []byte("\x1b[")) {
			t.Errorf("%v to a file: pager ran %v, exit %d, stdout %q, stderr %q", args, err == nil, code, got, errb.String())
		}
		if args[len(args)-1] == "log" && string(got) != want {
			t.Errorf("%v to a file: %q, want %q", args, got, want)
		}
		r := inproc.Ctx(t, repo, penv, args...)
		if _, err := os.Stat(mark); err == nil || r.Code != 0 || r.Stdout == "" {
			t.Errorf("%v to a buffer: pager ran %v, exit %d, stdout %q", args, err == nil, r.Code, r.Stdout)
		}
	}
}
