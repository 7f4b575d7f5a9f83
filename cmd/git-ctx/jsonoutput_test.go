package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/ghylldbtest"
	"github.com/urfave/cli/v2"
)

// The --json contract: every command prints --json, docs/JSON.md has a
// section for each with a table of members, and what a command prints
// holds every member its table names (members the table says are
// "omitted" in some cases excepted). The tables are read from docs/JSON.md
// itself, so the document and the code cannot drift apart.

// jsonDocMember is one row of a docs/JSON.md member table.
type jsonDocMember struct {
	names    []string // the backticked names of the first cell
	optional bool     // the meaning says it is omitted in some cases
	in       string   // the "in" column of the checkpoint entries table ("" when none)
}

// jsonDocSections reads docs/JSON.md: "## heading" → the rows of the first
// member table under it (nil when the section has no table).
func jsonDocSections(t *testing.T) map[string][]jsonDocMember {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "JSON.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`([^`]+)`")
	out := map[string][]jsonDocMember{}
	section, inTable, done, inCol := "", false, false, -1
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			section, inTable, done, inCol = strings.TrimSpace(line[3:]), false, false, -1
			out[section] = nil
			continue
		case section == "" || done:
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		switch {
		case !inTable && strings.HasPrefix(line, "| member |") || strings.HasPrefix(line, "| key |"):
			inTable = true
			for i, c := range cells {
				if strings.TrimSpace(c) == "in" {
					inCol = i
				}
			}
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable && strings.HasPrefix(line, "|"):
			m := jsonDocMember{optional: strings.Contains(strings.ToLower(cells[len(cells)-1]), "omitted")}
			for _, n := range names.FindAllStringSubmatch(cells[0], -1) {
				m.names = append(m.names, n[1])
			}
			if inCol >= 0 && inCol < len(cells) {
				m.in = strings.TrimSpace(cells[inCol])
			}
			out[section] = append(out[section], m)
		case inTable:
			done = true // only the first table: the top-level members
		}
	}
	return out
}

// jsonCase is one command run with --json and the sections documenting it.
type jsonCase struct {
	command  string   // the command path, as in the command tree ("pkg verify")
	section  string   // its docs/JSON.md heading
	fields   []string // the sections whose tables name its members (default: section)
	args     []string // the arguments, --json added
	codes    []int    // accepted exit codes (default 0)
	mayEmpty bool     // the fixture may legitimately print an empty array
}

// jsonFixture builds, in the exit-code fixture repository, what the
// commands need: a bare remote, a ghyll database with one bad row, a
// Claude Code session, a file session store and a passphrase file. It
// returns the values the cases name.
type jsonFixture struct {
	repo, root, store, pass, ghyllDB, secret string
}

func newJSONFixture(t *testing.T) *jsonFixture {
	t.Helper()
	repo := exitFixture(t)
	root := filepath.Dir(repo)
	f := &jsonFixture{repo: repo, root: root, store: "file://" + filepath.Join(root, "store"),
		pass: filepath.Join(root, "pass"), ghyllDB: filepath.Join(root, "memory.db"), secret: filepath.Join(root, "secret")}
	os.WriteFile(f.pass, []byte("correct horse battery staple\n"), 0o600)
	os.WriteFile(f.secret, []byte("shared secret\n"), 0o600)
	os.WriteFile(filepath.Join(root, "emb.json"), []byte("[1, 2, 3]"), 0o644)
	os.WriteFile(filepath.Join(root, "emb2.json"), []byte("[1, 2, 4]"), 0o644)
	bare := filepath.Join(root, "remote.git")
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"-C", repo, "remote", "add", "origin", bare},
		{"-C", repo, "push", "-q", "origin", "main"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// A ghyll database of the seed schema with one forged row.
	ghylldbtest.Write(t, f.ghyllDB, ghylldbtest.SeedSchema, ghylldbtest.Insert{Query: `INSERT INTO checkpoints VALUES ('` + strings.Repeat("ab", 32) + `','` + strings.Repeat("0", 64) +
		`','alice-laptop','a',1700000000,'','','s',1,'m','forged',x'','[]','[]',NULL,'` + strings.Repeat("00", 64) + `',1,0)`})
	// A Claude Code session of this work tree.
	writeClaudeSessionOf(t, root, repo)
	return f
}

// TestJSONContract runs every command with --json in a fixture repository
// and checks the members docs/JSON.md names for it.
func TestJSONContract(t *testing.T) {
	doc := jsonDocSections(t)
	f := newJSONFixture(t)
	t.Setenv("GIT_CTX_PASSPHRASE_FD", "")
	t.Setenv("REINSTATE_PASSPHRASE_FD", "")
	t.Setenv("GIT_CTX_QUIET", "1")
	sess := []string{"--store", f.store, "--passphrase-file", f.pass}
	var first string // the first checkpoint's hash, set once it is written
	hashArg := func() string { return first }
	cases := []jsonCase{
		{command: "init", section: "init"},
		{command: "status", section: "status"},
		{command: "checkpoint", section: "checkpoint", args: []string{"-m", "first", "--file", "a.go", "--emb-file", filepath.Join(f.root, "emb.json")}},
		{command: "checkpoint", section: "checkpoint", args: []string{"-m", "second", "--emb-file", filepath.Join(f.root, "emb2.json")}},
		{command: "log", section: "log", fields: []string{"log", "Checkpoint entries"}},
		{command: "log", section: "log --unverified", args: []string{"--unverified"}},
		{command: "show", section: "show", args: []string{"@first"}},
		{command: "search", section: "search", fields: []string{"search", "Checkpoint entries"}, args: []string{"first"}},
		{command: "similar", section: "similar", fields: []string{"similar", "Checkpoint entries"}, args: []string{"--to", "@first"}},
		{command: "verify", section: "verify (the branch)"},
		{command: "verify", section: "verify FILE…", args: []string{filepath.Join(f.root, "cp.json")}},
		{command: "devices", section: "devices"},
		{command: "devices trust", section: "devices trust", args: []string{"bob-laptop-00000000", "--force"}},
		{command: "devices untrust", section: "devices trust", args: []string{"eve-box-00000000", "--force"}},
		{command: "review", section: "review"},
		{command: "checkpoint", section: "checkpoint", args: []string{"--from-commit", "HEAD"}},
		{command: "explain", section: "explain", args: []string{"HEAD"}},
		{command: "reindex", section: "reindex"},
		{command: "import", section: "import", args: []string{"--ghyll-db", f.ghyllDB, "--ghyll-keys", f.root}, codes: []int{1}},
		{command: "export", section: "export", args: []string{"--ghyll-db", filepath.Join(f.root, "export.db")}},
		{command: "doctor", section: "doctor", codes: []int{0, 1}},
		{command: "version", section: "version"},
		{command: "hooks install", section: "hooks install"},
		{command: "hooks status", section: "hooks status"},
		{command: "hooks uninstall", section: "hooks uninstall"},
		{command: "snapshot create", section: "snapshot create"},
		{command: "snapshot list", section: "snapshot list"},
		{command: "snapshot show", section: "snapshot show", args: []string{"@snapshot"}},
		{command: "snapshot verify", section: "snapshot verify", args: []string{"@snapshot"}},
		{command: "snapshot restore", section: "snapshot restore", args: []string{"@snapshot"}},
		{command: "snapshot publish", section: "snapshot publish", args: []string{"@snapshot", "--out", filepath.Join(f.root, "s.json")}},
		{command: "snapshot import", section: "snapshot import", args: []string{filepath.Join(f.root, "s.json")}},
		{command: "pkg build", section: "pkg build", args: []string{"--name", "notes", "--version", "1.0.0", "--sign", "-o", filepath.Join(f.root, "p.ctxpkg")}},
		{command: "pkg verify", section: "pkg verify", args: []string{filepath.Join(f.root, "p.ctxpkg")}},
		{command: "pkg inspect", section: "pkg inspect", args: []string{filepath.Join(f.root, "p.ctxpkg")}},
		{command: "pkg publish", section: "pkg publish", args: []string{filepath.Join(f.root, "p.ctxpkg")}},
		{command: "pkg list", section: "pkg list"},
		{command: "pkg get", section: "pkg get", args: []string{"notes", "-o", filepath.Join(f.root, "q.ctxpkg")}},
		{command: "pkg wrap", section: "pkg wrap", args: []string{filepath.Join(f.root, "p.ctxpkg"), "--secret-file", f.secret, "-o", filepath.Join(f.root, "p.env")}},
		{command: "pkg unwrap", section: "pkg unwrap", args: []string{filepath.Join(f.root, "p.env"), "--secret-file", f.secret, "-o", filepath.Join(f.root, "r.ctxpkg")}},
		{command: "push", section: "push", args: []string{"--force-first-push"}},
		{command: "pull", section: "pull"},
		{command: "sync", section: "sync", fields: []string{"push"}},
		{command: "session status", section: "session status", args: sess},
		{command: "session push", section: "session push", args: append([]string{"--work-factor", "10"}, sess...)},
		{command: "session list", section: "session list", args: sess},
		{command: "session pull", section: "session pull", args: sess},
		{command: "session restore", section: "session pull", args: sess},
		{command: "adopt", section: "adopt", args: []string{"@oldid"}},
	}
	covered := map[string]bool{}
	snapshotID := ""
	for _, tc := range cases {
		covered[tc.command] = true
		if tc.command == "adopt" {
			jsonMoveRepoID(t, f.repo)
		}
		args := append(strings.Fields(tc.command), "--json")
		for _, a := range tc.args {
			switch a {
			case "@first":
				a = hashArg()
			case "@snapshot":
				a = snapshotID
			case "@oldid":
				a = "exit-codes-test"
			}
			args = append(args, a)
		}
		code, stdout, stderr := runIn("", args...)
		want := tc.codes
		if want == nil {
			want = []int{0}
		}
		if !slices.Contains(want, code) {
			t.Fatalf("git ctx %s: exit %d, want %v\n%s%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		var v any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil || !strings.HasSuffix(stdout, "\n") {
			t.Fatalf("git ctx %s: not one JSON document and a newline (%v):\n%s", strings.Join(args, " "), err, stdout)
		}
		obj := jsonFirstObject(t, tc, v)
		switch {
		case tc.command == "checkpoint" && first == "":
			first, _ = obj["hash"].(string)
			os.WriteFile(filepath.Join(f.root, "cp.json"), []byte(stdout), 0o644)
		case tc.command == "snapshot create":
			snapshotID, _ = obj["snapshot_id"].(string)
		}
		if obj == nil {
			continue
		}
		jsonCheckMembers(t, doc, tc, obj)
	}
	jsonCheckTree(t, newApp(strings.NewReader(""), io.Discard, io.Discard).Commands, "", covered)
}

// jsonFirstObject is the object a case checks: the document, or the first
// element of a top-level array (nil for an empty array the case allows).
func jsonFirstObject(t *testing.T, tc jsonCase, v any) map[string]any {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		return x
	case []any:
		if len(x) == 0 {
			if !tc.mayEmpty {
				t.Fatalf("%s --json: an empty array: the fixture must give it an element to check", tc.command)
			}
			return nil
		}
		if o, ok := x[0].(map[string]any); ok {
			return o
		}
	}
	t.Fatalf("%s --json: neither an object nor an array of objects: %v", tc.command, v)
	return nil
}

// jsonCheckMembers fails when the case's sections lack a member table, or
// name a member the output lacks.
func jsonCheckMembers(t *testing.T, doc map[string][]jsonDocMember, tc jsonCase, obj map[string]any) {
	t.Helper()
	if _, ok := doc[tc.section]; !ok {
		t.Errorf("docs/JSON.md has no section %q for %s --json", tc.section, tc.command)
		return
	}
	fields := tc.fields
	if fields == nil {
		fields = []string{tc.section}
	}
	for _, sec := range fields {
		rows, ok := doc[sec]
		if !ok || len(rows) == 0 {
			t.Errorf("docs/JSON.md section %q has no member table (for %s --json)", sec, tc.command)
			continue
		}
		word := strings.Fields(tc.command)[0]
		for _, m := range rows {
			if m.optional || m.in != "" && m.in != "all" && !strings.Contains(m.in, "`"+word+"`") {
				continue
			}
			for _, n := range m.names {
				if _, ok := obj[n]; !ok {
					t.Errorf("%s --json (docs/JSON.md %q) lacks member %q:\n%v", tc.command, sec, n, obj)
				}
			}
		}
	}
}

// jsonExempt are the commands without --json: the hidden entry point of
// installed hooks (it prints nothing on standard output but the
// SessionStart briefing), the man page and completion scripts (documents
// of their own), and the MCP server (its output is the protocol).
var jsonExempt = map[string]bool{"hook": true, "man": true, "completion": true, "help": true, "mcp": true}

// jsonCheckTree walks the command tree: every command that does something
// (not a group that only shows its subcommands' help) has --json, and a
// case above checks it.
func jsonCheckTree(t *testing.T, cmds []*cli.Command, parent string, covered map[string]bool) {
	t.Helper()
	for _, c := range cmds {
		path := strings.TrimSpace(parent + " " + c.Name)
		if jsonExempt[path] {
			continue
		}
		jsonCheckTree(t, c.Subcommands, path, covered)
		if len(c.Subcommands) > 0 && path != "devices" {
			continue // a group: its action shows help
		}
		has := false
		for _, fl := range c.Flags {
			has = has || slices.Contains(fl.Names(), "json")
		}
		if !has {
			t.Errorf("git ctx %s has no --json flag", path)
		}
		if !covered[path] {
			t.Errorf("git ctx %s --json is not run by TestJSONContract", path)
		}
	}
}

// jsonMoveRepoID leaves records under another repository id, the way an
// older git-ctx did: the branch's REPO file is removed (nothing fixed the
// id then) and the repository's id changes; the old id can then be adopted.
func jsonMoveRepoID(t *testing.T, repo string) {
	t.Helper()
	idx := filepath.Join(filepath.Dir(repo), "tmp-index")
	git := func(env []string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	env := []string{"GIT_INDEX_FILE=" + idx}
	git(env, "read-tree", "refs/heads/ghyll/memory")
	git(env, "rm", "-q", "--cached", "REPO")
	tree := git(env, "write-tree")
	commit := git(nil, "commit-tree", tree, "-p", "refs/heads/ghyll/memory", "-m", "older branch")
	git(nil, "update-ref", "refs/heads/ghyll/memory", commit)
	git(nil, "config", "ctx.repoId", "exit-codes-new")
	if code, _, stderr := runIn("", "checkpoint", "-m", "under the new id"); code != 0 {
		t.Fatalf("checkpoint under the new id: exit %d: %s", code, stderr)
	}
}
