package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// TestNewUserFlow is the first session of a new user: init, one checkpoint,
// log, verify, status, show — called as `git ctx` and as git-ctx (here both
// are run in process; ../../integration checks git's dispatch to the
// binary gives the same).
func TestNewUserFlow(t *testing.T) {
	s, repo, env := newRepoAs(t, "laptop")
	root := inproc.GitOut(t, repo, env, "rev-list", "--max-parents=0", "HEAD")
	wantRepoID := testrepo.SHA256Hex(root) // no remote: the root commit names the repo

	deviceID := newUserInit(t, s, repo, env)
	hash := newUserCheckpoint(t, repo, env, deviceID, wantRepoID)
	newUserShow(t, repo, env, deviceID, wantRepoID, hash)
	newUserPrefixes(t, repo, env, hash)
}

// newUserSummary is the summary of the new user's first checkpoint.
const newUserSummary = "switched auth to JWT"

// newUserInit: status before init, init, a second harmless init; it
// returns the device id init created.
func newUserInit(t *testing.T, s *testrepo.Sandbox, repo string, env []string) string {
	t.Helper()
	// Before init: not initialised.
	st := inproc.Status(t, repo, env)
	if st.Initialized || st.Checkpoints != 0 {
		t.Fatalf("status before init: %+v", st)
	}

	out := inproc.MustCtx(t, repo, env, "init")
	if !strings.Contains(out, "Initialised memory branch ghyll/memory (layout ctx-v1)") ||
		!strings.Contains(out, "Published key of device") {
		t.Fatalf("init output: %q", out)
	}
	deviceID := strings.TrimSpace(string(testrepo.ReadFile(t, filepath.Join(s.CtxHome("laptop"), "device-id"))))
	if deviceID == "" {
		t.Fatal("no device-id file after init")
	}
	// A second init is harmless.
	tip := inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef)
	out = inproc.MustCtx(t, repo, env, "init")
	if !strings.Contains(out, "already initialised (layout ctx-v1)") {
		t.Fatalf("second init output: %q", out)
	}
	if got := inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef); got != tip {
		t.Fatalf("second init moved the branch %s → %s", tip, got)
	}
	return deviceID
}

// newUserCheckpoint: the first checkpoint, then log, verify, status and
// the branch's commit; it returns the checkpoint's hash.
func newUserCheckpoint(t *testing.T, repo string, env []string, deviceID, wantRepoID string) string {
	t.Helper()
	const summary = newUserSummary
	out := inproc.MustCtx(t, repo, env, "checkpoint", "-m", summary, "--file", "a.go", "--tool", "edit")
	m := regexp.MustCompile(`^checkpoint ([0-9a-f]{64}) \(device (\S+), session "", turn 1\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("checkpoint output: %q", out)
	}
	hash := m[1]
	if m[2] != deviceID {
		t.Fatalf("checkpoint by device %q, want %q", m[2], deviceID)
	}

	// log, through git's dispatch and through the binary directly.
	logOut := inproc.MustCtx(t, repo, env, "log")
	if !strings.Contains(logOut, hash[:12]) || !strings.Contains(logOut, summary) || !strings.Contains(logOut, deviceID) {
		t.Fatalf("log does not show the checkpoint:\n%s", logOut)
	}
	if direct := inproc.MustRun(t, repo, env, "git-ctx", "log"); direct != logOut {
		t.Fatalf("git-ctx log differs from git ctx log:\n%q\n%q", direct, logOut)
	}
	if v := inproc.MustRun(t, repo, env, "git-ctx", "version"); !strings.HasPrefix(v, "git-ctx version ") {
		t.Fatalf("git-ctx version: %q", v)
	}

	out = inproc.MustCtx(t, repo, env, "verify")
	if !strings.Contains(out, "verified 1 checkpoints in 1 chains") || !strings.Contains(out, "OK   device "+deviceID) {
		t.Fatalf("verify output: %q", out)
	}

	st := inproc.Status(t, repo, env)
	if !st.Initialized || st.Device != deviceID || st.RepoID != wantRepoID || st.Checkpoints != 1 ||
		st.DeviceCheckpoints != 1 || st.Devices != 1 || !st.KeyPublished || st.Layout != "ctx-v1" ||
		st.Branch != "ghyll/memory" || st.Tip != inproc.GitOut(t, repo, env, "rev-parse", testrepo.MemRef) ||
		!strings.HasPrefix(st.Fingerprint, "SHA256:") {
		t.Fatalf("status --json: %+v (want device %s, repo id %s)", st, deviceID, wantRepoID)
	}
	if txt := inproc.MustCtx(t, repo, env, "status"); !strings.Contains(txt, "Checkpoints:   1 in this repository, 1 by this device, 1 devices") {
		t.Fatalf("status: %q", txt)
	}

	// The commit on the branch is reviewable.
	subject := inproc.GitOut(t, repo, env, "log", "-1", "--format=%s", testrepo.MemRef)
	if want := "ctx: checkpoint " + hash[:12] + " by " + deviceID + " (turn 1): " + summary; subject != want {
		t.Fatalf("commit subject %q, want %q", subject, want)
	}
	if author := inproc.GitOut(t, repo, env, "log", "-1", "--format=%ae", testrepo.MemRef); author != "test@example.org" {
		t.Fatalf("commit author %q", author)
	}
	return hash
}

// newUserShow: show in text and --json (the file's bytes), by lower- and
// upper-case prefix.
func newUserShow(t *testing.T, repo string, env []string, deviceID, wantRepoID, hash string) {
	t.Helper()
	const summary = newUserSummary
	out := inproc.MustCtx(t, repo, env, "show", hash[:8])
	for _, want := range []string{"checkpoint " + hash, "Parent:   " + testrepo.ZeroHash, "Device:   " + deviceID,
		"Author:   test@example.org", "Branch:   main", "Files:    a.go", "Tools:    edit", "    " + summary} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}
	file := testrepo.BranchFile(t, repo, env, testrepo.CtxV1CheckpointPath(wantRepoID, hash))
	js := inproc.MustCtx(t, repo, env, "show", "--json", hash[:8])
	if js != file+"\n" {
		t.Fatalf("show --json is not the checkpoint file plus a newline:\n%q\n%q", js, file)
	}
	rec := testrepo.DecodeRecord(t, []byte(js))
	if rec.Hash != hash || rec.Summary != summary || rec.Device != deviceID || rec.Parent != testrepo.ZeroHash ||
		rec.V != 1 || rec.Turn != 1 || rec.Author != "test@example.org" || rec.Branch != "main" ||
		!slices.Equal(rec.Files, []string{"a.go"}) || !slices.Equal(rec.Tools, []string{"edit"}) || rec.Sig == "" {
		t.Fatalf("record: %+v", rec)
	}
	// Upper-case prefixes resolve too.
	if got := inproc.MustCtx(t, repo, env, "show", "--json", strings.ToUpper(hash[:10])); got != js {
		t.Fatalf("upper-case prefix shows %q", got)
	}
}

// newUserPrefixes: ambiguous (exit 2) and unknown (exit 1) prefixes.
func newUserPrefixes(t *testing.T, repo string, env []string, hash string) {
	t.Helper()
	// Ambiguous and unknown prefixes: add checkpoints until two hashes
	// share a first hex digit.
	hashes := []string{hash}
	var shared string
	for i := 0; shared == "" && i < 17; i++ {
		h := inproc.Checkpoint(t, repo, env, "-m", "more "+string(rune('a'+i))).Hash
		for _, o := range hashes {
			if o[0] == h[0] {
				shared = h[:1]
			}
		}
		hashes = append(hashes, h)
	}
	r := inproc.Ctx(t, repo, env, "show", shared)
	testrepo.WantCode(t, "show ambiguous prefix "+shared, r, 2)
	if !strings.Contains(r.Stderr, "ambiguous") {
		t.Fatalf("ambiguous show stderr: %q", r.Stderr)
	}
	testrepo.WantOneLine(t, "ambiguous show", r.Stderr)
	for _, unknown := range []string{unusedPrefix(hashes, 1), unusedPrefix(hashes, 4), unusedPrefix(hashes, 64)} {
		if unknown == "" {
			continue
		}
		r = inproc.Ctx(t, repo, env, "show", unknown)
		testrepo.WantCode(t, "show unknown prefix "+unknown, r, 1)
		if !strings.Contains(r.Stderr, "no checkpoint") {
			t.Fatalf("unknown show stderr: %q", r.Stderr)
		}
	}
}

// unusedPrefix returns a hex string of length n that no hash starts with
// ("" when there is none).
func unusedPrefix(hashes []string, n int) string {
	for c := 0; c < 4096; c++ {
		p := fmt.Sprintf("%0*x", n, c)
		if len(p) != n {
			break
		}
		used := false
		for _, h := range hashes {
			if strings.HasPrefix(h, p) {
				used = true
			}
		}
		if !used {
			return p
		}
	}
	return ""
}

// TestNotInitialisedAndUsage covers the errors a new user meets before and
// around init.
func TestNotInitialisedAndUsage(t *testing.T) {
	s, repo, env := newRepoAs(t, "dev")

	// (log and show read the cache: before init they find nothing — an
	// empty log, exit 0, and "not found", exit 1.)
	for _, args := range [][]string{{"checkpoint", "-m", "x"}, {"checkpoint", "--from-commit", "HEAD"}, {"verify"}} {
		r := inproc.Ctx(t, repo, env, args...)
		testrepo.WantCode(t, "before init: "+strings.Join(args, " "), r, 3)
		if !strings.Contains(r.Stderr, "git ctx init") {
			t.Fatalf("before init, %v: stderr should say to run 'git ctx init': %q", args, r.Stderr)
		}
		testrepo.WantOneLine(t, strings.Join(args, " "), r.Stderr)
	}
	if r := inproc.Run(t, repo, env, "git", "rev-parse", "--verify", "-q", testrepo.MemRef); r.Code == 0 {
		t.Fatal("a failed checkpoint created the memory branch")
	}
	// init --remote with a remote that does not exist: bad config.
	r0 := inproc.Ctx(t, repo, env, "init", "--remote", "nope")
	testrepo.WantCode(t, "init --remote nope", r0, 3)
	testrepo.WantOneLine(t, "init --remote nope", r0.Stderr)
	if r := inproc.Run(t, repo, env, "git", "rev-parse", "--verify", "-q", testrepo.MemRef); r.Code == 0 {
		t.Fatal("init --remote nope created the memory branch")
	}

	// Outside any repository.
	outside := s.Dir(t, "outside")
	r := inproc.Ctx(t, outside, env, "status")
	testrepo.WantCode(t, "status outside a repository", r, 3)
	testrepo.WantOneLine(t, "status outside a repository", r.Stderr)

	inproc.MustCtx(t, repo, env, "init")
	usage := [][]string{
		{"frobnicate"},
		{"checkpoint", "--bogus", "-m", "x"},
		{"show"},
		{"show", "a", "b"},
		{"log", "-n", "-1"},
		{"checkpoint", "-m", "x", "extra-arg"},
		{"init", "--layout", "v9"},
		{"verify", "--key", "k.pem"},
	}
	for _, args := range usage {
		r := inproc.Ctx(t, repo, env, args...)
		testrepo.WantCode(t, "usage error: "+strings.Join(args, " "), r, 2)
		testrepo.WantOneLine(t, strings.Join(args, " "), r.Stderr)
	}
	// The binary called directly reports usage errors the same way.
	if r := inproc.Run(t, repo, env, "git-ctx", "frobnicate"); r.Code != 2 || !strings.Contains(r.Stderr, "frobnicate") {
		t.Fatalf("git-ctx frobnicate: exit %d, %q", r.Code, r.Stderr)
	}

	// No summary: a usage mistake.
	for _, args := range [][]string{{"checkpoint"}, {"checkpoint", "-m", "   \n "}} {
		r := inproc.Ctx(t, repo, env, args...)
		testrepo.WantCode(t, "checkpoint without a summary", r, 2)
		if !strings.Contains(r.Stderr, "summary") {
			t.Fatalf("no-summary stderr: %q", r.Stderr)
		}
	}
	r = inproc.Ctx(t, repo, env, "checkpoint", "-m", "x", "--turn", "-3")
	testrepo.WantCode(t, "negative turn", r, 7)

	// The branch was not moved by any of that.
	if n := inproc.GitOut(t, repo, env, "rev-list", "--count", testrepo.MemRef); n != "1" {
		t.Fatalf("failed commands added commits: %s", n)
	}

	// --layout on an existing branch of another layout is refused and is
	// neither "ok" nor "verification failed".
	r = inproc.Ctx(t, repo, env, "init", "--layout", "ghyll-v1")
	if r.Code != 2 && r.Code != 3 {
		t.Errorf("init --layout ghyll-v1 on a ctx-v1 branch: want exit 2 (usage) or 3 (config), got %s", r)
	}
	if !strings.Contains(r.Stderr, "already uses layout ctx-v1") {
		t.Errorf("init --layout mismatch stderr: %q", r.Stderr)
	}
}

// TestCheckpointInputs: --stdin, --emb-file (JSON and raw float32) and
// --from-commit.
func TestCheckpointInputs(t *testing.T) {
	_, repo, env := newInitRepo(t)

	// --stdin content that is not the object the flags describe: a usage
	// error, whatever the mistake (the object is the command's arguments).
	r := execute(t, repo, env, []byte(`{"message":"m","colour":"red"}`), "git", "ctx", "checkpoint", "--stdin")
	testrepo.WantCode(t, "--stdin with an unknown key", r, 2)
	if !strings.Contains(r.Stderr, "colour") {
		t.Fatalf("unknown key stderr: %q", r.Stderr)
	}
	r = execute(t, repo, env, []byte(`{"message":"m","turn":"four"}`), "git", "ctx", "checkpoint", "--stdin")
	testrepo.WantCode(t, "--stdin with a bad value", r, 2)
	r = execute(t, repo, env, []byte(`{"message":"m"} {"message":"n"}`), "git", "ctx", "checkpoint", "--stdin")
	testrepo.WantCode(t, "--stdin with two objects", r, 2)

	r = execute(t, repo, env, []byte(`{"message":"m","turn":4,"file":["a"],"tool":["t"],"session":"s","model":"x"}`),
		"git", "ctx", "checkpoint", "--stdin", "--json")
	testrepo.WantCode(t, "--stdin", r, 0)
	rec := testrepo.DecodeRecord(t, []byte(r.Stdout))
	shown := testrepo.DecodeRecord(t, []byte(inproc.MustCtx(t, repo, env, "show", "--json", rec.Hash)))
	for _, got := range []testrepo.Record{rec, shown} {
		if got.Summary != "m" || got.Turn != 4 || !slices.Equal(got.Files, []string{"a"}) ||
			!slices.Equal(got.Tools, []string{"t"}) || got.Session != "s" || got.Model != "x" {
			t.Fatalf("--stdin record: %+v", got)
		}
	}
	// The next checkpoint of session s continues its turns.
	if next := inproc.Checkpoint(t, repo, env, "-m", "next", "--session", "s"); next.Turn != 5 || next.Parent != rec.Hash {
		t.Fatalf("next in session s: turn %d parent %s", next.Turn, next.Parent)
	}

	// --emb-file: a JSON array, then raw float32 little-endian.
	dir := t.TempDir()
	jsonEmb := filepath.Join(dir, "emb.json")
	testrepo.WriteFile(t, jsonEmb, "[0.5, -0.25, 1, 0.125]\n")
	rec = inproc.Checkpoint(t, repo, env, "-m", "with json emb", "--emb-file", jsonEmb)
	wantEmb(t, repo, env, rec.Hash, []float64{0.5, -0.25, 1, 0.125})

	rawEmb := filepath.Join(dir, "emb.f32")
	raw := []byte{
		0x00, 0x00, 0xc0, 0x3f, // 1.5
		0x00, 0x00, 0x00, 0xc0, // -2
		0x00, 0x00, 0x00, 0x3e, // 0.125
	}
	if err := os.WriteFile(rawEmb, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rec = inproc.Checkpoint(t, repo, env, "-m", "with raw emb", "--emb-file", rawEmb)
	wantEmb(t, repo, env, rec.Hash, []float64{1.5, -2, 0.125})
	if out := inproc.MustCtx(t, repo, env, "show", rec.Hash); !strings.Contains(out, "Embedding: 3 dimensions") {
		t.Fatalf("show does not mention the embedding:\n%s", out)
	}
	// A raw file that is not whole float32 values is refused.
	if err := os.WriteFile(rawEmb, raw[:5], 0o644); err != nil {
		t.Fatal(err)
	}
	testrepo.WantCode(t, "--emb-file with 5 bytes", inproc.Ctx(t, repo, env, "checkpoint", "-m", "x", "--emb-file", rawEmb), 7)
	testrepo.WantCode(t, "--emb-file missing", inproc.Ctx(t, repo, env, "checkpoint", "-m", "x", "--emb-file", filepath.Join(dir, "nope")), 7)

	// --from-commit HEAD: the subject and the commit's paths.
	testrepo.CommitFiles(t, repo, env, "Add feature X", map[string]string{"b.go": "package b\n", "c/d.go": "package d\n"})
	rec = inproc.Checkpoint(t, repo, env, "--from-commit", "HEAD", "--tool", "commit")
	head := strings.TrimSpace(inproc.GitOut(t, repo, env, "rev-parse", "HEAD"))
	if rec.Summary != "Add feature X\n\nCommit: "+head || !slices.Equal(rec.Files, []string{"b.go", "c/d.go"}) ||
		!slices.Equal(rec.Tools, []string{"commit"}) {
		t.Fatalf("--from-commit record: summary %q files %q tools %q", rec.Summary, rec.Files, rec.Tools)
	}
	testrepo.WantCode(t, "--from-commit of a bad revision", inproc.Ctx(t, repo, env, "checkpoint", "--from-commit", "no-such-rev"), 1)

	inproc.MustCtx(t, repo, env, "verify")
}

func wantEmb(t *testing.T, repo string, env []string, hash string, want []float64) {
	t.Helper()
	js := inproc.MustCtx(t, repo, env, "show", "--json", hash)
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &probe); err != nil {
		t.Fatal(err)
	}
	if _, ok := probe["emb"]; !ok {
		t.Fatalf("show --json has no emb:\n%s", js)
	}
	rec := testrepo.DecodeRecord(t, []byte(js))
	if len(rec.Emb) != len(want) {
		t.Fatalf("emb %v, want %v", rec.Emb, want)
	}
	for i := range want {
		if rec.Emb[i] != want[i] {
			t.Fatalf("emb %v, want %v", rec.Emb, want)
		}
	}
}
