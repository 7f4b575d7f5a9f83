package integration

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// syncRemote is a bare repository and the URL devices use to reach it.
type syncRemote struct {
	bare string
	url  string
	http *syncHTTPServer // set for the http kind
}

// syncNewRemote creates srv/remote.git in the sandbox and serves it as kind:
// "file" (a path), "daemon" (git://) or "http" (http-backend behind basic
// auth, answered by a credential helper in the global git config).
func syncNewRemote(t *testing.T, s *sandbox, kind string) *syncRemote {
	t.Helper()
	base := s.dir(t, "srv")
	r := &syncRemote{bare: syncNewBare(t, s, filepath.Join(base, "remote.git"))}
	switch kind {
	case "file":
		r.url = r.bare
	case "daemon":
		r.url = syncStartDaemon(t, s, base) + "/remote.git"
	case "http":
		r.http = syncStartHTTP(t, s, base, "u", "p")
		syncCredentialHelper(t, s, "u", "p")
		r.url = r.http.url + "/remote.git"
	default:
		t.Fatalf("unknown remote kind %q", kind)
	}
	return r
}

// syncFirstDevice makes a repository whose origin is r, with main pushed
// to it by plain git, so the remote has a default branch.
func syncFirstDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	return newSyncDevice(s, name, testrepo.NewOriginRepo(t, s.tr, name, r.url))
}

// syncCloneDevice clones r as a new device.
func syncCloneDevice(t *testing.T, s *sandbox, r *syncRemote, name string) *syncDevice {
	t.Helper()
	return newSyncDevice(s, name, testrepo.Clone(t, s.tr, name, r.url))
}

// TestSyncBasicFlow: two devices exchange memory through each kind of
// remote: push, a first pull that creates the branch, sync both ways; both
// end up with the same verified records, equal to the remote's branch.
func TestSyncBasicFlow(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"file", "daemon", "http"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			rem := syncNewRemote(t, s, kind)
			a := syncFirstDevice(t, s, rem, "A")
			a.must(t, "init")
			a1, a2 := a.cp(t, "a1: chose sqlite"), a.cp(t, "a2: wrote the schema")
			out := a.must(t, "push")
			syncWantPushed(t, "A push", out, "origin", a.tip(t))
			if got := syncBareTip(t, s, rem.bare); got != a.tip(t) {
				t.Fatalf("remote ghyll/memory %q after A's push, want A's tip %s", got, a.tip(t))
			}
			idA := a.id(t)

			b := syncCloneDevice(t, s, rem, "B")
			if b.tip(t) != "" {
				t.Fatal("a fresh clone already has a local memory branch")
			}
			out = b.must(t, "pull")
			syncWantLine(t, "B's first pull", out, syncPulled(idA, 2))
			tracking := b.git(t, "rev-parse", "--verify", "refs/remotes/origin/ghyll/memory")
			if tracking != syncBareTip(t, s, rem.bare) || b.tip(t) != tracking {
				t.Fatalf("after the first pull: tracking %s, local %s, remote %s", tracking, b.tip(t), syncBareTip(t, s, rem.bare))
			}
			syncWantHashes(t, "B's log after the first pull", b.hashes(t), a1.Hash, a2.Hash)
			b.must(t, "init")
			idB := b.id(t)
			if idB == idA {
				t.Fatalf("two GIT_CTX_HOMEs got the same device id %s", idA)
			}
			b1, b2 := b.cp(t, "b1: read the schema"), b.cp(t, "b2: added an index")
			out = b.must(t, "sync")
			syncWantPushed(t, "B sync", out, "origin", b.tip(t))

			out = a.must(t, "sync")
			syncWantLine(t, "A's sync", out, syncPulled(idB, 2))
			syncWantLine(t, "A's sync", out, "new device "+idB+": key pinned")

			all := []string{a1.Hash, a2.Hash, b1.Hash, b2.Hash}
			for _, d := range []*syncDevice{a, b} {
				syncWantHashes(t, "log of "+d.name, d.hashes(t), all...)
				rep := d.wantVerifies(t)
				if len(rep.Chains) != 2 {
					t.Fatalf("%s: verify reports %d chains, want 2:\n%s", d.name, len(rep.Chains), rep.Raw)
				}
				for _, c := range rep.Chains {
					if c.Entries != 2 || c.Verified != 2 {
						t.Fatalf("%s: chain %s: %d entries, %d verified, want 2 and 2", d.name, c.Device, c.Entries, c.Verified)
					}
				}
			}
			remoteTip := syncBareTip(t, s, rem.bare)
			remoteTree := gitOut(t, rem.bare, s.env("setup"), "rev-parse", memRef+"^{tree}")
			for _, d := range []*syncDevice{a, b} {
				if d.tip(t) != remoteTip {
					t.Errorf("%s's tip %s differs from the remote's %s", d.name, d.tip(t), remoteTip)
				}
				if tree := d.git(t, "rev-parse", memRef+"^{tree}"); tree != remoteTree {
					t.Errorf("%s's tree %s differs from the remote's %s", d.name, tree, remoteTree)
				}
				if tr := d.git(t, "rev-parse", "refs/remotes/origin/ghyll/memory"); tr != remoteTip {
					t.Errorf("%s's refs/remotes/origin/ghyll/memory is %s, remote has %s", d.name, tr, remoteTip)
				}
			}
			// The remote's branch itself is complete and well formed.
			mustRun(t, rem.bare, s.env("setup"), "git", "fsck", "--strict", "--no-dangling")
			if kind == "http" && (rem.http.unauthorized.Load() == 0 || rem.http.authorized.Load() == 0) {
				t.Fatalf("http server saw %d unauthorised and %d authorised requests: basic auth was not exercised",
					rem.http.unauthorized.Load(), rem.http.authorized.Load())
			}
			// Nothing more to exchange.
			out = b.must(t, "pull")
			syncWantLine(t, "B's last pull", out, "Memory is up to date with origin")
		})
	}
}

// TestSyncRemoteResolution: without an argument the remote is ctx.remote,
// else the current branch's upstream, else origin.
func TestSyncRemoteResolution(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	env := s.env("A")
	dir := newRepo(t, s, "A")
	bares := map[string]string{}
	for _, name := range []string{"origin", "up", "third"} {
		bares[name] = syncNewBare(t, s, filepath.Join(s.root, name+".git"))
		gitOut(t, dir, env, "remote", "add", name, bares[name])
		gitOut(t, dir, env, "push", "-q", name, "main")
	}
	d := newSyncDevice(s, "A", dir)
	d.must(t, "init")
	d.cp(t, "one")
	wantOnly := func(step, remote string) {
		t.Helper()
		for name, bare := range bares {
			got := syncBareTip(t, s, bare)
			if name == remote && got != d.tip(t) {
				t.Fatalf("%s: remote %s has ghyll/memory %q, want %s", step, name, got, d.tip(t))
			}
			if name != remote && got != "" {
				t.Fatalf("%s: remote %s got ghyll/memory too", step, name)
			}
		}
	}
	// Neither ctx.remote nor an upstream: origin.
	out := d.must(t, "push")
	syncWantPushed(t, "push without upstream", out, "origin", d.tip(t))
	wantOnly("origin", "origin")

	// The upstream of the current branch wins over origin.
	d.git(t, "fetch", "-q", "up")
	d.git(t, "branch", "--set-upstream-to=up/main", "main")
	d.git(t, "--git-dir="+bares["origin"], "update-ref", "-d", memRef)
	out = d.must(t, "push")
	syncWantPushed(t, "push with upstream up", out, "up", d.tip(t))
	wantOnly("upstream", "up")

	// ctx.remote wins over the upstream.
	d.git(t, "--git-dir="+bares["up"], "update-ref", "-d", memRef)
	d.git(t, "config", "ctx.remote", "third")
	out = d.must(t, "push")
	syncWantPushed(t, "push with ctx.remote third", out, "third", d.tip(t))
	wantOnly("ctx.remote", "third")

	// An explicit argument beats them all; pull and sync resolve the same way.
	out = d.must(t, "push", "origin")
	syncWantPushed(t, "push origin", out, "origin", d.tip(t))
	out = d.must(t, "pull")
	if !strings.Contains(out, "up to date with third") {
		t.Fatalf("pull with ctx.remote third: %q", out)
	}
	if got := d.git(t, "rev-parse", "refs/remotes/third/ghyll/memory"); got != d.tip(t) {
		t.Fatalf("refs/remotes/third/ghyll/memory %s, want %s", got, d.tip(t))
	}
}

// TestSyncFirstPushRefused: a remote without any branch gets no memory
// branch unless --force-first-push.
func TestSyncFirstPushRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bare := syncNewBare(t, s, filepath.Join(s.root, "empty.git"))
	d := newSyncDevice(s, "A", newRepo(t, s, "A"))
	d.git(t, "remote", "add", "origin", bare)
	d.must(t, "init")
	d.cp(t, "first")
	for _, cmd := range []string{"push", "sync"} {
		r := d.ctx(t, cmd)
		wantCode(t, cmd+" to a remote with no branches", r, 7)
		if !strings.Contains(r.stderr, "--force-first-push") {
			t.Fatalf("%s: the advice does not mention --force-first-push: %q", cmd, r.stderr)
		}
		if refs := gitOut(t, bare, d.env, "for-each-ref"); refs != "" {
			t.Fatalf("%s refused, yet the remote has refs:\n%s", cmd, refs)
		}
	}
	out := d.must(t, "push", "--force-first-push")
	syncWantPushed(t, "push --force-first-push", out, "origin", d.tip(t))
	if got := syncBareTip(t, s, bare); got != d.tip(t) {
		t.Fatalf("remote ghyll/memory %q, want %s", got, d.tip(t))
	}
	// Once the remote has the branch, later pushes need no flag.
	d.cp(t, "second")
	d.must(t, "push")
	if got := syncBareTip(t, s, bare); got != d.tip(t) {
		t.Fatalf("remote ghyll/memory %q after the second push, want %s", got, d.tip(t))
	}
}

// TestSyncTransportFailure: an unreachable remote, a wrong password and
// missing credentials all fail fast with exit 4 and one line, and never
// wait for a prompt.
func TestSyncTransportFailure(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	// Unreachable.
	d := newSyncDevice(s, "A", newRepo(t, s, "A"))
	d.git(t, "remote", "add", "origin", "http://127.0.0.1:1/x.git")
	d.must(t, "init")
	d.cp(t, "one")
	tip := d.tip(t)
	for _, cmd := range []string{"pull", "push", "sync"} {
		r, timedOut := syncRunNoTTY(t, d.dir, d.env, nil, 60*time.Second, "git", "ctx", cmd)
		if timedOut {
			t.Fatalf("%s to an unreachable remote hung:\n%s", cmd, r)
		}
		wantCode(t, cmd+" to an unreachable remote", r, 4)
		wantOneLine(t, cmd+" to an unreachable remote", r.stderr)
		if !strings.Contains(r.stderr, "origin") {
			t.Fatalf("%s: the message does not name the remote: %q", cmd, r.stderr)
		}
	}
	if d.tip(t) != tip {
		t.Fatal("a failed exchange moved the memory branch")
	}

	// HTTP with basic auth: wrong password, then no credentials at all.
	base := s.dir(t, "srv")
	bare := syncNewBare(t, s, filepath.Join(base, "remote.git"))
	srv := syncStartHTTP(t, s, base, "u", "p")
	seed := newSyncDevice(s, "seed", newRepo(t, s, "seed"))
	seed.git(t, "push", "-q", bare, "main")
	d2 := newSyncDevice(s, "B", newRepo(t, s, "B"))
	d2.git(t, "remote", "add", "origin", srv.url+"/remote.git")
	d2.must(t, "init")
	d2.cp(t, "one")

	wrong := filepath.Join(s.root, "gitconfig-wrong")
	writeFile(t, wrong, string(readFile(t, filepath.Join(s.root, "gitconfig"))))
	mustRun(t, s.root, d2.env, "git", "config", "--file", wrong, "credential.helper", "!f() { echo username=u; echo password=wrong; }; f")
	// The product, not the test, must disable terminal prompts.
	noPrompt := syncWithout(d2.env, "GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "SSH_ASKPASS")
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"wrong password", withEnv(noPrompt, "GIT_CONFIG_GLOBAL="+wrong), "Authentication failed"},
		{"no credentials", noPrompt, "terminal prompts disabled"},
	}
	// stdin is never a terminal here: an empty pipe, or /dev/null (a
	// character device, but no terminal).
	for _, stdin := range []struct {
		name string
		data []byte
	}{{"stdin a pipe", []byte{}}, {"stdin /dev/null", nil}} {
		for _, c := range cases {
			for _, cmd := range []string{"pull", "push", "sync"} {
				what := c.name + ", " + stdin.name + ", " + cmd
				before := srv.unauthorized.Load()
				start := time.Now()
				r, timedOut := syncRunNoTTY(t, d2.dir, c.env, stdin.data, 60*time.Second, "git", "ctx", cmd)
				if timedOut {
					t.Errorf("%s: hung (a prompt?):\n%s", what, r)
					continue
				}
				if r.code != 4 || !strings.Contains(r.stderr, c.want) {
					t.Errorf("%s: want exit 4 and %q, got %s", what, c.want, r)
					continue
				}
				wantOneLine(t, what, r.stderr)
				if srv.unauthorized.Load() == before {
					t.Errorf("%s: the server saw no unauthorised request", what)
				}
				if el := time.Since(start); el > 30*time.Second {
					t.Errorf("%s took %v", what, el)
				}
			}
		}
	}
	if syncBareTip(t, s, bare) != "" {
		t.Fatal("an unauthorised push created ghyll/memory on the remote")
	}
	// With the right password it goes through.
	syncCredentialHelper(t, s, "u", "p")
	d2.must(t, "push")
	if got := syncBareTip(t, s, bare); got != d2.tip(t) {
		t.Fatalf("remote ghyll/memory %q after an authorised push, want %s", got, d2.tip(t))
	}
}

// TestSyncPartialImport: a device that holds the first records of a chain
// verifies and merges only the new ones.
func TestSyncPartialImport(t *testing.T) {
	t.Parallel()
	s, rem, b := cltTeam(t, "file", "B")
	b1, b2 := b.cp(t, "b1"), b.cp(t, "b2")
	b.must(t, "push")
	idB := b.id(t)

	c := syncCloneDevice(t, s, rem, "C")
	out := c.must(t, "pull")
	syncWantLine(t, "C's first pull", out, syncPulled(idB, 2))
	syncWantHashes(t, "C's log after the first pull", c.hashes(t), b1.Hash, b2.Hash)

	b3, b4 := b.cp(t, "b3"), b.cp(t, "b4")
	b.must(t, "push")
	out = c.must(t, "pull")
	syncWantLine(t, "C's second pull", out, syncPulled(idB, 2))
	if !strings.Contains(out, "Merged 2 checkpoints from origin") {
		t.Fatalf("C's second pull: %q", out)
	}
	if strings.Contains(out, "new device") {
		t.Fatalf("C's second pull pins B's key again: %q", out)
	}
	syncWantHashes(t, "C's log after the second pull", c.hashes(t), b1.Hash, b2.Hash, b3.Hash, b4.Hash)
	if n := len(logJSON(t, c.dir, c.env)); n != 4 {
		t.Fatalf("C's log has %d entries, want 4", n)
	}
	c.wantVerifies(t)
	if q := syncUnverified(t, c); len(q) != 0 {
		t.Fatalf("an honest partial import quarantined %+v", q)
	}

	// --json says the same.
	b5 := b.cp(t, "b5")
	b.must(t, "push")
	js := c.must(t, "pull", "--json")
	for _, want := range []string{`"added": 1`, `"device": "` + idB + `"`} {
		if !strings.Contains(js, want) {
			t.Fatalf("pull --json lacks %s:\n%s", want, js)
		}
	}
	syncWantHashes(t, "C's log after the third pull", c.hashes(t), b1.Hash, b2.Hash, b3.Hash, b4.Hash, b5.Hash)
}
