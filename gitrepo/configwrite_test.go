package gitrepo_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/gitrepo"
)

// The config writer changes the local config as git sees it and the Repo's
// own view at once.
func TestConfigWriter(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ctx := context.Background()
	r, err := gitrepo.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	gitGet := func(args ...string) []string {
		out, _ := exec.Command("git", append([]string{"-C", dir, "config", "--local"}, args...)...).Output()
		return strings.Fields(string(out))
	}
	if err := r.SetConfig(ctx, "ctx.sessionProfile", "work"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetConfig(ctx, "ctx.sessionProfile", "home"); err != nil {
		t.Fatal(err)
	}
	if got := gitGet("--get-all", "ctx.sessionProfile"); !slices.Equal(got, []string{"home"}) || r.Config("ctx.sessionProfile") != "home" {
		t.Fatalf("after two sets: git has %v, Repo has %q", got, r.Config("ctx.sessionProfile"))
	}
	for _, d := range []string{"a", "b", "a"} {
		if err := r.AddConfig(ctx, "ctx.trustedDevice", d); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.ConfigAll("ctx.trustedDevice"); !slices.Equal(got, []string{"a", "b", "a"}) {
		t.Fatalf("after adds: %v", got)
	}
	if err := r.UnsetConfig(ctx, "ctx.trustedDevice", "a"); err != nil {
		t.Fatal(err)
	}
	if got := gitGet("--get-all", "ctx.trustedDevice"); !slices.Equal(got, []string{"b"}) || !slices.Equal(r.ConfigAll("ctx.trustedDevice"), []string{"b"}) {
		t.Fatalf("after unset: git has %v, Repo has %v", got, r.ConfigAll("ctx.trustedDevice"))
	}
	if err := r.UnsetConfig(ctx, "ctx.trustedDevice", "nobody"); err != nil {
		t.Fatalf("unset of an absent value: %v", err)
	}
	r.SetConfig(ctx, "hook.ctx-post-commit.event", "post-commit")
	r.SetConfig(ctx, "hook.ctx-post-commit.command", "git-ctx hook post-commit")
	if err := r.RemoveConfigSection(ctx, "hook.ctx-post-commit"); err != nil {
		t.Fatal(err)
	}
	if got := gitGet("--get-regexp", "^hook\\."); len(got) != 0 || r.Config("hook.ctx-post-commit.event") != "" {
		t.Fatalf("after remove-section: git has %v", got)
	}
	if err := r.RemoveConfigSection(ctx, "hook.absent"); err == nil {
		t.Fatal("removing an absent section succeeded")
	}
}
