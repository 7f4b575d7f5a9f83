package integration

import (
	"strings"
	"testing"
)

// TestCompanionRefusesAnotherBuild: git-ctx-full started by a lean git-ctx
// of another version (GIT_CTX_HANDOFF holds the lean binary's version; a
// stale git-ctx-full on PATH) refuses in one line, exit 3, and writes
// nothing; started by its own build, or directly, it runs.
func TestCompanionRefusesAnotherBuild(t *testing.T) {
	_, repo, env := cltInitRepo(t, "a")
	before := strings.TrimSpace(gitOut(t, repo, env, "rev-parse", "refs/heads/ghyll/memory"))

	r := execute(t, repo, withEnv(env, "GIT_CTX_HANDOFF=v0.0.1-stale"), nil, fullPath, "checkpoint", "-m", "from a stale pair")
	wantCode(t, "companion of another build", r, 3)
	wantOneLine(t, "companion of another build", r.stderr)
	if !strings.Contains(r.stderr, "v0.0.1-stale") || !strings.Contains(r.stderr, "reinstall both") {
		t.Errorf("stderr %q", r.stderr)
	}
	if after := strings.TrimSpace(gitOut(t, repo, env, "rev-parse", "refs/heads/ghyll/memory")); after != before {
		t.Fatalf("the refused companion moved the branch %s -> %s", before, after)
	}

	// The integration pair is built without -ldflags: both say "dev".
	r = execute(t, repo, withEnv(env, "GIT_CTX_HANDOFF=dev"), nil, fullPath, "checkpoint", "-m", "from its own lean build")
	wantCode(t, "companion of its own build", r, 0)
	r = execute(t, repo, env, nil, fullPath, "version")
	wantCode(t, "companion started directly", r, 0)
}
