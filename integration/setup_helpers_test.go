package integration

import (
	"testing"
	"time"
)

// The set-up that tests share: a repository after init, one for the hook
// tests, a team on a remote, the second honest device joining it, the
// attacker's clone, two machines of a session world.

// cltInitRepo is a sandbox and its repository "repo", initialised by
// `git ctx init` as device.
func cltInitRepo(t *testing.T, device string) (*sandbox, string, []string) {
	t.Helper()
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env(device)
	mustCtx(t, repo, env, "init")
	return s, repo, env
}

// cltHookRepo is where the hook tests start: newHookSandbox and its
// repository "repo" (not initialised).
func cltHookRepo(t *testing.T) (*sandbox, []string, string) {
	t.Helper()
	s, env := newHookSandbox(t)
	return s, env, newRepo(t, s, "repo")
}

// cltStubHookRepo is cltHookRepo for a test that inspects hook files: it
// is skipped where git-ctx installs config-based hooks instead.
func cltStubHookRepo(t *testing.T) (*sandbox, []string, string) {
	t.Helper()
	s, env, repo := cltHookRepo(t)
	hkRequireStubHooks(t, repo, env)
	return s, env, repo
}

// cltTeam is where most sync tests start: a sandbox, a remote of kind
// (syncNewRemote) and its first device name (syncFirstDevice), initialised.
func cltTeam(t *testing.T, kind, name string) (*sandbox, *syncRemote, *syncDevice) {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, kind)
	d := syncFirstDevice(t, s, rem, name)
	d.must(t, "init")
	return s, rem, d
}

// cltJoin is device B joining a on rem before an attack: it clones, pulls,
// inits, records one checkpoint (summary) and syncs; then a pulls it.
func cltJoin(t *testing.T, s *sandbox, rem *syncRemote, a *syncDevice, summary string) (*syncDevice, record) {
	t.Helper()
	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	b1 := b.cp(t, summary)
	b.must(t, "sync")
	a.must(t, "pull")
	return b, b1
}

// cltAttackerClone clones the bare repository into dir as env (an
// attacker's checkout) and makes the memory branch it fetched a local
// branch, ready for plumbing.
func cltAttackerClone(t *testing.T, s *sandbox, bare, dir string, env []string) {
	t.Helper()
	mustRun(t, s.root, env, "git", "clone", "-q", bare, dir)
	gitOut(t, dir, env, "update-ref", memRef, "refs/remotes/origin/ghyll/memory")
}

// cltSessPair is where the two-machine session tests start: a session
// world with alice's machine (in code/) and bob's (in bDir).
func cltSessPair(t *testing.T, bDir string) (*sessWorld, *machine, *machine) {
	t.Helper()
	w := newSessWorld(t)
	return w, w.machine(t, "alice", "code"), w.machine(t, "bob", bDir)
}

// cltSessSeed writes the small session id on a and pushes it to the
// world's store, so that the store holds a's profile.
func cltSessSeed(t *testing.T, w *sessWorld, a *machine, id string) {
	t.Helper()
	writeSession(t, claudeFile(a.home, a.repo, id), `{"cwd":"`+a.repo+`"}`+"\n", time.Time{})
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
}
