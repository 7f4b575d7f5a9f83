package gitname

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// unsafeNames are refused; each comment says which rule of git's.
var unsafeNames = []string{
	"", ".", "..", "a/b", `a\b`, "a\x00b",
	// .git in any case, NTFS trailing dots and spaces, streams, 8.3 name
	".git", ".GIT", ".Git", ".gIt", ".git.", ".git..", ".git ", ".git. .", ".git::$INDEX_ALLOCATION", ".git:x",
	"git~1", "GIT~1", "Git~1.", "git~1 ",
	// HFS+ ignorable code points anywhere
	".g\u200cit", "\u200d.git", ".git\ufeff", ".\u200eG\u200fI\u202aT\u206f", ".gi\u202et",
	// .gitmodules and its NTFS/HFS aliases
	".gitmodules", ".GITMODULES", ".gitmodules.", ".gitmodules :$DATA", "gitmod~1", "GITMOD~4", "gi7eba~1", "GI7EBA~9", "gi7eb~12",
	".git\u200cmodules",
	// the other names git reads from a checkout
	".gitattributes", ".GitAttributes ", "gitatt~1", "gi7d29~1", ".gitignore", "gitign~1", "gi250a~1", ".mailmap", "MAILMA~1", "maba30~1", ".mail\u200cmap",
}

// safeNames are accepted, some only barely.
var safeNames = []string{
	"devices", "repos", "LAYOUT", "00000000.jsonl", "laptop-3f2a9c1d.pub", "Alice-MacBook-Pro.local",
	".gitkeep", ".github", ".gitx", "x.git", "git", "GIT", "git~2", "git~10", "git~1x", ".git~1", "...", ".. ",
	".gitmodulesx", "gitmod~5", "gitmod~0", "gi7eba~0", "gi7eba~1x", "gi7eb~1a", "\u200c.gitx", ".g\u00efit", "\xff.git",
	"a b", "é", "\u200c", ".\u200c", "gitmodules", "mailmap",
}

func TestCheck(t *testing.T) {
	for _, n := range unsafeNames {
		if err := Check(n); !errors.Is(err, ErrUnsafe) {
			t.Errorf("Check(%q) = %v, want ErrUnsafe", n, err)
		}
	}
	for _, n := range safeNames {
		if err := Check(n); err != nil {
			t.Errorf("Check(%q) = %v, want nil", n, err)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"repos/abc/chains/dev/00000000.jsonl": true,
		"devices/.gitkeep":                    true,
		"repos/.GIT/chains/x":                 false,
		"repos/x/git~1/y":                     false,
		"a//b":                                false,
		"/a":                                  false,
		"a/":                                  false,
		"a/../b":                              false,
	} {
		if err := CheckPath(p); (err == nil) != ok {
			t.Errorf("CheckPath(%q) = %v, want ok=%v", p, err, ok)
		}
	}
}

// TestAgreesWithGitFsck builds, with the real git, a tree holding each name
// and runs `git fsck --strict`: every name git reports as a .git alias
// (hasDotgit) or a bad name must be refused by Check. (Check refuses more:
// .gitmodules and friends are flagged by git only in some modes.)
func TestAgreesWithGitFsck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := git("", "init", "-q", "--bare", "."); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	blob, err := git("x\n", "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatalf("hash-object: %v\n%s", err, blob)
	}
	blob = strings.TrimSpace(blob)
	trees := map[string]string{} // tree id → the one name it holds
	for _, n := range append(append([]string{}, unsafeNames...), safeNames...) {
		if n == "" || strings.ContainsAny(n, "/\x00\n") || n == "." || n == ".." {
			continue // mktree cannot write these; Check refuses them anyway
		}
		tree, err := git("100644 blob "+blob+"\t"+n+"\n", "mktree")
		if err != nil {
			t.Fatalf("mktree %q: %v\n%s", n, err, tree)
		}
		trees[strings.TrimSpace(tree)] = n
	}
	// fsck checks every object, reachable or not: one run covers all trees.
	out, _ := git("", "fsck", "--strict", "--no-dangling")
	dotgit := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		id, msg, ok := strings.Cut(strings.TrimPrefix(line, "error in tree "), ": ")
		if !ok || trees[id] == "" {
			continue
		}
		if strings.HasPrefix(msg, "hasDotgit") {
			dotgit[trees[id]] = true
		}
		if Check(trees[id]) == nil {
			t.Errorf("git fsck --strict refuses %q (%s) but Check accepts it", trees[id], msg)
		}
	}
	for _, n := range trees {
		if mine := ntfsDotGit(n) || hfsDot(n, "git"); mine != dotgit[n] {
			t.Errorf("%q: git fsck says hasDotgit=%v, Check's .git rule says %v", n, dotgit[n], mine)
		}
	}
	if len(dotgit) < 10 {
		t.Fatalf("git fsck flagged only %d names as .git:\n%s", len(dotgit), out)
	}
}

// FuzzCheck: Check never panics; what it accepts has no separator or NUL,
// is not "." or "..", and is not .git once case, trailing dots and spaces
// and HFS-ignored code points are dropped.
func FuzzCheck(f *testing.F) {
	for _, n := range append(append([]string{}, unsafeNames...), safeNames...) {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := Check(name)
		if err != nil {
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("Check(%q) = %v, not ErrUnsafe", name, err)
			}
			return
		}
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
			t.Fatalf("Check(%q) accepted a separator, NUL or dot name", name)
		}
		stripped := strings.Map(func(r rune) rune {
			if hfsIgnored(r) {
				return -1
			}
			return r
		}, name)
		folded := strings.ToLower(strings.TrimRight(name, ". "))
		for _, bad := range []string{".git", "git~1", ".gitmodules", ".gitattributes", ".gitignore", ".mailmap"} {
			if folded == bad || strings.ToLower(stripped) == bad {
				t.Fatalf("Check(%q) accepted an alias of %s", name, bad)
			}
		}
	})
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"laptop-1": "laptop-1", "Alice-MacBook-Pro.local": "Alice-MacBook-Pro.local", "é": "é",
		"tab\tid": `"tab\tid"`, "\x1b[2J": `"\x1b[2J"`, "zw\u200bsp": `"zw\u200bsp"`, "a\nb": `"a\nb"`,
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %s, want %s", in, got, want)
		}
	}
}
