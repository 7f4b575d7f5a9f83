package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEncodeProjectKey(t *testing.T) {
	for in, want := range map[string]string{
		"/Users/fixture-user/code/demo":   "-Users-fixture-user-code-demo",
		`C:\Users\fixture-user\code\demo`: "C--Users-fixture-user-code-demo",
		"/home/ü/x":                       "-home---x",
		"/a/😀":                            "-a---", // two UTF-16 units
	} {
		if got := EncodeProjectKey(in); got != want {
			t.Errorf("EncodeProjectKey(%q) = %q, want %q", in, got, want)
		}
	}
	long := "/" + strings.Repeat("a", 250)
	got := EncodeProjectKey(long)
	if len(got) <= 201 || got[:201] != "-"+strings.Repeat("a", 199)+"-" {
		t.Fatalf("long key %q", got)
	}
}

func TestCodexSessionID(t *testing.T) {
	name := "rollout-2026-11-30T05-00-00-019A1B2C-3D4E-7F60-8A9B-0C1D2E3F4A5B.jsonl"
	if got := CodexSessionID(name, []byte(`{"payload":{"id":"other"}}`)); got != "019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b" {
		t.Fatalf("trailing UUID: %q", got)
	}
	if got := CodexSessionID("x.jsonl", []byte(`{"type":"session_meta","payload":{"id":"p1"}}`)); got != "p1" {
		t.Fatalf("payload id: %q", got)
	}
	if got := CodexSessionID("x.jsonl", []byte(`garbage`)); got != "x" {
		t.Fatalf("stem: %q", got)
	}
}

func TestDestinations(t *testing.T) {
	root := t.TempDir()
	rel, err := Claude{}.Destination("projects/-old-key/s.jsonl", "s", "s", root)
	if err != nil || rel != "projects/"+EncodeProjectKey(root)+"/s.jsonl" {
		t.Fatalf("claude destination %q %v", rel, err)
	}
	a := "sessions/2026/11/30/rollout-2026-11-30T05-00-00-019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b.jsonl"
	if rel, err := (Codex{}).Destination(a, "x", "x", root); err != nil || rel != a {
		t.Fatalf("codex destination %q %v", rel, err)
	}
	fork := "11111111-2222-5333-8444-555555555555"
	rel, err = Codex{}.Destination(a, "019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b", fork, root)
	if err != nil || rel != "sessions/2026/11/30/rollout-2026-11-30T05-00-00-"+fork+".jsonl" {
		t.Fatalf("codex fork destination %q %v", rel, err)
	}
}

func TestDiscoverSkipsSymlinksAndOtherProjects(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "claude"))
	t.Setenv("CODEX_HOME", filepath.Join(home, "codex"))
	wt := filepath.Join(home, "wt")
	os.MkdirAll(wt, 0o755)
	dir := filepath.Join(home, "claude", "projects", EncodeProjectKey(wt))
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "old.jsonl"), []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "new.jsonl"), []byte(`{"version":"9.9.9"}`+"\n"), 0o600)
	os.Chtimes(filepath.Join(dir, "old.jsonl"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	os.Symlink("/etc/passwd", filepath.Join(dir, "link.jsonl"))
	list, err := Claude{}.Discover(Project{Root: wt})
	if err != nil || len(list) != 2 || list[0].ID != "new" || list[1].ID != "old" || list[0].Version != "9.9.9" {
		t.Fatalf("claude discover: %+v %v", list, err)
	}
	if w := (Claude{}).VersionWarning("9.9.9"); w == "" {
		t.Fatal("no warning for an untested version")
	}
	if w := (Claude{}).VersionWarning("2.1.219"); w != "" {
		t.Fatalf("warning for a tested version: %s", w)
	}
	cdir := filepath.Join(home, "codex", "sessions", "2026", "11", "30")
	os.MkdirAll(cdir, 0o700)
	os.WriteFile(filepath.Join(cdir, "rollout-a.jsonl"), []byte(`{"type":"session_meta","payload":{"id":"a","cwd":"`+wt+`/sub"}}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(cdir, "rollout-b.jsonl"), []byte(`{"type":"session_meta","payload":{"id":"b","cwd":"`+wt+`2"}}`+"\n"), 0o600)
	cl, err := Codex{}.Discover(Project{Root: wt})
	if err != nil || len(cl) != 1 || cl[0].ID != "a" || cl[0].Rel != "sessions/2026/11/30/rollout-a.jsonl" {
		t.Fatalf("codex discover: %+v %v", cl, err)
	}
}

func TestRewriteID(t *testing.T) {
	cl := Claude{}.RewriteID("old", "new")
	got, err := cl([]byte(`{"sessionId":"old","x":{"session_id":"old"},"other":"old","n":1.0}` + "\n"))
	if err != nil || string(got) != `{"sessionId":"new","x":{"session_id":"new"},"other":"old","n":1.0}`+"\n" {
		t.Fatalf("claude rewrite: %s %v", got, err)
	}
	if (Claude{}).RewriteID("same", "same") != nil {
		t.Fatal("rewrite for an unchanged id")
	}
	cx := Codex{}.RewriteID("old", "new")
	got, _ = cx([]byte(`{"type":"session_meta","payload":{"id":"old","cwd":"/x"}}`))
	if string(got) != `{"type":"session_meta","payload":{"id":"new","cwd":"/x"}}` {
		t.Fatalf("codex rewrite: %s", got)
	}
	line := []byte(`{"type":"response_item","payload":{"id":"old"}}`)
	if got, _ = cx(line); string(got) != string(line) {
		t.Fatalf("codex rewrote a non-meta record: %s", got)
	}
}

// TestVersionWarning: each adapter warns, naming its agent, about a recorded
// version outside the tested range or one that does not parse, and is
// silent about an unrecorded or tested version.
func TestVersionWarning(t *testing.T) {
	cases := []struct {
		a    interface{ VersionWarning(string) string }
		v    string
		want string
	}{
		{Claude{}, "", ""},
		{Claude{}, "2.1.219", ""},
		{Claude{}, "2.1.220", ""},
		{Claude{}, "2.1.221", "Claude Code 2.1.221 is outside the versions tested with this format (2.1.219 to 2.1.220); continuing"},
		{Claude{}, "beta", "Claude Code beta is outside the versions tested with this format (2.1.219 to 2.1.220); continuing"},
		{Codex{}, "", ""},
		{Codex{}, "0.140.2", ""},
		{Codex{}, "0.132.9", "Codex 0.132.9 is outside the versions tested with this format (0.133.0 to 0.145.0); continuing"},
	}
	for _, c := range cases {
		if got := c.a.VersionWarning(c.v); got != c.want {
			t.Errorf("%T.VersionWarning(%q) = %q, want %q", c.a, c.v, got, c.want)
		}
	}
}
