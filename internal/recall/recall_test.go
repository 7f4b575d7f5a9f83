//go:build !ctx_lean

package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/recall"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// recallFixture is a repository with a memory branch, one device and an
// MCP client connected to the server through the SDK's in-memory
// transport.
type recallFixture struct {
	dev  *workspacetest.Dev
	cs   *mcp.ClientSession
	ctx  context.Context
	repo string
}

func newRecallFixture(t *testing.T) *recallFixture {
	t.Helper()
	ctx := workspacetest.Ctx(t)
	w := workspacetest.NewWorld(t)
	dir := w.NewRepo(t, "repo")
	d := workspacetest.Open(t, dir, w.Home("a"))
	if _, err := d.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{dev: d, ctx: ctx, repo: dir}
	f.cs = connect(t, ctx, d)
	return f
}

// connect starts a server over d's workspace and returns a connected client.
func connect(t *testing.T, ctx context.Context, d *workspacetest.Dev) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := recall.NewServer(d.Workspace, recall.Options{Version: "test"}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls tool with args and returns its text and whether it is a tool
// error; a protocol error fails the test.
func (f *recallFixture) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := f.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func (f *recallFixture) mustCall(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := f.call(t, tool, args)
	if isErr {
		t.Fatalf("%s %v: tool error: %s", tool, args, text)
	}
	return text
}

// TestRecallToolsList: every tool is listed with an input schema whose
// required members and limits are the documented ones.
func TestRecallToolsList(t *testing.T) {
	f := newRecallFixture(t)
	res, err := f.cs.ListTools(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"search": {"query"}, "log": nil, "show": {"hash"}, "explain": {"target"}, "snapshot_restore": nil, "package_get": {"name"}, "checkpoint": {"summary"},
	}
	got := map[string]bool{}
	for _, tool := range res.Tools {
		got[tool.Name] = true
		raw, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
			Additional json.RawMessage            `json:"additionalProperties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		req, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		slices.Sort(s.Required)
		if !slices.Equal(s.Required, req) {
			t.Errorf("%s: required %v, want %v", tool.Name, s.Required, req)
		}
		if string(s.Additional) != "false" {
			t.Errorf("%s: additionalProperties %s, want false", tool.Name, s.Additional)
		}
		if tool.Name != "checkpoint" {
			mb := string(s.Properties["max_bytes"])
			if !strings.Contains(mb, `"minimum":256`) || !strings.Contains(mb, `"maximum":1048576`) {
				t.Errorf("%s: max_bytes schema %s lacks its range", tool.Name, mb)
			}
			if !strings.Contains(tool.Description, "") || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s: not marked read-only", tool.Name)
			}
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("tool %s not listed", name)
		}
	}
}

// TestRecallQueries: search, log (branch and commit filters), show and
// checkpoint over records of this device.
func TestRecallQueries(t *testing.T) {
	f := newRecallFixture(t)
	d := f.dev
	auth := d.Record(t, checkpoints.RecordInput{Summary: "chose JWT over sessions for the auth service\n\nbecause the API is stateless", Files: []string{"auth/jwt.go"}})
	workspacetest.Git(t, f.repo, "checkout", "-q", "-b", "feature")
	onFeature := d.Record(t, workspacetest.Say("feature branch decision: keep the cache warm"))
	if err := os.WriteFile(filepath.Join(f.repo, "x.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workspacetest.Git(t, f.repo, "add", "x.txt")
	workspacetest.Git(t, f.repo, "commit", "-q", "-m", "add x")
	head := strings.TrimSpace(workspacetest.Git(t, f.repo, "rev-parse", "HEAD"))
	byCommit := d.Record(t, checkpoints.RecordInput{FromCommit: "HEAD"})

	text := f.mustCall(t, "search", map[string]any{"query": "JWT"})
	if !strings.Contains(text, auth) || !strings.Contains(text, "because the API is stateless") || strings.Contains(text, onFeature) {
		t.Errorf("search JWT:\n%s", text)
	}
	text = f.mustCall(t, "search", map[string]any{"query": "decision", "branch": "main"})
	if strings.Contains(text, onFeature) {
		t.Errorf("search with branch main shows a record of feature:\n%s", text)
	}
	text = f.mustCall(t, "log", map[string]any{"branch": "feature"})
	if !strings.Contains(text, onFeature) || !strings.Contains(text, byCommit) || strings.Contains(text, auth) {
		t.Errorf("log branch feature:\n%s", text)
	}
	for _, rev := range []string{head, head[:10], "HEAD"} {
		text = f.mustCall(t, "log", map[string]any{"commit": rev})
		if !strings.Contains(text, byCommit) || strings.Contains(text, onFeature) || strings.Contains(text, auth) {
			t.Errorf("log commit %s:\n%s", rev, text)
		}
	}
	f.wantExplained(t, head, byCommit, onFeature, auth)
	text = f.mustCall(t, "log", map[string]any{"since": "1h", "limit": 1})
	if !strings.Contains(text, byCommit) || strings.Contains(text, auth) {
		t.Errorf("log limit 1 is not the newest:\n%s", text)
	}
	text = f.mustCall(t, "show", map[string]any{"hash": auth[:10]})
	if !strings.Contains(text, "checkpoint "+auth+" (verified") || !strings.Contains(text, "files:   auth/jwt.go") {
		t.Errorf("show:\n%s", text)
	}

	text = f.mustCall(t, "checkpoint", map[string]any{"summary": "use the MCP server for recall", "files": []string{"internal/recall/server.go"}, "session": "s-mcp"})
	var hash string
	if _, err := fmt.Sscanf(text, "Recorded checkpoint %s", &hash); err != nil || len(hash) != 64 {
		t.Fatalf("checkpoint result %q", text)
	}
	text = f.mustCall(t, "show", map[string]any{"hash": hash})
	if !strings.Contains(text, "(verified") || !strings.Contains(text, "session: s-mcp turn 1") || !strings.Contains(text, "tools:   mcp") {
		t.Errorf("the recorded checkpoint:\n%s", text)
	}
}

// TestRecallBadArguments: every bad argument is a tool error of one line
// (never a protocol error), and nothing is written.
func TestRecallBadArguments(t *testing.T) {
	f := newRecallFixture(t)
	d := f.dev
	d.Record(t, workspacetest.Say("one"))
	tip := d.MustTip(t)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{}, "query"},
		{"search", map[string]any{"query": "  "}, "query is empty"},
		{"search", map[string]any{"query": "x", "max_bytes": 10}, "max_bytes"},
		{"log", map[string]any{"limit": 100000}, "limit"},
		{"log", map[string]any{"since": "yesterday"}, "since"},
		{"log", map[string]any{"commit": "--output=/tmp/x"}, "not a revision"},
		{"log", map[string]any{"commit": "no-such-rev"}, "not a revision"},
		{"log", map[string]any{"colour": "red"}, "colour"},
		{"show", map[string]any{"hash": "xyz"}, "not a hex hash prefix"},
		{"show", map[string]any{"hash": "0000000000"}, "no checkpoint"},
		{"show", map[string]any{"hash": 12}, "hash"},
		{"snapshot_restore", map[string]any{"snapshot": "../etc"}, "not a hex id prefix"},
		{"package_get", map[string]any{"name": "nothing"}, "no verified package"},
		{"package_get", map[string]any{"name": "x", "layers": []string{"secrets"}}, "layers"},
		{"checkpoint", map[string]any{"summary": ""}, "summary"},
		{"checkpoint", map[string]any{"summary": "x", "files": []string{""}}, "file path"},
	}
	for _, c := range cases {
		text, isErr := f.call(t, c.tool, c.args)
		if !isErr {
			t.Errorf("%s %v: no tool error: %s", c.tool, c.args, text)
			continue
		}
		if strings.Contains(strings.TrimRight(text, "\n"), "\n") || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: error %q: want one line naming %q", c.tool, c.args, text, c.want)
		}
	}
	if got := d.MustTip(t); got != tip {
		t.Errorf("bad arguments moved the branch from %s to %s", tip, got)
	}
}

// TestRecallBudget: a result never exceeds max_bytes and says when it was
// cut; within the default budget nothing is cut.
func TestRecallBudget(t *testing.T) {
	f := newRecallFixture(t)
	long := strings.Repeat("the reasoning goes on and on ", 40)
	var last string
	for i := 0; i < 12; i++ {
		last = f.dev.Record(t, workspacetest.Say("decision %d: %s", i, long))
	}
	text := f.mustCall(t, "log", map[string]any{"max_bytes": 2000})
	if len(text) > 2000 {
		t.Errorf("log with max_bytes 2000 returned %d bytes", len(text))
	}
	if !strings.Contains(text, "[truncated:") || !strings.Contains(text, last) {
		t.Errorf("cut log does not say so or lacks the newest record:\n%s", text)
	}
	text = f.mustCall(t, "show", map[string]any{"hash": last, "max_bytes": 600})
	if len(text) > 600 || !strings.Contains(text, "[truncated at max_bytes=600") {
		t.Errorf("show with max_bytes 600 (%d bytes):\n%s", len(text), text)
	}
	text = f.mustCall(t, "log", map[string]any{"limit": 3})
	if strings.Contains(text, "[truncated") || strings.Count(text, "\ncheckpoint ") != 3 {
		t.Errorf("log limit 3 within the default budget:\n%s", text)
	}
}

// TestRecallBriefingInjections: the briefing lists this branch's records
// and the records touching changed files, within its budget; the items it
// remembered are recorded by the session's next checkpoint (and only that
// one), whichever way it is recorded.
func TestRecallBriefingInjections(t *testing.T) {
	f := newRecallFixture(t)
	d := f.dev
	onMain := d.Record(t, workspacetest.Say("main: logging goes to stderr"))
	touching := d.Record(t, checkpoints.RecordInput{Summary: "README explains setup", Files: []string{"README.md"}})
	if err := os.WriteFile(filepath.Join(f.repo, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := recall.Brief(f.ctx, d.Workspace, recall.DefaultBriefingBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{onMain, touching} {
		if !strings.Contains(b.Text, h[:12]) || !slices.Contains(b.Items, checkpoints.InjectionPrefix+h) {
			t.Errorf("briefing lacks %s:\n%s\nitems %v", h[:12], b.Text, b.Items)
		}
	}
	if len(b.Items) != 2 {
		t.Errorf("items %v: a record listed twice?", b.Items)
	}
	small, err := recall.Brief(f.ctx, d.Workspace, recall.MinMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Text) > recall.MinMaxBytes {
		t.Errorf("briefing over its budget: %d bytes", len(small.Text))
	}

	in := strings.NewReader(fmt.Sprintf(`{"session_id":"sess-1","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, f.repo))
	var out strings.Builder
	if err := recall.SessionStart(f.ctx, in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), onMain[:12]) {
		t.Fatalf("SessionStart printed:\n%s", out.String())
	}
	other := d.Record(t, checkpoints.RecordInput{Summary: "another session", Session: "sess-2"})
	text := f.mustCall(t, "show", map[string]any{"hash": other})
	if strings.Contains(text, "injections:") {
		t.Errorf("a checkpoint of another session took the injections:\n%s", text)
	}
	text = f.mustCall(t, "checkpoint", map[string]any{"summary": "after the briefing", "session": "sess-1"})
	if !strings.Contains(text, "records the 2 item(s)") {
		t.Errorf("checkpoint after the briefing: %s", text)
	}
	var hash string
	fmt.Sscanf(text, "Recorded checkpoint %s", &hash)
	text = f.mustCall(t, "show", map[string]any{"hash": hash})
	want := "injections: " + strings.Join(b.Items, ", ") + "\n"
	if !strings.Contains(text, want) {
		t.Errorf("the checkpoint's injections: want %q in\n%s", want, text)
	}
	next := d.Record(t, checkpoints.RecordInput{Summary: "second after the briefing", Session: "sess-1"})
	if text = f.mustCall(t, "show", map[string]any{"hash": next}); strings.Contains(text, "injections:") {
		t.Errorf("the injections were recorded twice:\n%s", text)
	}
}

// wantExplained: the explain tool links the commit record and the turn
// before it to head (not a record of another branch), says a commit
// without memory has none, and refuses an option-like target in one line.
func (f *recallFixture) wantExplained(t *testing.T, head, byCommit, onFeature, auth string) {
	t.Helper()
	text := f.mustCall(t, "explain", map[string]any{"target": head[:8]})
	if !strings.Contains(text, "commit "+head+" add x") || !strings.Contains(text, "commit checkpoint "+byCommit+" verified") ||
		!strings.Contains(text, "turn checkpoint "+onFeature+" verified") || strings.Contains(text, auth) {
		t.Errorf("explain %s:\n%s", head[:8], text)
	}
	if text = f.mustCall(t, "explain", map[string]any{"target": "HEAD~1"}); !strings.Contains(text, "no memory") {
		t.Errorf("explain of a commit without memory:\n%s", text)
	}
	if text, isErr := f.call(t, "explain", map[string]any{"target": "--output=x"}); !isErr || strings.Contains(text, "\n") {
		t.Errorf("explain of an option-like target: error %v, %q", isErr, text)
	}
}
