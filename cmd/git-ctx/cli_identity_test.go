package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	mustCtx(t, repo, env, "init")
	st := cliStatus(t, repo, env)
	key := filepath.Join(s.ctxHome("dev"), "keys", st.Device+".key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v (want mode 0600)", key, fi.Mode(), err)
	}
	if fi, err := os.Stat(s.ctxHome("dev")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("GIT_CTX_HOME mode: %v %v (want 0700)", fi.Mode(), err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	tip := gitOut(t, repo, env, "rev-parse", memRef)
	for _, args := range [][]string{{"checkpoint", "-m", "x"}, {"status"}, {"init"}} {
		r := gitCtx(t, repo, env, args...)
		wantCode(t, "with a 0644 key: "+args[0], r, 3)
		wantOneLine(t, args[0], r.stderr)
		if !strings.Contains(r.stderr, "chmod 600") {
			t.Fatalf("%s with a 0644 key: stderr should say chmod 600: %q", args[0], r.stderr)
		}
	}
	if gitOut(t, repo, env, "rev-parse", memRef) != tip {
		t.Fatal("the branch moved although the key was refused")
	}
	// The mode is reported, never fixed silently.
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o644 {
		t.Fatalf("git-ctx changed the key mode to %v", fi.Mode())
	}
	// Reading does not need the key.
	mustCtx(t, repo, env, "log")
	mustCtx(t, repo, env, "verify")
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	cliCheckpoint(t, repo, env, "-m", "after chmod 600")
}

// identityKeyCorrupt: a corrupt key is refused (exit 3) without quoting
// it, and left alone.
func identityKeyCorrupt(t *testing.T) {
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	mustCtx(t, repo, env, "init")
	st := cliStatus(t, repo, env)
	key := filepath.Join(s.ctxHome("dev"), "keys", st.Device+".key")
	if err := os.WriteFile(key, []byte("-----BEGIN ED25519 PRIVATE KEY-----\nnot base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := gitCtx(t, repo, env, "checkpoint", "-m", "x")
	wantCode(t, "checkpoint with a corrupt key", r, 3)
	wantOneLine(t, "corrupt key", r.stderr)
	if !strings.Contains(r.stderr, "corrupt") || strings.Contains(r.stderr, "not base64") {
		t.Fatalf("corrupt key stderr: %q", r.stderr)
	}
	// The corrupt key is left alone, not replaced by a fresh one.
	if b := string(readFile(t, key)); !strings.Contains(b, "not base64!") {
		t.Fatalf("git-ctx rewrote the corrupt key: %q", b)
	}
}

// identityDeviceOverride: ctx.device names another device with its own
// key and chain; an unsafe id is refused before anything is written.
func identityDeviceOverride(t *testing.T) {
	s := newSandbox(t)
	repo := newRepo(t, s, "repo")
	env := s.env("dev")
	mustCtx(t, repo, env, "init")
	first := cliCheckpoint(t, repo, env, "-m", "as the default device")
	mustRun(t, repo, env, "git", "config", "ctx.device", "other-id")
	cp := cliCheckpoint(t, repo, env, "-m", "as other-id")
	if cp.Device != "other-id" || cp.Parent != zeroHash || cp.Turn != 1 {
		t.Fatalf("checkpoint under ctx.device=other-id: device %q parent %s turn %d", cp.Device, cp.Parent, cp.Turn)
	}
	home := s.ctxHome("dev")
	if _, err := os.Stat(filepath.Join(home, "keys", "other-id.key")); err != nil {
		t.Fatalf("no key for other-id: %v", err)
	}
	pub := string(readFile(t, filepath.Join(home, "keys", "other-id.pub")))
	if got := branchFile(t, repo, env, "devices/other-id.pub"); got != pub {
		t.Fatalf("devices/other-id.pub on the branch %q, local %q", got, pub)
	}
	if first.Device == "other-id" || branchFile(t, repo, env, "devices/"+first.Device+".pub") == pub {
		t.Fatal("other-id shares the default device's key")
	}
	st := cliStatus(t, repo, env)
	if st.Device != "other-id" || st.Devices != 2 || st.Checkpoints != 2 || st.DeviceCheckpoints != 1 || !st.KeyPublished {
		t.Fatalf("status: %+v", st)
	}
	if got := logJSON(t, repo, env, "--device", "other-id"); len(got) != 1 || got[0].Hash != cp.Hash {
		t.Fatalf("log --device other-id: %+v", got)
	}
	rep := verifyJSON(t, repo, env)
	if !rep.OK || len(rep.Chains) != 2 {
		t.Fatalf("verify with two devices:\n%s", rep.Raw)
	}

	// An unsafe id is refused before anything is written.
	tip := gitOut(t, repo, env, "rev-parse", memRef)
	for _, bad := range []string{"../x", "A-Upper", "x.pub"} {
		mustRun(t, repo, env, "git", "config", "ctx.device", bad)
		r := gitCtx(t, repo, env, "checkpoint", "-m", "x")
		wantCode(t, "ctx.device="+bad, r, 3)
		wantOneLine(t, "ctx.device="+bad, r.stderr)
		if !strings.Contains(r.stderr, "ctx.device") {
			t.Fatalf("ctx.device=%s stderr: %q", bad, r.stderr)
		}
	}
	if gitOut(t, repo, env, "rev-parse", memRef) != tip {
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
	envA, envB := s.env("a"), s.env("b")
	repoA := newRepo(t, s, "a")
	mustRun(t, repoA, envA, "git", "config", "ctx.device", "same")
	mustCtx(t, repoA, envA, "init")
	cpA := cliCheckpoint(t, repoA, envA, "-m", "by A")

	repoB := filepath.Join(s.root, "b")
	mustRun(t, s.root, envB, "git", "clone", "-q", repoA, repoB)
	mustRun(t, repoB, envB, "git", "config", "ctx.device", "same")
	mustRun(t, repoB, envB, "git", "fetch", "-q", repoA, "ghyll/memory:ghyll/memory")
	tip := gitOut(t, repoB, envB, "rev-parse", memRef)

	for _, args := range [][]string{{"checkpoint", "-m", "by B"}, {"init"}} {
		r := gitCtx(t, repoB, envB, args...)
		wantCode(t, "B "+args[0]+" under A's device id", r, 3)
		wantOneLine(t, args[0], r.stderr)
		if !strings.Contains(r.stderr, "ctx.device") || !strings.Contains(r.stderr, "same") {
			t.Fatalf("key conflict stderr should name the device and ctx.device: %q", r.stderr)
		}
	}
	if got := gitOut(t, repoB, envB, "rev-parse", memRef); got != tip {
		t.Fatalf("B moved the branch despite the key conflict: %s → %s", tip, got)
	}
	if st := cliStatus(t, repoB, envB); st.KeyPublished || st.Device != "same" {
		t.Fatalf("B status: %+v", st)
	}

	// Following the advice fixes it.
	mustRun(t, repoB, envB, "git", "config", "ctx.device", "b-laptop")
	cpB := cliCheckpoint(t, repoB, envB, "-m", "by B")
	if cpB.Device != "b-laptop" {
		t.Fatalf("B's checkpoint device %q", cpB.Device)
	}
	rep := verifyJSON(t, repoB, envB)
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
