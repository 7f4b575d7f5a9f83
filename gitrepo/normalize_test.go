package gitrepo_test

import (
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// sameRepoSpellings are spellings of one remote that must normalise alike.
var sameRepoSpellings = []string{
	"git@github.com:example/app.git",
	"https://github.com/example/app.git",
	"https://github.com/example/app",
	"https://user:token@GitHub.com/example/app.git/",
	"ssh://git@github.com/example/app.git",
	"ssh://git@github.com:22/example/app",
	"git://github.com/example/app.git",
	"github.com:example/app.git",
	"HTTPS://GITHUB.COM/example/app.git",
	"http://github.com:80/example/app",
	"https://github.com:443/example/app/",
	"git://github.com:9418/example/app",
	"  https://github.com/example/app.git\n",
}

func TestNormalizeURLSpellingsAgree(t *testing.T) {
	t.Parallel()
	const want = "github.com/example/app"
	for _, raw := range sameRepoSpellings {
		if got := gitrepo.NormalizeURL(raw); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", raw, got, want)
		}
	}
	// Pairwise, so a change of the common target still shows which
	// spellings drifted apart.
	for i, a := range sameRepoSpellings {
		for _, b := range sameRepoSpellings[i+1:] {
			if na, nb := gitrepo.NormalizeURL(a), gitrepo.NormalizeURL(b); na != nb {
				t.Errorf("%q → %q but %q → %q", a, na, b, nb)
			}
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
	}{
		{"empty", "", ""},
		{"blank", " \t\n", ""},
		{"absolute path", "/srv/git/app.git", "/srv/git/app"},
		{"absolute path without suffix", "/srv/git/app", "/srv/git/app"},
		{"absolute path trailing slash", "/srv/git/app.git/", "/srv/git/app"},
		{"path to a .git dir", "/srv/git/app/.git", "/srv/git/app"},
		{"unclean path", "/srv//git/./x/../app.git", "/srv/git/app"},
		{"file URL", "file:///srv/git/app.git", "/srv/git/app"},
		{"file URL upper-case scheme", "FILE:///srv/git/app.git", "/srv/git/app"},
		{"file URL two slashes", "file://srv/git/app.git", "/srv/git/app"},
		{"relative path", "../mirrors/app.git", "../mirrors/app"},
		{"windows drive", "C:/repos/app.git", "C:/repos/app"},
		{"non-default ssh port kept", "ssh://git@host:2222/a/b", "host:2222/a/b"},
		{"non-default https port kept", "https://host:8443/a/b.git", "host:8443/a/b"},
		{"port 22 dropped", "ssh://git@host:22/a/b", "host/a/b"},
		{"port-like suffix not dropped", "ssh://host:1022/a/b", "host:1022/a/b"},
		{"scp home path", "git@host:~/a.git", "host/a"},
		{"scp relative path", "git@host:a.git", "host/a"},
		{"scp absolute path", "git@host:/srv/a.git", "host/srv/a"},
		{"ssh URL home path", "ssh://git@host/~/a.git", "host/a"},
		{"path case kept", "https://GitHub.com/Example/App.git", "github.com/Example/App"},
		{"scp path case kept", "git@GitHub.COM:Example/App.git", "github.com/Example/App"},
		{"nested groups", "https://gitlab.com/group/sub/project.git", "gitlab.com/group/sub/project"},
		{"host only", "https://user:pw@host", "host"},
		{"at sign in password", "https://user:p@ss@host/a/b.git", "host/a/b"},
		{"encoded password", "https://user:p%40ss%2Fx@host/a/b.git", "host/a/b"},
		{"ipv6 host", "ssh://git@[::1]:2222/a/b.git", "[::1]:2222/a/b"},
		{"dot git inside name kept", "https://host/a/b.github.io", "host/a/b.github.io"},
	}
	for _, tc := range tests {
		if got := gitrepo.NormalizeURL(tc.raw); got != tc.want {
			t.Errorf("%s: NormalizeURL(%q) = %q, want %q", tc.name, tc.raw, got, tc.want)
		}
	}
}

func TestNormalizeURLDropsCredentials(t *testing.T) {
	t.Parallel()
	secrets := []string{"s3cr3tUser", "hunter2tok"}
	urls := []string{
		"https://s3cr3tUser:hunter2tok@github.com/example/app.git",
		"https://s3cr3tUser@github.com/example/app.git",
		"http://s3cr3tUser:hunter2tok@example.org:8080/app",
		"ssh://s3cr3tUser:hunter2tok@host:2222/a/b",
		"ssh://s3cr3tUser@host/a/b",
		"git+ssh://s3cr3tUser@host/a/b",
		"s3cr3tUser@host:a/b.git",
		"https://s3cr3tUser:hunter2tok@host",
		"https://x:hunter2tok@s3cr3tUser@host/a", // '@' in the user info
	}
	for _, u := range urls {
		got := gitrepo.NormalizeURL(u)
		if got == "" {
			t.Errorf("NormalizeURL(%q) is empty", u)
		}
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("NormalizeURL(%q) = %q leaks %q", u, got, s)
			}
		}
		if strings.Contains(got, "@") {
			t.Errorf("NormalizeURL(%q) = %q keeps user info", u, got)
		}
	}
}

func TestCanonicalKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Remote.Origin.URL", "remote.Origin.url"},
		{"ctx.repoId", "ctx.repoid"},
		{"CTX.REPOID", "ctx.repoid"},
		{"user.email", "user.email"},
		{"Branch.Feature/X.Merge", "branch.Feature/X.merge"},
		{"url.Https://Host/.insteadOf", "url.Https://Host/.insteadof"},
		{"Include.Path", "include.path"},
		{"NoDot", "nodot"},
	}
	for _, tc := range tests {
		if got := gitrepo.CanonicalKey(tc.in); got != tc.want {
			t.Errorf("CanonicalKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseConfigListLiteral(t *testing.T) {
	t.Parallel()
	// The shape of `git config -z --list`: "key\nvalue\0", or "key\0" for
	// a key written without "=".
	out := []byte("core.bare\nfalse\x00" +
		"remote.Up.url\nhttps://a/x\x00" +
		"Remote.Up.URL\nhttps://b/x\x00" +
		"x.ml\nline1\nline2\n\x00" +
		"ctx.flag\x00" +
		"ctx.empty\n\x00")
	got := gitrepo.ParseConfigList(out)
	want := map[string][]string{
		"core.bare":     {"false"},
		"remote.Up.url": {"https://a/x", "https://b/x"},
		"x.ml":          {"line1\nline2\n"},
		"ctx.flag":      {""},
		"ctx.empty":     {""},
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if g := got[k]; strings.Join(g, "\x00") != strings.Join(w, "\x00") || len(g) != len(w) {
			t.Errorf("%s = %q, want %q", k, g, w)
		}
	}
	if len(gitrepo.ParseConfigList(nil)) != 0 {
		t.Error("ParseConfigList(nil) is not empty")
	}
}

func TestValidSegment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"abc", true},
		{"laptop-3fa9c2d1", true},
		{strings.Repeat("f", 64), true},
		{"my.project_1", true},
		{".hidden", true},
		{"a.b", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"a..b", false},
		{"../x", false},
		{"a/b", false},
		{"/abs", false},
		{`a\b`, false},
		{"a\x00b", false},
		{".gitkeep", true},
		{".git", false},
		{".Git", false},
		{"git~1", false},
		{".git ", false},
		{".git.", false},
		{"\u200c.git", false},
		{".gitmodules", false},
		{"gi7eba~1", false},
	}
	for _, tc := range tests {
		err := gitrepo.ValidSegment(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ValidSegment(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

func TestHashID(t *testing.T) {
	t.Parallel()
	// Fixed value: SHA-256 of "abc" (FIPS 180-2 example).
	if got, want := gitrepo.HashID("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("HashID(abc) = %s, want %s", got, want)
	}
}
