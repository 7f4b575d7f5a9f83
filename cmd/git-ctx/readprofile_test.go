package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadProfile drives the read commands in process against a repository
// built by bench/ctxbench, for a CPU profile of what they do beside the
// process start (issue 18, item 3):
//
//	GIT_CTX_PROFILE_WORK=<ctxbench -work dir> GIT_CTX_PROFILE_N=10000 \
//	GIT_CTX_PROFILE_ARGS='status' go test -tags sqlite_fts5 -run TestReadProfile \
//	  -cpuprofile /tmp/status.prof ./cmd/git-ctx
//
// It is skipped unless GIT_CTX_PROFILE_WORK is set (it measures nothing
// by itself and asserts only that the command succeeds).
func TestReadProfile(t *testing.T) {
	work := os.Getenv("GIT_CTX_PROFILE_WORK")
	if work == "" {
		t.Skip("GIT_CTX_PROFILE_WORK not set")
	}
	n := os.Getenv("GIT_CTX_PROFILE_N")
	args := strings.Fields(os.Getenv("GIT_CTX_PROFILE_ARGS"))
	reps, _ := strconv.Atoi(os.Getenv("GIT_CTX_PROFILE_REPS"))
	if reps <= 0 {
		reps = 200
	}
	home := filepath.Join(work, "home")
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CTX_HOME", filepath.Join(work, "ctxhome"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(work, "xdg"))
	t.Chdir(filepath.Join(work, "ctx-v1-"+n))
	for i := 0; i < reps; i++ {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(""), &out, &errb); code != 0 && code != 1 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if i == 0 {
			t.Logf("%s", out.String())
		}
	}
}
