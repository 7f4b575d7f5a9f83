package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

const explSession = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"

// explFixture is the repository explain is tried on: on branch feature,
// an agent (Claude's Stop hook) makes two turns and commit C (recorded by
// the post-commit hook), a human makes commit H without memory, and a
// teammate (device mate) records commit M, whose key on the branch is then
// replaced, so that mate's record no longer verifies.
type explFixture struct {
	s                *testrepo.Sandbox
	repo             string
	env, mateEnv     []string
	c, h, m          string // the three commits on feature
	agentID, mateID  string
	turn1, turn2, cp string // the agent's records: two turns and C's
	mateCP           string
}

// explTranscriptLine is one line of a Claude transcript.
func explTranscriptLine(top, typ, content string) string {
	role := "user"
	if typ == "assistant" {
		role = "assistant"
	}
	model := ""
	if typ == "assistant" {
		model = `"model":"claude-sonnet-4-5-20250929",`
	}
	return `{"type":"` + typ + `","isSidechain":false,"cwd":` + explJSON(top) + `,"sessionId":"` + explSession +
		`","message":{"role":"` + role + `",` + model + `"content":` + content + `}}` + "\n"
}

func explJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// explTurn appends one agent turn (a prompt, a Write of file, a reply) to
// the transcript and runs the Stop hook on it, in process.
func explTurn(t *testing.T, f *explFixture, top, transcript, prompt, file, reply string) {
	t.Helper()
	lines := explTranscriptLine(top, "user", explJSON(prompt)) +
		explTranscriptLine(top, "assistant", `[{"type":"tool_use","id":"toolu_`+file[4:8]+`","name":"Write","input":{"file_path":`+explJSON(filepath.Join(top, file))+`}}]`) +
		explTranscriptLine(top, "user", `[{"type":"tool_result","tool_use_id":"toolu_`+file[4:8]+`","content":"ok"}]`) +
		explTranscriptLine(top, "assistant", `[{"type":"text","text":`+explJSON(reply)+`}]`)
	old, _ := os.ReadFile(transcript)
	testrepo.WriteFile(t, transcript, string(old)+lines)
	stop := `{"session_id":"` + explSession + `","transcript_path":` + explJSON(transcript) + `,"cwd":` + explJSON(top) +
		`,"hook_event_name":"Stop","stop_hook_active":false}`
	r := execute(t, f.repo, testrepo.WithEnv(f.env, "GIT_CTX_HOOK_SYNC=1"), []byte(stop), "git-ctx", "hook", "claude-stop")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("Stop hook: %s", r)
	}
}

func newExplFixture(t *testing.T) *explFixture {
	t.Helper()
	s, repo, env := newRepoAs(t, "agent")
	f := &explFixture{s: s, repo: repo, env: env, mateEnv: s.Env("mate")}
	inproc.MustCtx(t, repo, env, "init")
	testrepo.MustGit(t, repo, env, "checkout", "-q", "-b", "feature")
	top, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(s.Root, "home", ".claude", "projects", "p", explSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	// Two agent turns, then the agent's commit and its post-commit hook.
	explTurn(t, f, top, transcript, "Add token refresh to auth", "src/auth.go", "Added token refresh in src/auth.go: tokens renew 5 minutes before expiry.")
	testrepo.WriteFile(t, filepath.Join(repo, "src", "auth.go"), "package src\n\n// Refresh renews a token.\nfunc Refresh() {}\n")
	explTurn(t, f, top, transcript, "Now test it", "src/auth_test.go", "Added a test for the refresh window (*edge* case <b>).")
	testrepo.WriteFile(t, filepath.Join(repo, "src", "auth_test.go"), "package src\n")
	testrepo.MustGit(t, repo, env, "add", "-A")
	testrepo.MustGit(t, repo, env, "commit", "-q", "-m", "auth: refresh tokens before expiry")
	f.c = testrepo.GitOut(t, repo, env, "rev-parse", "HEAD")
	if r := execute(t, repo, testrepo.WithEnv(env, "GIT_CTX_HOOK_SYNC=1"), nil, "git-ctx", "hook", "post-commit"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("post-commit hook: %s", r)
	}
	// A human commit: no hook ran, no memory.
	f.h = testrepo.CommitFiles(t, repo, env, "docs: typo", map[string]string{"README.md": "hello, world\n"})
	// The teammate's commit and record, then its key replaced on the branch.
	f.m = testrepo.CommitFiles(t, repo, f.mateEnv, "auth: log refreshes", map[string]string{"src/auth.go": "package src\n\n// Refresh renews a token.\nfunc Refresh() {}\n\n// logged\n"})
	mate := testrepo.DecodeRecord(t, []byte(inproc.MustCtx(t, repo, f.mateEnv, "checkpoint", "--from-commit", "HEAD", "--json")))
	f.mateCP = mate.Hash
	f.agentID, f.mateID = s.DeviceID(t, "agent"), s.DeviceID(t, "mate")
	agentKey := testrepo.BranchFile(t, repo, env, "devices/"+f.agentID+".pub")
	testrepo.RewriteBranch(t, repo, env, "replace mate's key", testrepo.FileEdit{Path: "devices/" + f.mateID + ".pub", Content: agentKey})

	var list []testrepo.Record
	inproc.CtxJSON(t, repo, env, &list, "log", "--device", f.agentID, "--json")
	if len(list) != 3 {
		t.Fatalf("the agent's checkpoints: %d, want 3", len(list))
	}
	f.cp, f.turn2, f.turn1 = list[0].Hash, list[1].Hash, list[2].Hash
	return f
}

// explOut is the JSON of explain (and review of a code range).
type explOut struct {
	Spec    string `json:"spec"`
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Commits []struct {
		Commit      string `json:"commit"`
		Subject     string `json:"subject"`
		Memory      bool   `json:"memory"`
		Checkpoints []struct {
			Hash, Link, Device, Session, Model, Status, Summary string
			Turn                                                int
			Verified                                            bool
			Files, Tools                                        []string
		} `json:"checkpoints"`
	} `json:"commits"`
}

func explJSONOf(t *testing.T, f *explFixture, args ...string) explOut {
	t.Helper()
	var out explOut
	inproc.CtxJSON(t, f.repo, f.env, &out, args...)
	return out
}

// TestExplainCommits: explain of the agent's commit (by a short hash)
// lists both turns and the commit's record, verified, with session, turn,
// model, files and tools; the human's commit has no memory; the teammate's
// record is shown and marked unverified; a range explains all three,
// oldest first; path:line follows git blame.
func TestExplainCommits(t *testing.T) {
	f := newExplFixture(t)
	explAgentCommit(t, f)
	explHumanAndTeammate(t, f)
	explRangeAndPaths(t, f)
}

// explAgentCommit: the agent's commit, by a short hash: two turns and the
// commit's record, verified, with their fields.
func explAgentCommit(t *testing.T, f *explFixture) {
	t.Helper()
	got := explJSONOf(t, f, "explain", f.c[:7], "--json")
	if got.Kind != "commit" || len(got.Commits) != 1 || got.Commits[0].Commit != f.c || !got.Commits[0].Memory {
		t.Fatalf("explain %s: %+v", f.c[:7], got)
	}
	cps := got.Commits[0].Checkpoints
	if len(cps) != 3 || cps[0].Hash != f.turn1 || cps[1].Hash != f.turn2 || cps[2].Hash != f.cp {
		t.Fatalf("explain C: checkpoints %+v, want turn1, turn2, the commit's record", cps)
	}
	for i, want := range []struct{ link, file, tool string }{{"turn", "src/auth.go", "Write"}, {"turn", "src/auth_test.go", "Write"}, {"commit", "src/auth.go", ""}} {
		c := cps[i]
		if c.Link != want.link || !c.Verified || c.Status != "verified" || c.Device != f.agentID || !strings.Contains(strings.Join(c.Files, ","), want.file) {
			t.Errorf("checkpoint %d: %+v, want link %s, verified, file %s", i, c, want.link, want.file)
		}
		if want.tool != "" && (c.Session != explSession || c.Turn != i+1 || !strings.HasPrefix(c.Model, "claude-sonnet") || strings.Join(c.Tools, ",") != want.tool) {
			t.Errorf("turn %d: session %q turn %d model %q tools %q", i, c.Session, c.Turn, c.Model, c.Tools)
		}
	}
}

// explHumanAndTeammate: the human's commit has no memory; the teammate's
// record is shown, marked unverified.
func explHumanAndTeammate(t *testing.T, f *explFixture) {
	t.Helper()
	txt := inproc.MustCtx(t, f.repo, f.env, "explain", f.h)
	if !strings.Contains(txt, "commit "+f.h[:12]+" docs: typo") || !strings.Contains(txt, "no memory: no checkpoint names this commit") {
		t.Errorf("explain of the human commit:\n%s", txt)
	}
	txt = inproc.MustCtx(t, f.repo, f.env, "explain", "HEAD")
	if !strings.Contains(txt, f.mateCP[:12]) || !strings.Contains(txt, "UNVERIFIED") {
		t.Errorf("explain HEAD (the teammate's commit) does not show its record marked UNVERIFIED:\n%s", txt)
	}
	got := explJSONOf(t, f, "explain", "HEAD", "--json")
	if c := got.Commits[0].Checkpoints; len(c) != 1 || c[0].Hash != f.mateCP || c[0].Verified || c[0].Status != "unverified" {
		t.Errorf("explain HEAD --json: %+v", got.Commits[0])
	}
}

// explRangeAndPaths: a range, oldest first; path:line through git blame; a
// path's history, newest first.
func explRangeAndPaths(t *testing.T, f *explFixture) {
	t.Helper()
	got := explJSONOf(t, f, "explain", "main..feature", "--json")
	if got.Kind != "range" || len(got.Commits) != 3 || got.Commits[0].Commit != f.c || got.Commits[1].Commit != f.h || got.Commits[2].Commit != f.m ||
		got.Commits[1].Memory || len(got.Commits[1].Checkpoints) != 0 {
		t.Errorf("explain main..feature: %+v", got)
	}

	// path:line: line 3 was written in C, line 6 in M; a path alone lists its history.
	got = explJSONOf(t, f, "explain", "src/auth.go:3", "--json")
	if got.Kind != "path" || got.Path != "src/auth.go" || got.Line != 3 || len(got.Commits) != 1 || got.Commits[0].Commit != f.c || len(got.Commits[0].Checkpoints) != 3 {
		t.Errorf("explain src/auth.go:3: %+v", got)
	}
	got = explJSONOf(t, f, "explain", "src/auth.go:6", "--json")
	if len(got.Commits) != 1 || got.Commits[0].Commit != f.m {
		t.Errorf("explain src/auth.go:6: %+v", got)
	}
	got = explJSONOf(t, f, "explain", "src/auth.go", "--json")
	if got.Kind != "path" || len(got.Commits) != 2 || got.Commits[0].Commit != f.m || got.Commits[1].Commit != f.c {
		t.Errorf("explain src/auth.go: %+v", got)
	}
	if txt := inproc.MustCtx(t, f.repo, f.env, "explain", "src/auth.go:3"); !strings.HasPrefix(txt, "src/auth.go line 3 was last changed by commit "+f.c[:12]) {
		t.Errorf("explain src/auth.go:3 text:\n%s", txt)
	}
}

// TestExplainBadArguments: what is no commit, range or path is refused
// (exit 7, one line); a line past the end too; a missing argument is usage.
func TestExplainBadArguments(t *testing.T) {
	f := newExplFixture(t)
	for _, args := range [][]string{{"explain", "no-such-thing"}, {"explain", "src/auth.go:999"}, {"explain", "nope..feature"},
		{"explain", "src/auth.go:0"}, {"log", "--commit", "no-such-thing"}} {
		r := inproc.Ctx(t, f.repo, f.env, args...)
		testrepo.WantCode(t, strings.Join(args, " "), r, 7)
		if r.Stdout != "" || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v: stdout %q stderr %q", args, r.Stdout, r.Stderr)
		}
	}
	testrepo.WantCode(t, "explain without an argument", inproc.Ctx(t, f.repo, f.env, "explain"), 2)
	testrepo.WantCode(t, "log --commit with --device", inproc.Ctx(t, f.repo, f.env, "log", "--commit", "HEAD", "--device", "x"), 2)
	testrepo.WantCode(t, "review --format html", inproc.Ctx(t, f.repo, f.env, "review", "main..feature", "--format", "html"), 2)
	testrepo.WantCode(t, "review --format markdown --json", inproc.Ctx(t, f.repo, f.env, "review", "main..feature", "--format", "markdown", "--json"), 2)
	testrepo.WantCode(t, "review of the memory branch as markdown", inproc.Ctx(t, f.repo, f.env, "review", "ghyll/memory", "--format", "markdown"), 2)
}

// TestExplainLogAndShow: log --commit lists the commit's checkpoints
// (newest first, the unverified marked); show takes a record hash first
// and a code commit's short hash for its records; a commit without memory
// is not found (exit 1).
func TestExplainLogAndShow(t *testing.T) {
	f := newExplFixture(t)
	var list []testrepo.Record
	inproc.CtxJSON(t, f.repo, f.env, &list, "log", "--commit", f.c[:8], "--json")
	if len(list) != 3 || list[0].Hash != f.cp || list[2].Hash != f.turn1 {
		t.Fatalf("log --commit C: %+v", list)
	}
	inproc.CtxJSON(t, f.repo, f.env, &list, "log", "--commit", f.c[:8], "-n", "1", "--json")
	if len(list) != 1 || list[0].Hash != f.cp {
		t.Errorf("log --commit -n 1: %+v", list)
	}
	if out := inproc.MustCtx(t, f.repo, f.env, "log", "--commit", "HEAD"); !strings.Contains(out, f.mateCP[:12]) || !strings.Contains(out, "UNVERIFIED") {
		t.Errorf("log --commit HEAD:\n%s", out)
	}
	r := inproc.Ctx(t, f.repo, f.env, "log", "--commit", f.h)
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "no checkpoint is linked to") {
		t.Errorf("log --commit of the human commit: %s", r)
	}

	// A record hash keeps working.
	if out := inproc.MustCtx(t, f.repo, f.env, "show", f.turn1[:10]); !strings.HasPrefix(out, "checkpoint "+f.turn1+"\n") {
		t.Errorf("show of a record prefix:\n%s", out)
	}
	out := inproc.MustCtx(t, f.repo, f.env, "show", f.c[:7])
	for _, want := range []string{"commit " + f.c + " auth: refresh tokens before expiry", "checkpoint " + f.turn1 + " (turn)",
		"checkpoint " + f.turn2 + " (turn)", "checkpoint " + f.cp + " (commit)", "Session:  " + explSession + " (turn 2)",
		"    Added a test for the refresh window"} {
		if !strings.Contains(out, want) {
			t.Errorf("show %s lacks %q:\n%s", f.c[:7], want, out)
		}
	}
	var shown explOut
	inproc.CtxJSON(t, f.repo, f.env, &shown, "show", "HEAD", "--json")
	if len(shown.Commits) != 1 || shown.Commits[0].Commit != f.m || len(shown.Commits[0].Checkpoints) != 1 || shown.Commits[0].Checkpoints[0].Verified {
		t.Errorf("show HEAD --json: %+v", shown)
	}
	r = inproc.Ctx(t, f.repo, f.env, "show", f.h[:9])
	testrepo.WantCode(t, "show of a commit without memory", r, 1)
	if !strings.Contains(r.Stderr, "has no memory") {
		t.Errorf("show of a commit without memory: %s", r)
	}
}

// TestExplainReviewMarkdown: review of a code range as markdown is the
// golden report (hashes and device ids replaced by names): a heading, a
// <details> section per commit with badges, others' text escaped; review
// of the memory branch is unchanged (records added).
func TestExplainReviewMarkdown(t *testing.T) {
	f := newExplFixture(t)
	got := inproc.MustCtx(t, f.repo, f.env, "review", "main..feature", "--format", "markdown")
	if strings.ContainsAny(got, "\x1b\u009b") || strings.Contains(got, "<b>") {
		t.Fatalf("markdown holds a terminal escape or raw HTML from a summary:\n%s", got)
	}
	for name, v := range map[string]string{"C": f.c, "H": f.h, "M": f.m} {
		got = strings.ReplaceAll(got, v, "<"+name+"-full>")
	}
	for name, v := range map[string]string{"C": f.c, "H": f.h, "M": f.m, "TURN1": f.turn1, "TURN2": f.turn2, "CP": f.cp, "MATECP": f.mateCP} {
		got = strings.ReplaceAll(got, v[:12], "<"+name+">")
	}
	got = strings.ReplaceAll(got, md(f.agentID), "<AGENT>")
	got = strings.ReplaceAll(got, md(f.mateID), "<MATE>")
	wantGolden(t, filepath.Join("testdata", "review_markdown.golden"), got, "review --format markdown")

	var rev explOut
	inproc.CtxJSON(t, f.repo, f.env, &rev, "review", "main..feature", "--json")
	if rev.Kind != "range" || len(rev.Commits) != 3 {
		t.Errorf("review main..feature --json: %+v", rev)
	}
	// The memory branch is still reviewed as records added.
	if out := inproc.MustCtx(t, f.repo, f.env, "review", "ghyll/memory~3..ghyll/memory"); !strings.Contains(out, "+ checkpoint "+f.cp[:12]) {
		t.Errorf("review of the memory branch:\n%s", out)
	}
}

// TestExplainMarkdownHostileText: a teammate's summary, file names and
// commit subject full of markdown, HTML, mentions and terminal escapes
// cannot format, link, mention or break the review's markdown: every
// character that would is escaped, and no escape byte is printed.
func TestExplainMarkdownHostileText(t *testing.T) {
	_, repo, env := newRepoAs(t, "mate")
	inproc.MustCtx(t, repo, env, "init")
	testrepo.MustGit(t, repo, env, "checkout", "-q", "-b", "feature")
	hostile := "</summary></details><img src=x onerror=alert(1)> [click](http://evil.example) @everyone #1 `code` \x1b[31mred\u009b2J ~~x~~ | a | b |\n# Heading\n- item"
	inproc.MustCtx(t, repo, env, "checkpoint", "-m", hostile, "--file", "<b>x</b>.go", "--tool", "*bold*")
	testrepo.CommitFiles(t, repo, env, "feat: </details> [x](http://evil.example) @team", map[string]string{"x.go": "package x\n"})
	inproc.MustCtx(t, repo, env, "checkpoint", "--from-commit", "HEAD")
	got := inproc.MustCtx(t, repo, env, "review", "main..feature", "--format", "markdown")
	for _, bad := range []string{"\x1b", "\u009b", "<img", "</summary></details>", "](http", "@everyone", "@team", "\n# Heading", "<b>", "`code`", "~~x~~", "| a |"} {
		if strings.Contains(got, bad) {
			t.Errorf("the markdown holds %q:\n%s", bad, got)
		}
	}
	if strings.Count(got, "<details>") != 1 || strings.Count(got, "</details>") != 1 || strings.Count(got, "<summary>") != 1 {
		t.Errorf("the layout is not one <details> section:\n%s", got)
	}
	if !strings.Contains(got, `&lt;img src=x onerror=alert\(1\)&gt;`) || !strings.Contains(got, `\\x1b`) {
		t.Errorf("the hostile text is not shown escaped:\n%s", got)
	}
}
