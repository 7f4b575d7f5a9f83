package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestIdentityErrors: a device key with loose permissions or corrupt
// contents, and a ctx.device override (valid and unsafe).
func TestIdentityErrors(t *testing.T) {
	t.Run("key-mode-0644", identityKeyMode0644)
	t.Run("key-corrupt", identityKeyCorrupt)
	t.Run("ctx.device-override", identityDeviceOverride)
}

// identityKeyMode0644: a 0644 key is refused (exit 3, chmod 600 advice)
// for writes, never fixed silently, and not needed for reads.
func identityKeyMode0644(t *testing.T) {
	s, repo, env := newInitRepo(t)
	st := inproc.Status(t, repo, env)
	key := filepath.Join(s.CtxHome("dev"), "keys", st.Device+".key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v (want mode 0600)", key, fi.Mode(), err)
	}
	if fi, err := os.Stat(s.CtxHome("dev")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("GIT_CTX_HOME mode: %v %v (want 0700)", fi.Mode(), err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	tip := inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef)
	for _, args := range [][]string{{"checkpoint", "-m", "x"}, {"status"}, {"init"}} {
		r := inproc.Ctx(t, repo, env, args...)
		testrepo.WantCode(t, "with a 0644 key: "+args[0], r, 3)
		testrepo.WantOneLine(t, args[0], r.Stderr)
		if !strings.Contains(r.Stderr, "chmod 600") {
			t.Fatalf("%s with a 0644 key: stderr should say chmod 600: %q", args[0], r.Stderr)
		}
	}
	if inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef) != tip {
		t.Fatal("the branch moved although the key was refused")
	}
	// The mode is reported, never fixed silently.
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o644 {
		t.Fatalf("git-ctx changed the key mode to %v", fi.Mode())
	}
	// Reading does not need the key.
	inproc.MustCtx(t, repo, env, "log")
	inproc.MustCtx(t, repo, env, "verify")
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	inproc.Checkpoint(t, repo, env, "-m", "after chmod 600")
}

// identityKeyCorrupt: a corrupt key is refused (exit 3) without quoting
// it, and left alone.
func identityKeyCorrupt(t *testing.T) {
	s, repo, env := newInitRepo(t)
	st := inproc.Status(t, repo, env)
	key := filepath.Join(s.CtxHome("dev"), "keys", st.Device+".key")
	if err := os.WriteFile(key, []byte("-----BEGIN ED25519 PRIVATE KEY-----\nnot base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := inproc.Ctx(t, repo, env, "checkpoint", "-m", "x")
	testrepo.WantCode(t, "checkpoint with a corrupt key", r, 3)
	testrepo.WantOneLine(t, "corrupt key", r.Stderr)
	if !strings.Contains(r.Stderr, "corrupt") || strings.Contains(r.Stderr, "not base64") {
		t.Fatalf("corrupt key stderr: %q", r.Stderr)
	}
	// The corrupt key is left alone, not replaced by a fresh one.
	if b := string(testrepo.ReadFile(t, key)); !strings.Contains(b, "not base64!") {
		t.Fatalf("git-ctx rewrote the corrupt key: %q", b)
	}
}

// identityDeviceOverride: ctx.device names another device with its own
// key and chain; an unsafe id is refused before anything is written.
func identityDeviceOverride(t *testing.T) {
	s, repo, env := newInitRepo(t)
	first := inproc.Checkpoint(t, repo, env, "-m", "as the default device")
	inproc.MustRun(t, repo, env, "git", "config", "ctx.device", "other-id")
	cp := inproc.Checkpoint(t, repo, env, "-m", "as other-id")
	if cp.Device != "other-id" || cp.Parent != testrepo.ZeroHash || cp.Turn != 1 {
		t.Fatalf("checkpoint under ctx.device=other-id: device %q parent %s turn %d", cp.Device, cp.Parent, cp.Turn)
	}
	home := s.CtxHome("dev")
	if _, err := os.Stat(filepath.Join(home, "keys", "other-id.key")); err != nil {
		t.Fatalf("no key for other-id: %v", err)
	}
	pub := string(testrepo.ReadFile(t, filepath.Join(home, "keys", "other-id.pub")))
	if got := testrepo.BranchFile(t, repo, env, "devices/other-id.pub"); got != pub {
		t.Fatalf("devices/other-id.pub on the branch %q, local %q", got, pub)
	}
	if first.Device == "other-id" || testrepo.BranchFile(t, repo, env, "devices/"+first.Device+".pub") == pub {
		t.Fatal("other-id shares the default device's key")
	}
	st := inproc.Status(t, repo, env)
	if st.Device != "other-id" || st.Devices != 2 || st.Checkpoints != 2 || st.DeviceCheckpoints != 1 || !st.KeyPublished {
		t.Fatalf("status: %+v", st)
	}
	if got := inproc.Log(t, repo, env, "--device", "other-id"); len(got) != 1 || got[0].Hash != cp.Hash {
		t.Fatalf("log --device other-id: %+v", got)
	}
	rep := inproc.Verify(t, repo, env)
	if !rep.OK || len(rep.Chains) != 2 {
		t.Fatalf("verify with two devices:\n%s", rep.Raw)
	}

	// An unsafe id is refused before anything is written.
	tip := inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef)
	for _, bad := range []string{"../x", "A-Upper", "x.pub"} {
		inproc.MustRun(t, repo, env, "git", "config", "ctx.device", bad)
		r := inproc.Ctx(t, repo, env, "checkpoint", "-m", "x")
		testrepo.WantCode(t, "ctx.device="+bad, r, 3)
		testrepo.WantOneLine(t, "ctx.device="+bad, r.Stderr)
		if !strings.Contains(r.Stderr, "ctx.device") {
			t.Fatalf("ctx.device=%s stderr: %q", bad, r.Stderr)
		}
	}
	if inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef) != tip {
		t.Fatal("the branch moved under an invalid ctx.device")
	}
	if _, err := os.Stat(filepath.Join(home, "x.key")); err == nil {
		t.Fatal("ctx.device=../x wrote a key outside GIT_CTX_HOME/keys")
	}
}

// TestDeviceKeyConflict: two machines forced to one device id. The second
// must not write under a key the branch does not know for that id.
func TestDeviceKeyConflict(t *testing.T) {
	s := newSandbox(t)
	envA, envB := s.Env("a"), s.Env("b")
	repoA := testrepo.NewRepo(t, s, "a")
	inproc.MustRun(t, repoA, envA, "git", "config", "ctx.device", "same")
	inproc.MustCtx(t, repoA, envA, "init")
	cpA := inproc.Checkpoint(t, repoA, envA, "-m", "by A")

	repoB := filepath.Join(s.Root, "b")
	inproc.MustRun(t, s.Root, envB, "git", "clone", "-q", repoA, repoB)
	inproc.MustRun(t, repoB, envB, "git", "config", "ctx.device", "same")
	inproc.MustRun(t, repoB, envB, "git", "fetch", "-q", repoA, "ghyll/memory:ghyll/memory")
	tip := inproc.GitOut(t, repoB, envB, "rev-parse", testrepo.MemRef)

	for _, args := range [][]string{{"checkpoint", "-m", "by B"}, {"init"}} {
		r := inproc.Ctx(t, repoB, envB, args...)
		testrepo.WantCode(t, "B "+args[0]+" under A's device id", r, 3)
		testrepo.WantOneLine(t, args[0], r.Stderr)
		if !strings.Contains(r.Stderr, "ctx.device") || !strings.Contains(r.Stderr, "same") {
			t.Fatalf("key conflict stderr should name the device and ctx.device: %q", r.Stderr)
		}
	}
	if got := inproc.GitOut(t, repoB, envB, "rev-parse", testrepo.MemRef); got != tip {
		t.Fatalf("B moved the branch despite the key conflict: %s → %s", tip, got)
	}
	if st := inproc.Status(t, repoB, envB); st.KeyPublished || st.Device != "same" {
		t.Fatalf("B status: %+v", st)
	}

	// Following the advice fixes it.
	inproc.MustRun(t, repoB, envB, "git", "config", "ctx.device", "b-laptop")
	cpB := inproc.Checkpoint(t, repoB, envB, "-m", "by B")
	if cpB.Device != "b-laptop" {
		t.Fatalf("B's checkpoint device %q", cpB.Device)
	}
	rep := inproc.Verify(t, repoB, envB)
	if !rep.OK {
		t.Fatalf("verify in B:\n%s", rep.Raw)
	}
	devices := map[string]bool{}
	for _, c := range rep.Chains {
		devices[c.Device] = true
	}
	if !devices["same"] || !devices["b-laptop"] {
		t.Fatalf("verify in B chains: %+v (A's checkpoint %s)", rep.Chains, cpA.Hash[:12])
	}
}
