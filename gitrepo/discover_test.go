package gitrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// TestOpenInProcessMatchesGit opens repositories of every common layout
// twice, in process and through git (GIT_CTX_DISCOVERY=git), and requires
// the same directories, flags, work tree and configuration, entry for
// entry. It also checks which layouts the in-process path takes on.
func TestOpenInProcessMatchesGit(t *testing.T) {
	isolateGit(t)
	home := os.Getenv("HOME")
	top := newRepo(t)
	commitFiles(t, top, "first", map[string]string{"a/b/README": "hi\n"})
	gitOut(t, top, "config", "remote.origin.url", "git@host.example:team/app.git")
	gitOut(t, top, "config", "ctx.device", "laptop-1")
	wt := filepath.Join(realPath(t, t.TempDir()), "linked")
	gitOut(t, top, "worktree", "add", "-q", "-b", "side", wt)
	bare := filepath.Join(realPath(t, t.TempDir()), "srv.git")
	gitOut(t, filepath.Dir(bare), "init", "-q", "--bare", bare)

	// A repository using per-worktree configuration.
	wtc := newRepo(t)
	commitFiles(t, wtc, "first", map[string]string{"x": "x\n"})
	gitOut(t, wtc, "config", "extensions.worktreeConfig", "true")
	gitOut(t, wtc, "config", "--worktree", "ctx.remote", "upstream")
	// A repository with an include: in process must hand over to git.
	inc := newRepo(t)
	writeFile(t, home, "extra.inc", "[ctx]\n\tdevice = from-include\n")
	gitOut(t, inc, "config", "include.path", filepath.Join(home, "extra.inc"))
	// Global configuration in the XDG location and a system file.
	writeFile(t, home, ".config/git/config", "[ctx]\n\ttrust = allowlist\n")
	system := filepath.Join(home, "system-gitconfig")
	writeFile(t, home, "system-gitconfig", "[ctx]\n\ttrustedDevice = sys-dev\n[user]\n\tname = System Name\n")

	type env map[string]string
	tests := []struct {
		name      string
		dir       string
		env       env
		inProcess bool
	}{
		{"top", top, nil, true},
		{"subdirectory", filepath.Join(top, "a", "b"), nil, true},
		{"linked worktree", wt, nil, true},
		{"GIT_DIR as in a worktree hook", wt, env{"GIT_DIR": filepath.Join(top, ".git", "worktrees", "linked")}, true},
		{"relative GIT_DIR", top, env{"GIT_DIR": ".git"}, true},
		{"worktree config", wtc, nil, true},
		{"system and XDG files", top, env{"GIT_CONFIG_NOSYSTEM": "0", "GIT_CONFIG_SYSTEM": system, "GIT_CONFIG_GLOBAL": ""}, true},
		{"XDG and home files", top, env{"GIT_CONFIG_GLOBAL": "-"}, true},
		{"include", inc, nil, false},
		{"command-line config", top, env{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "ctx.device", "GIT_CONFIG_VALUE_0": "cli"}, false},
		{"bare", bare, nil, false},
		{"inside .git", filepath.Join(top, ".git", "refs"), nil, false},
		{"GIT_WORK_TREE", top, env{"GIT_WORK_TREE": top}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				if k == "GIT_CONFIG_GLOBAL" && (v == "" || v == "-") {
					unsetenv(t, k)
					if v == "-" {
						writeFile(t, home, ".gitconfig", "[user]\n\temail = home@example.org\n")
					}
					continue
				}
				t.Setenv(k, v)
			}
			fast, err := gitrepo.Open(context.Background(), tc.dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got := gitrepo.InProcess(fast); got != tc.inProcess {
				t.Errorf("answered in process = %v, want %v", got, tc.inProcess)
			}
			t.Setenv(gitrepo.ForceGitEnv, "git")
			slow, err := gitrepo.Open(context.Background(), tc.dir)
			if err != nil {
				t.Fatalf("Open through git: %v", err)
			}
			if gitrepo.InProcess(slow) {
				t.Fatal("GIT_CTX_DISCOVERY=git still answered in process")
			}
			if realPath(t, fast.GitDir) != realPath(t, slow.GitDir) || realPath(t, fast.CommonDir) != realPath(t, slow.CommonDir) {
				t.Errorf("dirs: in process %s %s, git %s %s", fast.GitDir, fast.CommonDir, slow.GitDir, slow.CommonDir)
			}
			if fast.Bare != slow.Bare || fast.InWorkTree != slow.InWorkTree {
				t.Errorf("bare/in work tree: in process %v %v, git %v %v", fast.Bare, fast.InWorkTree, slow.Bare, slow.InWorkTree)
			}
			fw, err1 := fast.WorkTree(context.Background())
			sw, err2 := slow.WorkTree(context.Background())
			if err1 != nil || err2 != nil {
				t.Fatalf("WorkTree: %v / %v", err1, err2)
			}
			if fw != "" {
				fw = realPath(t, fw)
			}
			if sw != "" {
				sw = realPath(t, sw)
			}
			if fw != sw {
				t.Errorf("work tree: in process %q, git %q", fw, sw)
			}
			if f, s := gitrepo.ConfigMap(fast), gitrepo.ConfigMap(slow); !reflect.DeepEqual(f, s) {
				t.Errorf("config differs:\nin process %q\n       git %q", f, s)
			}
		})
	}
}
