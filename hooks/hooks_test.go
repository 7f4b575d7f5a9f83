package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGitVersion(t *testing.T) {
	cases := []struct {
		in           string
		major, minor int
		config       bool
	}{
		{"git version 2.39.5\n", 2, 39, false},
		{"git version 2.54.0", 2, 54, true},
		{"git version 2.60.1.windows.1", 2, 60, true},
		{"git version 3.0.0", 3, 0, true},
		{"git version 2.53.9 (Apple Git-150)", 2, 53, false},
	}
	for _, c := range cases {
		ma, mi, err := parseGitVersion(c.in)
		if err != nil || ma != c.major || mi != c.minor || ConfigHooksSupported(ma, mi) != c.config {
			t.Errorf("%q: %d.%d %v", c.in, ma, mi, err)
		}
	}
	if _, _, err := parseGitVersion("hub version 1"); err == nil {
		t.Error("accepted a non-git version")
	}
}

func TestStub(t *testing.T) {
	s := string(Stub(PrePush))
	for _, want := range []string{"#!/bin/sh\n", Marker + " pre-push v1", `"$prev" "$@" || status=$?`, "git-ctx hook pre-push \"$@\" </dev/null || true", "exit $status"} {
		if !strings.Contains(s, want) {
			t.Errorf("stub lacks %q", want)
		}
	}
	if configHookName(PostCommit) == PostCommit {
		t.Error("a config hook named like its event is fatal to git")
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	in := []byte(`{"z": 1, "permissions": {"allow": ["Bash(ls)"]}, "a": [1,2], "z": 3}`)
	o, err := parseObject(in)
	if err != nil {
		t.Fatal(err)
	}
	o.set("hooks", []byte(`{"Stop":[]}`))
	o.del("a")
	got := string(o.compact())
	want := `{"z":3,"permissions":{"allow":["Bash(ls)"]},"hooks":{"Stop":[]}}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := parseObject([]byte(`[1]`)); err == nil {
		t.Fatal("accepted an array")
	}
}

func TestClaudeInstallUninstallRestoresBytes(t *testing.T) {
	top, state := t.TempDir(), t.TempDir()
	path := ClaudeSettingsPath(top)
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := []byte("{\n    \"permissions\": {\"allow\": [\"Bash(go test:*)\"]},\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}\n}\n")
	os.WriteFile(path, orig, 0o644)
	if _, err := InstallClaude(top, state); err != nil {
		t.Fatal(err)
	}
	if msg, _ := InstallClaude(top, state); !strings.Contains(msg, "already") {
		t.Fatalf("second install: %q", msg)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(ClaudeStopCommand)) || !bytes.Contains(data, []byte("say done")) || !bytes.Contains(data, []byte("Bash(go test:*)")) {
		t.Fatalf("merged settings lost something:\n%s", data)
	}
	if bytes.Index(data, []byte("permissions")) > bytes.Index(data, []byte("hooks")) {
		t.Fatal("key order changed")
	}
	if _, err := UninstallClaude(top, state); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Fatalf("not restored byte for byte:\n%s", got)
	}
	// Created by install → removed by uninstall.
	os.Remove(path)
	InstallClaude(top, state)
	UninstallClaude(top, state)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("settings file created by install was left behind")
	}
	// Edited after install → only our entry is removed.
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatal("the .claude directory install created was left behind")
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, orig, 0o644)
	InstallClaude(top, state)
	data, _ = os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte("Bash(go test:*)"), []byte("Bash(make:*)"), 1), 0o644)
	UninstallClaude(top, state)
	data, _ = os.ReadFile(path)
	if bytes.Contains(data, []byte(ClaudeStopCommand)) || !bytes.Contains(data, []byte("Bash(make:*)")) || !bytes.Contains(data, []byte("say done")) {
		t.Fatalf("surgical removal went wrong:\n%s", data)
	}
}

func TestCodexInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	repoA, repoB := t.TempDir(), t.TempDir() // stand-ins for two repositories' git directories
	global := Options{Global: true}
	path := filepath.Join(home, "config.toml")
	orig := []byte("model = \"o4\"\n\n[mcp_servers.x]\ncommand = \"y\"\nnotify = \"not top level\"\n")
	os.WriteFile(path, orig, 0o644)
	if _, err := InstallCodex(repoA, Options{}); !errors.Is(err, ErrShared) {
		t.Fatalf("install without --global: %v, want ErrShared", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Fatal("install without --global changed the user's configuration")
	}
	if _, err := InstallCodex(repoA, global); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), CodexNotifyLine+"\n") || !CodexInstalled() {
		t.Fatalf("notify not at top level:\n%s", data)
	}
	if _, err := InstallCodex(repoB, global); err != nil {
		t.Fatal(err)
	}
	// A's uninstall keeps what B still uses; B's restores the original.
	if msg, err := UninstallCodex(repoA, Options{}); err != nil || !strings.Contains(msg, "still used by 1 other repository") || !CodexInstalled() {
		t.Fatalf("uninstall while another repository uses it: %q %v", msg, err)
	}
	if msg, err := UninstallCodex(repoA, Options{}); err != nil || !strings.Contains(msg, "not installed from this repository") || !CodexInstalled() {
		t.Fatalf("second uninstall from A: %q %v", msg, err)
	}
	if _, err := UninstallCodex(repoB, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Fatalf("not restored:\n%s", got)
	}
	foreign := []byte("notify = [\"terminal-notifier\"]\n")
	os.WriteFile(path, foreign, 0o644)
	if _, err := InstallCodex(repoA, global); err == nil {
		t.Fatal("replaced a foreign notify without --force")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, foreign) {
		t.Fatal("foreign notify changed")
	}
	if _, err := InstallCodex(repoA, Options{Force: true, Global: true}); err != nil || !CodexInstalled() {
		t.Fatal(err)
	}
	UninstallCodex(repoA, Options{})
	if got, _ := os.ReadFile(path); !bytes.Equal(got, foreign) {
		t.Fatalf("forced install not undone:\n%s", got)
	}
}

// TestUsersFile: users are kept sorted and unique, vanished repositories
// are forgotten, and the file goes away with its last user.
func TestUsersFile(t *testing.T) {
	dir := t.TempDir()
	a, b, gone := t.TempDir(), t.TempDir(), filepath.Join(dir, "gone")
	u := usersFile(filepath.Join(dir, "users"))
	for _, r := range []string{b, a, a, gone} {
		if err := u.add(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := u.list()
	if err != nil || len(got) != 2 {
		t.Fatalf("list = %q, %v; want the two existing repositories", got, err)
	}
	if was, left, err := u.remove(gone); err != nil || was || left != 2 {
		t.Fatalf("remove(vanished) = %v %d %v", was, left, err)
	}
	if was, left, err := u.remove(a); err != nil || !was || left != 1 {
		t.Fatalf("remove(a) = %v %d %v", was, left, err)
	}
	if was, left, err := u.remove(b); err != nil || !was || left != 0 || u.exists() {
		t.Fatalf("remove(b) = %v %d %v, file still there: %v", was, left, err, u.exists())
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b/.githooks", "/a/b", true},
		{"/a/b", "/a/b", true},
		{"/a/bc/hooks", "/a/b", false},
		{"/a/hooks", "/a/b", false},
		{"/x/../a/b/h", "/a/b", true},
	} {
		if got := within(c.path, c.dir); got != c.want {
			t.Errorf("within(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

func TestRelativeTo(t *testing.T) {
	got := relativeTo("/repo", []string{"/repo/a/b.go", "/elsewhere/c.go", "rel.go", "/repo"})
	want := []string{"a/b.go", "/elsewhere/c.go", "rel.go", "."}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v", got)
		}
	}
	if relativeTo("/repo", nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

// TestClaudeInstallMatchesKeysExactly: a Stop group whose keys differ from
// Claude Code's only in case runs nothing there, so it is not taken for
// git-ctx's hook: install adds the real one beside it.
func TestClaudeInstallMatchesKeysExactly(t *testing.T) {
	top, state := t.TempDir(), t.TempDir()
	path := ClaudeSettingsPath(top)
	os.MkdirAll(filepath.Dir(path), 0o755)
	folded := fmt.Sprintf(`{"hooks": {"Stop": [{"HOOKS": [{"type": "command", "COMMAND": %q}]}]}}`, ClaudeStopCommand)
	os.WriteFile(path, []byte(folded), 0o644)
	msg, err := InstallClaude(top, state)
	if err != nil || strings.Contains(msg, "already") {
		t.Fatalf("install beside a case-folded group: %q %v", msg, err)
	}
	data, _ := os.ReadFile(path)
	if want := fmt.Sprintf(`"command": %q`, ClaudeStopCommand); !bytes.Contains(data, []byte(want)) || !bytes.Contains(data, []byte(`"HOOKS"`)) {
		t.Fatalf("settings after install:\n%s", data)
	}
}
