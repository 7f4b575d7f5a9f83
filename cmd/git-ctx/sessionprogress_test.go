package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/sessions"
)

// psFakeClock is a clock the test moves by hand.
type psFakeClock struct{ t time.Time }

func (c *psFakeClock) now() time.Time { return c.t }

// TestProgressMeterRendering: nothing within the first second, then one
// self-overwriting line with the phase, bytes, total and rate; Done clears
// it once and nothing is drawn after.
func TestProgressMeterRendering(t *testing.T) {
	clk := &psFakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	m := newProgressMeter(&out, clk.now)
	m.Phase(sessions.PhaseDerivingKey, 0)
	clk.t = clk.t.Add(900 * time.Millisecond)
	m.draw()
	if out.Len() != 0 {
		t.Fatalf("drawn within the first second: %q", out.String())
	}
	clk.t = clk.t.Add(200 * time.Millisecond)
	m.draw()
	if got, want := out.String(), "\r\x1b[Kgit-ctx: deriving key…"; got != want {
		t.Fatalf("key derivation line %q, want %q", got, want)
	}
	out.Reset()
	m.Phase(sessions.PhaseUploading, 4<<20)
	m.Add(1 << 20)
	m.Add(1 << 20)
	clk.t = clk.t.Add(2 * time.Second)
	m.draw()
	if got, want := out.String(), "\r\x1b[Kgit-ctx: encrypting and uploading 0 B / 4.0 MiB\r\x1b[Kgit-ctx: encrypting and uploading 2.0 MiB / 4.0 MiB (1.0 MiB/s)"; got != want {
		t.Fatalf("upload line %q, want %q", got, want)
	}
	out.Reset()
	m.Done()
	m.Done()
	m.Phase(sessions.PhaseRestoring, 10)
	m.draw()
	if got := out.String(); got != "\r\x1b[K" {
		t.Fatalf("after Done: %q, want one clear", got)
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 64 << 20: "64.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestProgressMeterSilentWhenFast: a command that ends within the first
// second draws nothing at all, not even a clear.
func TestProgressMeterSilentWhenFast(t *testing.T) {
	clk := &psFakeClock{t: time.Now()}
	var out bytes.Buffer
	m := newProgressMeter(&out, clk.now)
	m.Phase(sessions.PhaseDownloading, 0)
	m.Add(100)
	clk.t = clk.t.Add(500 * time.Millisecond)
	m.draw()
	m.Done()
	if out.Len() != 0 {
		t.Fatalf("fast command drew %q", out.String())
	}
}

// writeClaudeSessionOf writes one Claude Code session transcript of the
// work tree repo under root/.claude/projects (where Claude Code keeps it
// when HOME is root), as the session commands find it.
func writeClaudeSessionOf(t *testing.T, root, repo string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(real, "-")
	id := "5f0c3a2e-8f1d-4b7a-9c2e-1d2f3a4b5c6d"
	p := filepath.Join(root, ".claude", "projects", key, id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":%q,"message":"hi"}`+"\n", id, real)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// psSessionFixture is a repository with one Claude Code session, a
// directory store and a passphrase file; it returns the session arguments
// of a push. The progress line is shown at once (progressDelay 0).
func psSessionFixture(t *testing.T) []string {
	t.Helper()
	repo := exitFixture(t)
	root := filepath.Dir(repo)
	pass := filepath.Join(root, "pass")
	if err := os.WriteFile(pass, []byte("correct horse battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeClaudeSessionOf(t, root, repo)
	t.Setenv("GIT_CTX_PASSPHRASE_FD", "")
	t.Setenv("REINSTATE_PASSPHRASE_FD", "")
	t.Setenv("GIT_CTX_QUIET", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	old := progressDelay
	progressDelay = 0
	t.Cleanup(func() { progressDelay = old })
	return []string{"--store", "file://" + filepath.Join(root, "store"), "--passphrase-file", pass}
}

// psRunTo runs the CLI in process with stderr going to errf.
func psRunTo(t *testing.T, errf *os.File, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), append([]string{"git-ctx"}, args...), strings.NewReader(""), &out, errf)
	return code, out.String()
}

// TestSessionProgressSilentOffTerminal: with stderr a regular file (not a
// terminal) or a buffer, push, list and pull draw no progress line, even
// with the delay at zero; --json output is unchanged JSON.
func TestSessionProgressSilentOffTerminal(t *testing.T) {
	sess := psSessionFixture(t)
	errf, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	for _, args := range [][]string{
		append([]string{"session", "push", "--work-factor", "10", "--json"}, sess...),
		append([]string{"session", "list"}, sess...),
		append([]string{"session", "pull", "--json"}, sess...),
	} {
		code, stdout := psRunTo(t, errf, args...)
		if code != 0 {
			data, _ := os.ReadFile(errf.Name())
			t.Fatalf("%v: exit %d: %s", args, code, data)
		}
		if slices.Contains(args, "--json") && !strings.HasPrefix(stdout, "{") {
			t.Fatalf("%v: stdout is not JSON: %q", args, stdout)
		}
	}
	if code, _, stderr := runIn("", append([]string{"session", "list"}, sess...)...); code != 0 || strings.Contains(stderr, "git-ctx: deriving") {
		t.Fatalf("list to a buffer: exit %d, stderr %q", code, stderr)
	}
	data, err := os.ReadFile(errf.Name())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "\r") || strings.Contains(string(data), "deriving key") {
		t.Fatalf("progress written to a non-terminal stderr: %q", data)
	}
}
