package workspace_test

import (
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestInitGhyllRepoID: init --layout ghyll-v1 fixes in REPO the directory
// ghyll's Syncer names (SHA-256 of `git remote get-url origin`, insteadOf
// applied, not normalised) and says what the layout means for emb; without
// origin it keeps git-ctx's own id and says ghyll will not look there; an
// explicit ctx.repoId wins and the note names ghyll's directory; ctx-v1 keeps
// the normalised id and has no notes.
func TestInitGhyllRepoID(t *testing.T) {
	w := workspacetest.NewWorld(t)
	ctx := workspacetest.Ctx(t)
	const ssh = "git@github.com:example/repo.git"
	const sshDir = "3f11352a998eeb04cc640e035793531d96031e20b2f15ecff87fc705d6e428ce" // vector repo_dir_ssh_url
	cases := []struct {
		name, layout string
		config       [][2]string
		wantID       func(root string) string
		wantNote     string
	}{
		{"origin", "ghyll-v1", [][2]string{{"remote.origin.url", ssh}},
			func(string) string { return sshDir }, "repos/" + sshDir + ": SHA-256 of 'git remote get-url origin'"},
		{"insteadof", "ghyll-v1", [][2]string{{"remote.origin.url", "gh:example/repo.git"}, {"url.git@github.com:.insteadOf", "gh:"}},
			func(string) string { return sshDir }, "repos/" + sshDir + ": SHA-256"},
		{"no-origin", "ghyll-v1", [][2]string{{"remote.upstream.url", ssh}},
			func(string) string { return gitrepo.HashID("github.com/example/repo") }, "no remote named origin"},
		{"repoid", "ghyll-v1", [][2]string{{"remote.origin.url", ssh}, {"ctx.repoId", "mine"}},
			func(string) string { return "mine" }, "ctx.repoId names the repository directory repos/mine; ghyll's Syncer looks in repos/" + sshDir},
		{"ctx-v1", "ctx-v1", [][2]string{{"remote.origin.url", ssh}},
			func(string) string { return gitrepo.HashID("github.com/example/repo") }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := w.NewRepo(t, c.name)
			for _, kv := range c.config {
				workspacetest.Git(t, dir, "config", kv[0], kv[1])
			}
			d := workspacetest.Open(t, dir, w.Home(c.name))
			rep, err := d.Init(ctx, gitstore.Layout(c.layout))
			if err != nil {
				t.Fatal(err)
			}
			want := c.wantID(dir)
			if rep.RepoID != want || d.MustRepoID(t) != want {
				t.Fatalf("repo id %q (branch %q), want %q", rep.RepoID, d.MustRepoID(t), want)
			}
			if c.wantNote == "" {
				if len(rep.Notes) != 0 {
					t.Fatalf("ctx-v1 notes: %q", rep.Notes)
				}
				return
			}
			if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[0], `leaves "emb" out`) || !strings.Contains(rep.Notes[1], c.wantNote) {
				t.Fatalf("notes %q, want the emb note and one containing %q", rep.Notes, c.wantNote)
			}
			again, err := d.Init(ctx, "")
			if err != nil || again.RepoID != "" || len(again.Notes) != 1 {
				t.Fatalf("init again: %+v %v", again, err)
			}
		})
	}
}
