package testrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secret-shaped test values are built at run time, so that no file holds
// one a scanner would flag.

// FakeHex is 64 lowercase hex characters derived from seed.
func FakeHex(seed string) string { return SHA256Hex(seed) }

// FakeGitHubToken is a GitHub-token-shaped value derived from seed.
func FakeGitHubToken(seed string) string { return "ghp_" + FakeHex(seed)[:36] }

// FakeAWSKey is an AWS-access-key-shaped value derived from seed.
func FakeAWSKey(seed string) string { return "AKIA" + strings.ToUpper(FakeHex(seed)[:16]) }

// WantNowhere fails if any of secrets occurs on the memory branch of repo
// (in any commit message, any blob of its history, its current tree) or in
// any file of <git-common-dir>/ctx (the cache database among them).
func WantNowhere(t testing.TB, repo string, env []string, secrets ...string) {
	t.Helper()
	var hay []string
	hay = append(hay, MustGit(t, repo, env, "log", "-p", "--format=raw", "--no-color", "--no-ext-diff", MemRef))
	tree := MustGit(t, repo, env, "ls-tree", "-r", MemRef)
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(tree), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "blob" {
			ids = append(ids, f[2])
		}
	}
	if len(ids) == 0 {
		t.Fatal("no blobs on the memory branch")
	}
	r := Git(t, repo, env, []byte(strings.Join(ids, "\n")+"\n"), "cat-file", "--batch")
	if r.Code != 0 {
		t.Fatalf("cat-file --batch: %s", r)
	}
	hay = append(hay, r.Stdout)
	ctxDir := filepath.Join(GitOut(t, repo, env, "rev-parse", "--path-format=absolute", "--git-common-dir"), "ctx")
	hay = append(hay, ctxFiles(t, ctxDir)...)
	for _, sec := range secrets {
		for _, h := range hay {
			if strings.Contains(h, sec) {
				where, _, _ := strings.Cut(h, "\x00")
				if len(where) > 80 {
					where = where[:80] + "…"
				}
				t.Fatalf("secret %q found (in %q)", sec, where)
			}
		}
		if r := Git(t, repo, env, nil, "grep", "-q", "-F", "-e", sec, MemRef); r.Code != 1 {
			t.Fatalf("git grep %q %s: exit %d, want 1 (not found)", sec, MemRef, r.Code)
		}
	}
}

// ctxFiles is every regular file under ctxDir as "path\x00content"; a
// cache database must be among them.
func ctxFiles(t testing.TB, ctxDir string) []string {
	t.Helper()
	var hay []string
	sawDB := false
	err := filepath.WalkDir(ctxDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if strings.HasPrefix(d.Name(), "cache.db") {
			sawDB = true
		}
		b, err := os.ReadFile(p)
		hay = append(hay, p+"\x00"+string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawDB {
		t.Fatalf("no cache database under %s", ctxDir)
	}
	return hay
}
