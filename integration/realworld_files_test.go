package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dsReadOnlyScript runs "$@" with the directory $1 bind-mounted read-only
// over itself, in a private mount namespace (unshare -m): a real read-only
// file system (EROFS), which permission bits cannot give a test run as root.
const dsReadOnlyScript = `dir=$1; shift; mount --bind "$dir" "$dir" && mount -o remount,bind,ro "$dir" && exec "$@"`

// dsReadOnly runs `git ctx ARGS` in d's work tree with its .git read-only.
func dsReadOnly(t *testing.T, d *syncDevice, env []string, args ...string) result {
	t.Helper()
	argv := append([]string{"unshare", "-m", "sh", "-c", dsReadOnlyScript, "sh", filepath.Join(d.dir, ".git"), gitPath, "ctx"}, args...)
	return execute(t, d.dir, env, nil, argv...)
}

// TestReadOnlyRepositoryReads: in a repository whose .git is on a read-only
// file system, log, status, search and show work (the cache is built in a
// temporary directory, removed afterwards) with one line saying the cache is
// not kept, whether or not a cache file was there; doctor says the same
// instead of suggesting a reindex.
func TestReadOnlyRepositoryReads(t *testing.T) {
	if r := execute(t, t.TempDir(), os.Environ(), nil, "unshare", "-m", "sh", "-c", dsReadOnlyScript, "sh", t.TempDir(), "true"); r.code != 0 {
		t.Skipf("no read-only bind mount here (needs unshare -m and mount as root): %s", r)
	}
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	rec := checkpoint(t, a.dir, a.env, "-m", "zebrafish migration plan", "--session", "s1")
	checkpoint(t, a.dir, a.env, "-m", "second note", "--session", "s1")
	tmp := s.dir(t, "tmp")
	env := withEnv(a.env, "TMPDIR="+tmp)
	cacheFile := filepath.Join(a.dir, ".git", "ctx", "cache.db")
	a.must(t, "log") // builds the cache

	for _, state := range []string{"cache present", "no cache file"} {
		if state == "no cache file" {
			if err := os.Remove(cacheFile); err != nil {
				t.Fatal(err)
			}
		} else if _, err := os.Stat(cacheFile); err != nil {
			t.Fatalf("no cache after a checkpoint: %v", err)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"log"}, "zebrafish migration plan"},
			{[]string{"log", "--json"}, rec.Hash},
			{[]string{"status"}, "Checkpoints:   2"},
			{[]string{"search", "zebrafish"}, "migration plan"},
			{[]string{"show", rec.Hash[:12]}, "zebrafish migration plan"},
		} {
			what := state + ": " + strings.Join(c.args, " ")
			r := dsReadOnly(t, a, env, c.args...)
			wantCode(t, what, r, 0)
			if !strings.Contains(r.stdout, c.want) {
				t.Fatalf("%s: output lacks %q: %s", what, c.want, r)
			}
			wantOneLine(t, what, r.stderr)
			if !strings.Contains(r.stderr, "read-only") || !strings.Contains(r.stderr, "not kept") {
				t.Fatalf("%s: want one line saying the cache is not kept: %q", what, r.stderr)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("%s: temporary cache left in TMPDIR: %v", what, ents)
			}
		}
		r := dsReadOnly(t, a, env, "doctor")
		if strings.Contains(r.stdout+r.stderr, "reindex") || !strings.Contains(r.stdout, "not kept") {
			t.Fatalf("%s: doctor: %s", state, r)
		}
	}
	// Writable again: the cache is built and kept as before.
	a.must(t, "log")
	if _, err := os.Stat(cacheFile); err != nil {
		t.Fatalf("no cache once writable: %v", err)
	}
}
