package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/sessions/store"
)

// Encrypted agent sessions end to end: two simulated machines (each its own
// HOME, GIT_CTX_HOME and clone at a different path) exchanging Claude Code
// and Codex sessions through a real directory store.

const (
	sessPass = "correct horse battery staple"
	// sessWF is the scrypt work factor the tests write (explicitly weak, so
	// that -race runs stay fast); readers accept anything up to 22.
	sessWF = "10"
)

// machine is one simulated computer: a clone of the shared remote.
type machine struct {
	name string
	home string
	repo string
	env  []string
}

type sessWorld struct {
	s      *sandbox
	remote string
	store  string // file:// URL of the directory store
	root   string // its directory
}

func newSessWorld(t *testing.T) *sessWorld {
	t.Helper()
	s := newSandbox(t)
	w := &sessWorld{s: s, remote: filepath.Join(s.root, "remote.git"), root: filepath.Join(s.root, "store")}
	w.store = "file://" + w.root
	env := s.env("setup")
	mustRun(t, s.root, env, "git", "init", "-q", "--bare", "-b", "main", w.remote)
	seed := newRepo(t, s, "seed")
	mustRun(t, seed, env, "git", "push", "-q", w.remote, "main")
	return w
}

// machine clones the remote to <name>/<sub>/project (so that every machine's
// work tree has a different path) with its own HOME.
func (w *sessWorld) machine(t *testing.T, name, sub string) *machine {
	t.Helper()
	home := w.s.dir(t, name+"-home")
	repo := filepath.Join(w.s.root, name, sub, "project")
	env := withEnv(w.s.env(name), "HOME="+home)
	mustRun(t, w.s.root, env, "git", "clone", "-q", w.remote, repo)
	return &machine{name: name, home: home, repo: repo, env: env}
}

// sess runs git-ctx directly (so that descriptor 3 reaches it) with the
// passphrase on a pipe named by GIT_CTX_PASSPHRASE_FD.
func sess(t *testing.T, m *machine, pass string, args ...string) result {
	t.Helper()
	r, _ := sessRun(t, m.repo, m.env, pass, args...)
	return r
}

func sessRun(t *testing.T, dir string, env []string, pass string, args ...string) (result, *os.ProcessState) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(c, binPath, append([]string{"session"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	if pass != "" {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		if _, err := pw.WriteString(pass + "\n"); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		cmd.ExtraFiles = []*os.File{pr}
		cmd.Env = withEnv(env, "GIT_CTX_PASSPHRASE_FD=3")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res, err := inpResult(&stdout, &stderr, cmd.Run(), c.Err())
	if err != nil {
		t.Fatalf("git-ctx session %q: %v", args, err)
	}
	return res, cmd.ProcessState
}

func mustSess(t *testing.T, m *machine, args ...string) string {
	t.Helper()
	r := sess(t, m, sessPass, args...)
	if r.code != 0 {
		t.Fatalf("%s: git-ctx session %q: %s", m.name, args, r)
	}
	return r.stdout
}

// claudeKey is Claude Code's directory name for a work tree (ASCII paths).
func claudeKey(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

func claudeFile(home, repo, id string) string {
	return filepath.Join(home, ".claude", "projects", claudeKey(repo), id+".jsonl")
}

// claudeTranscript is a transcript of machine m: paths inside its work tree
// and home on allow-listed keys, plus bytes a re-serialising exporter would
// change (big integers, 1.0, HTML characters, CRLF, key order, a non-JSON
// line, a path in an array and under a non-listed key).
func claudeTranscript(m *machine, id string) string {
	return fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":%q,"version":"2.1.219","n":12345678901234567890,"f":1.0,"z":{"b":1,"a":2}}`+"\n"+
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"file_path":%q,"note":"<a&b>"}}]},"cwd":%q}`+"\r\n"+
		"not json at all\n"+
		`{"type":"tool_result","file":%q,"other":%q,"list":[%q]}`+"\n",
		id, m.repo, filepath.Join(m.repo, "a.go"), m.repo, filepath.Join(m.home, "notes.txt"), m.repo, m.repo)
}

// mapped is content with machine a's paths replaced by b's on the
// allow-listed keys only, as the restore must produce it.
func mapped(content string, a, b *machine) string {
	r := strings.NewReplacer(
		`"cwd":"`+a.repo+`"`, `"cwd":"`+b.repo+`"`,
		`"file_path":"`+a.repo+`/`, `"file_path":"`+b.repo+`/`,
		`"file":"`+a.home+`/`, `"file":"`+b.home+`/`,
	)
	return r.Replace(content)
}

// withoutWarnings drops "git-ctx: warning:" lines (the weak work factor the
// tests ask for is announced on every push).
func withoutWarnings(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "git-ctx: warning:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func writeSession(t *testing.T, p, content string, mtime time.Time) {
	t.Helper()
	writeFile(t, p, content)
	if !mtime.IsZero() {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// treeState lists every path under dir with its size and content hash (""
// when dir does not exist), to assert that nothing was written.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", p, d.Type())
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, " %x", sum[:8])
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSessionClaudeRoundTrip(t *testing.T) {
	w, a, b := cltSessPair(t, "elsewhere/deeper")
	const id = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
	content := claudeTranscript(a, id)
	writeSession(t, claudeFile(a.home, a.repo, id), content, time.Time{})
	// An older session of the same project: push picks the most recent.
	writeSession(t, claudeFile(a.home, a.repo, "11111111-2222-4333-8444-555555555555"), `{"type":"user"}`+"\n", time.Now().Add(-time.Hour))

	// Before any push: list and status need no passphrase and show the
	// local sessions.
	r := sess(t, a, "", "list", "--store", w.store)
	wantCode(t, "list before any push", r, 0)
	if !strings.Contains(r.stdout, id+"  local only") {
		t.Fatalf("list before any push: %s", r)
	}
	wantCode(t, "status before any push", sess(t, a, "", "status", "--store", w.store), 0)

	out := mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	if !strings.Contains(out, "pushed claude session "+id) {
		t.Fatalf("push output: %s", out)
	}
	if p := gitOut(t, a.repo, a.env, "config", "--local", "ctx.sessionProfile"); len(p) != 36 {
		t.Fatalf("profile not stored in local config: %q", p)
	}
	// Pushing again without changes does nothing.
	if out := mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF); !strings.Contains(out, "up to date") {
		t.Fatalf("second push: %s", out)
	}

	// Machine B: another HOME, another project path, CLAUDE_CONFIG_DIR
	// honoured, no profile configured (the store's only one is used).
	claudeB := filepath.Join(b.home, "cfg", "claude")
	b.env = withEnv(b.env, "CLAUDE_CONFIG_DIR="+claudeB)
	list := mustSess(t, b, "list", "--store", w.store, "--json")
	if !strings.Contains(list, `"remote only"`) || !strings.Contains(list, id) {
		t.Fatalf("list on B: %s", list)
	}
	out = mustSess(t, b, "pull", "--store", w.store)
	dest := filepath.Join(claudeB, "projects", claudeKey(b.repo), id+".jsonl")
	if !strings.Contains(out, dest) {
		t.Fatalf("pull output %q does not name %s", out, dest)
	}
	got := string(readFile(t, dest))
	if want := mapped(content, a, b); got != want {
		t.Fatalf("restored transcript differs:\n got %q\nwant %q", got, want)
	}
	if fi, _ := os.Stat(dest); fi.Mode().Perm() != 0o600 {
		t.Fatalf("restored mode %v", fi.Mode())
	}
	// Pull again: the local copy equals the head, nothing is written.
	before := treeState(t, claudeB)
	if out := mustSess(t, b, "restore", "--store", w.store); !strings.Contains(out, "up to date") {
		t.Fatalf("second pull: %s", out)
	}
	if treeState(t, claudeB) != before {
		t.Fatal("an up-to-date pull wrote files")
	}

	// A continues the session and pushes; B (unchanged) pulls it: the old
	// copy is backed up and replaced.
	content2 := content + `{"type":"user","cwd":"` + a.repo + `","text":"more"}` + "\n"
	writeSession(t, claudeFile(a.home, a.repo, id), content2, time.Now().Add(time.Minute))
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	if st := mustSess(t, b, "list", "--store", w.store); !strings.Contains(st, "remote newer") {
		t.Fatalf("list on B after A's second push: %s", st)
	}
	out = mustSess(t, b, "pull", "--store", w.store, "--session", id)
	if !strings.Contains(out, "previous copy saved to") {
		t.Fatalf("no backup reported: %s", out)
	}
	if got := string(readFile(t, dest)); got != mapped(content2, a, b) {
		t.Fatalf("second restore differs:\n got %q", got)
	}

	// B continues and pushes; A's push of its own, older, continuation now
	// conflicts (exit 6): its base is no longer the head.
	writeSession(t, dest, got+`{"type":"user","text":"from bob"}`+"\n", time.Time{})
	if out := mustSess(t, b, "pull", "--store", w.store); !strings.Contains(out, "local changes newer than the head") {
		t.Fatalf("pull with local changes on an unchanged head: %s", out)
	}
	mustSess(t, b, "push", "--store", w.store, "--work-factor", sessWF, "--agent", "claude", "--session", id)
	writeSession(t, claudeFile(a.home, a.repo, id), content2+`{"type":"user","text":"from alice"}`+"\n", time.Now().Add(2*time.Minute))
	r = sess(t, a, sessPass, "push", "--store", w.store, "--work-factor", sessWF)
	wantCode(t, "push over a moved head", r, 6)
	wantOneLine(t, "conflict", withoutWarnings(r.stderr))
	if !strings.Contains(r.stderr, "moved from") {
		t.Fatalf("conflict message: %s", r.stderr)
	}
	// A pulls with --keep-both: its copy stays, the remote one lands beside.
	aFile := claudeFile(a.home, a.repo, id)
	aBefore := readFile(t, aFile)
	r = sess(t, a, sessPass, "pull", "--store", w.store)
	wantCode(t, "pull over local changes", r, 6)
	out = mustSess(t, a, "pull", "--store", w.store, "--keep-both")
	if !strings.Contains(out, "beside the local copy") || !bytes.Equal(readFile(t, aFile), aBefore) {
		t.Fatalf("keep-both: %s", out)
	}

	t.Logf("list on A:\n%s", mustSess(t, a, "list", "--store", w.store))
	st := mustSess(t, a, "status", "--store", w.store)
	t.Logf("status on A:\n%s", st)
	if !strings.Contains(st, "manifest present") {
		t.Fatalf("status: %s", st)
	}
}

func codexFile(home, uuid string) (string, string) {
	rel := "sessions/2026/11/30/rollout-2026-11-30T05-00-00-" + uuid + ".jsonl"
	return filepath.Join(home, ".codex", filepath.FromSlash(rel)), rel
}

func TestSessionCodexRoundTrip(t *testing.T) {
	w, a, b := cltSessPair(t, "other/place")
	const id = "019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b"
	fa, rel := codexFile(a.home, id)
	content := fmt.Sprintf(`{"timestamp":"2026-11-30T05:00:00.000Z","type":"session_meta","payload":{"id":%q,"cwd":%q,"cli_version":"0.140.0","big":123456789012345678901}}`+"\n"+
		`{"type":"response_item","payload":{"type":"function_call","arguments":"{\"workdir\":\"x\"}","workdir":%q}}`+"\n", id, a.repo, filepath.Join(a.repo, "sub"))
	writeSession(t, fa, content, time.Time{})
	// A Codex session of another project is not this project's.
	other, _ := codexFile(a.home, "019a1b2c-3d4e-7f60-8a9b-ffffffffffff")
	writeSession(t, other, `{"type":"session_meta","payload":{"id":"x","cwd":"/somewhere/else"}}`+"\n", time.Now().Add(time.Hour))

	out := mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF, "--agent", "codex")
	if !strings.Contains(out, "pushed codex session "+id) {
		t.Fatalf("push: %s", out)
	}
	codexB := filepath.Join(b.home, "codexhome")
	b.env = withEnv(b.env, "CODEX_HOME="+codexB)
	mustSess(t, b, "pull", "--store", w.store, "--session", id)
	got := string(readFile(t, filepath.Join(codexB, filepath.FromSlash(rel))))
	want := strings.NewReplacer(`"cwd":"`+a.repo+`"`, `"cwd":"`+b.repo+`"`, `"workdir":"`+a.repo+`/`, `"workdir":"`+b.repo+`/`).Replace(content)
	if got != want {
		t.Fatalf("restored Codex transcript differs:\n got %q\nwant %q", got, want)
	}
	ls := mustSess(t, b, "list", "--store", w.store)
	if !strings.Contains(ls, "in sync") {
		t.Fatalf("list: %s", ls)
	}
}

func TestSessionRefusesCredentialFile(t *testing.T) {
	w := newSessWorld(t)
	a := w.machine(t, "alice", "code")
	writeSession(t, claudeFile(a.home, a.repo, ".env"), `{"SECRET":"x"}`+"\n", time.Time{})
	r := sess(t, a, sessPass, "push", "--store", w.store, "--work-factor", sessWF, "--session", ".env")
	wantCode(t, "credential-looking session file", r, 7)
	if keys := storeKeys(t, w.root); len(keys) != 0 {
		t.Fatalf("store written: %v", keys)
	}
}

func TestSessionPassphraseSources(t *testing.T) {
	w := newSessWorld(t)
	a := w.machine(t, "alice", "code")
	writeSession(t, claudeFile(a.home, a.repo, "s1"), `{"cwd":"`+a.repo+`"}`+"\n", time.Time{})
	// No descriptor, no file, no terminal (setsid detaches it): exit 3.
	env := a.env
	r := execute(t, a.repo, env, nil, "setsid", "-w", binPath, "session", "push", "--store", w.store)
	wantCode(t, "no passphrase source", r, 3)
	wantOneLine(t, "no passphrase", r.stderr)
	// A plain variable is not a source.
	r = execute(t, a.repo, withEnv(env, "GIT_CTX_PASSPHRASE="+sessPass), nil, "setsid", "-w", binPath, "session", "push", "--store", w.store)
	wantCode(t, "plain variable", r, 3)
	// --passphrase-file works, and the passphrase never shows up.
	pf := filepath.Join(w.s.root, "pass.txt")
	writeFile(t, pf, sessPass+"\n")
	r = execute(t, a.repo, env, nil, binPath, "session", "push", "--store", w.store, "--work-factor", sessWF, "--passphrase-file", pf)
	wantCode(t, "push with --passphrase-file", r, 0)
	// The wrong passphrase: exit 1, and the passphrase is not echoed.
	r = sess(t, a, "wrong passphrase", "list", "--store", w.store)
	wantCode(t, "wrong passphrase", r, 1)
	if strings.Contains(r.stderr+r.stdout, "wrong passphrase") || strings.Contains(r.stderr, sessPass) {
		t.Fatalf("passphrase in output: %s", r)
	}
	// REINSTATE_PASSPHRASE_FD is accepted too.
	pr, pw, _ := os.Pipe()
	pw.WriteString(sessPass)
	pw.Close()
	cmd := exec.Command(binPath, "session", "list", "--store", w.store)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = a.repo, withEnv(env, "REINSTATE_PASSPHRASE_FD=3"), []*os.File{pr}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("REINSTATE_PASSPHRASE_FD: %v\n%s", err, out)
	}
	pr.Close()
}

func storeKeys(t *testing.T, root string) []string {
	t.Helper()
	st, err := store.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestSessionConcurrentPushes(t *testing.T) {
	w, a, b := cltSessPair(t, "work")
	// Establish the profile first, so that both machines use it.
	cltSessSeed(t, w, a, "seed")

	// Different sessions from two machines at once: both land.
	writeSession(t, claudeFile(a.home, a.repo, "sa"), `{"cwd":"`+a.repo+`","n":1}`+"\n", time.Now().Add(time.Minute))
	writeSession(t, claudeFile(b.home, b.repo, "sb"), `{"cwd":"`+b.repo+`","n":2}`+"\n", time.Now().Add(time.Minute))
	codes := pushBoth(t, w, a, b, "push", "--store", w.store, "--work-factor", sessWF)
	if codes[0].code != 0 || codes[1].code != 0 {
		t.Fatalf("concurrent pushes of different sessions:\n%s\n%s", codes[0], codes[1])
	}
	ls := mustSess(t, a, "list", "--store", w.store, "--json")
	for _, id := range []string{"seed", "sa", "sb"} {
		if !strings.Contains(ls, `"session_id": "`+id+`"`) {
			t.Fatalf("session %s missing from the manifest: %s", id, ls)
		}
	}

	// The same session, never synced on either machine (same base ""), from
	// both at once: exactly one wins, the other exits 6.
	writeSession(t, claudeFile(a.home, a.repo, "same"), `{"cwd":"`+a.repo+`","who":"a"}`+"\n", time.Now().Add(2*time.Minute))
	writeSession(t, claudeFile(b.home, b.repo, "same"), `{"cwd":"`+b.repo+`","who":"b"}`+"\n", time.Now().Add(2*time.Minute))
	codes = pushBoth(t, w, a, b, "push", "--store", w.store, "--work-factor", sessWF, "--session", "same")
	got := []int{codes[0].code, codes[1].code}
	sort.Ints(got)
	if got[0] != 0 || got[1] != 6 {
		t.Fatalf("same session from two machines: want one 0 and one 6:\n%s\n%s", codes[0], codes[1])
	}
}

func pushBoth(t *testing.T, w *sessWorld, a, b *machine, args ...string) [2]result {
	t.Helper()
	var out [2]result
	var wg sync.WaitGroup
	for i, m := range []*machine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], _ = sessRun(t, m.repo, m.env, sessPass, args...)
		}()
	}
	wg.Wait()
	return out
}

// ---- hostile snapshots ----

func encrypt(t *testing.T, plain []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	wc, err := session.Encrypt(&buf, []byte(sessPass), 10, session.AllowWeak())
	if err != nil {
		t.Fatal(err)
	}
	wc.Write(plain)
	if err := wc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarBytes builds a TAR from headers and bodies with archive/tar.
func tarBytes(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o600, Size: int64(len(e.body)), Linkname: e.link, ModTime: time.Unix(0, 0)}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type tarEntry struct {
	name, body, link string
	typ              byte
}

// snapshotPlain frames an envelope for payload (declared path p, declared
// size and hash of declared) followed by the actual payload bytes.
func snapshotPlain(t *testing.T, snapID, agent, id, projectID, p string, declared, actual []byte, pad string) []byte {
	t.Helper()
	sum := sha256.Sum256(declared)
	env := session.Envelope{
		SchemaVersion: 1, Kind: session.Kind, SnapshotID: snapID, ParentRevision: pad, Agent: agent, AdapterSchema: 1,
		SourcePlatform: "linux-amd64", ProjectID: projectID, SessionID: id, CreatedAt: "2026-11-30T05:00:00Z",
		Files: []session.FileDescriptor{{Path: p, Mode: 384, Size: int64(len(declared)), SHA256: hex.EncodeToString(sum[:])}},
	}
	line, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(append(line, '\n'), actual...)
}

func TestSessionPullRejectsHostileSnapshots(t *testing.T) {
	w, a, b := cltSessPair(t, "elsewhere")
	const id = "3c2b1a09-8f7e-4d6c-9b5a-493827160504"
	writeSession(t, claudeFile(a.home, a.repo, id), `{"cwd":"`+a.repo+`"}`+"\n", time.Time{})
	mustSess(t, a, "push", "--store", w.store, "--work-factor", sessWF)
	profile := gitOut(t, a.repo, a.env, "config", "--local", "ctx.sessionProfile")
	list := mustSess(t, a, "list", "--store", w.store, "--json")
	i := strings.Index(list, `"project_id": "`)
	projectID := list[i+len(`"project_id": "`) : i+len(`"project_id": "`)+64]

	good := "projects/" + claudeKey(a.repo) + "/" + id + ".jsonl"
	body := `{"cwd":"${REPO:` + projectID + `}"}` + "\n"
	okTAR := tarBytes(t, tarEntry{name: good, body: body, typ: tar.TypeReg})

	cases := []struct {
		name string
		code int
		make func(snap string) []byte
		pass string
	}{
		{"truncated ciphertext", 1, func(snap string) []byte {
			c := encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, okTAR, okTAR, ""))
			return c[:len(c)-40]
		}, ""},
		{"tampered ciphertext", 1, func(snap string) []byte {
			c := encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, okTAR, okTAR, ""))
			c[len(c)-30] ^= 1
			return c
		}, ""},
		{"tampered TAR", 1, func(snap string) []byte {
			bad := bytes.Replace(okTAR, []byte(`"cwd"`), []byte(`"cwX"`), 1)
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, okTAR, bad, ""))
		}, ""},
		{"oversized metadata line", 7, func(snap string) []byte {
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, okTAR, okTAR, strings.Repeat("x", session.MaxMetadataLine)))
		}, ""},
		{"dot-dot TAR name", 7, func(snap string) []byte {
			p := "projects/" + claudeKey(a.repo) + "/../../../evil.jsonl"
			tb := tarBytes(t, tarEntry{name: p, body: body, typ: tar.TypeReg})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, p, tb, tb, ""))
		}, ""},
		{"absolute TAR name", 7, func(snap string) []byte {
			p := "/tmp/evil/" + id + ".jsonl"
			tb := tarBytes(t, tarEntry{name: p, body: body, typ: tar.TypeReg})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, p, tb, tb, ""))
		}, ""},
		{"dot-dot TAR entry under a safe envelope path", 7, func(snap string) []byte {
			tb := tarBytes(t, tarEntry{name: "projects/../../evil.jsonl", body: body, typ: tar.TypeReg})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, tb, tb, ""))
		}, ""},
		{"absolute TAR entry under a safe envelope path", 7, func(snap string) []byte {
			tb := tarBytes(t, tarEntry{name: "/tmp/evil.jsonl", body: body, typ: tar.TypeReg})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, tb, tb, ""))
		}, ""},
		{"symlink entry", 7, func(snap string) []byte {
			tb := tarBytes(t, tarEntry{name: good, link: "/etc/passwd", typ: tar.TypeSymlink})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, tb, tb, ""))
		}, ""},
		{"second TAR entry", 1, func(snap string) []byte {
			tb := tarBytes(t, tarEntry{name: good, body: body, typ: tar.TypeReg},
				tarEntry{name: "projects/x/second.jsonl", body: body, typ: tar.TypeReg})
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, tb, tb, ""))
		}, ""},
		{"wrong passphrase", 1, nil, "not the passphrase"},
	}
	claudeB := filepath.Join(b.home, ".claude")
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			if tc.make != nil {
				plantWith(t, w, profile, "claude", id, projectID, tc.make)
			}
			pass := sessPass
			if tc.pass != "" {
				pass = tc.pass
			}
			before := treeState(t, b.home)
			r := sess(t, b, pass, "pull", "--store", w.store, "--session", id)
			t.Logf("%s: %s", tc.name, strings.TrimSpace(r.stderr))
			wantCode(t, tc.name, r, tc.code)
			wantOneLine(t, tc.name, r.stderr)
			if after := treeState(t, b.home); after != before {
				t.Fatalf("%s: files written under B's home:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
			}
			if _, err := os.Stat(claudeB); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s: %s created", tc.name, claudeB)
			}
		})
	}
}

func TestSessionPullRejectsHostileSessionID(t *testing.T) {
	w, a, b := cltSessPair(t, "elsewhere")
	cltSessSeed(t, w, a, "s0")
	profile := gitOut(t, a.repo, a.env, "config", "--local", "ctx.sessionProfile")
	projectID := gitOut(t, a.repo, a.env, "config", "--get", "remote.origin.url") // any id: mapped below
	for _, id := range []string{"../../../evil", "a/b", ".."} {
		good := "projects/k/x.jsonl"
		tb := tarBytes(t, tarEntry{name: good, body: "{}\n", typ: tar.TypeReg})
		plantWith(t, w, profile, "claude", id, projectID, func(snap string) []byte {
			return encrypt(t, snapshotPlain(t, snap, "claude", id, projectID, good, tb, tb, ""))
		})
		before := treeState(t, b.home)
		r := sess(t, b, sessPass, "pull", "--store", w.store, "--session", id, "--project", projectID+"="+b.repo)
		wantCode(t, "session id "+id, r, 7)
		if !strings.Contains(r.stderr, "cannot be a file name") {
			t.Fatalf("session id %q: %s", id, r.stderr)
		}
		if treeState(t, b.home) != before {
			t.Fatalf("session id %q: files written", id)
		}
	}
}

// plantWith picks a snapshot id, builds the object for it, stores it
// through the real directory store and makes it the head of session id in
// the profile's manifest.
func plantWith(t *testing.T, w *sessWorld, profile, agent, id, projectID string, build func(string) []byte) string {
	t.Helper()
	n := time.Now().UnixNano()
	snap := fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(n), uint64(n)&0xffffffffffff)
	return plantID(t, w, profile, agent, id, projectID, snap, build(snap))
}

func plantID(t *testing.T, w *sessWorld, profile, agent, id, projectID, snap string, object []byte) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenDir(w.root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, "profiles/"+profile+"/snapshots/"+snap+".age", bytes.NewReader(object)); err != nil {
		t.Fatal(err)
	}
	mkey := "profiles/" + profile + "/manifest.age"
	rc, v, err := st.Get(ctx, mkey)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := session.Decrypt(rc, []byte(sessPass))
	if err != nil {
		t.Fatal(err)
	}
	m, err := session.ReadManifest(pr)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	now := session.FormatTime(time.Now().UTC())
	m.Sessions[session.SessionKey(agent, id)] = session.ManifestEntry{Agent: agent, SessionID: id, SnapshotID: snap, ProjectID: projectID, UpdatedAt: now}
	m.Revision, m.UpdatedAt = snap, now
	plain, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, mkey, bytes.NewReader(encrypt(t, plain)), v); err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestSessionGitStore: no --store, no configuration: the sessions travel on
// ghyll/sessions of the memory remote (the shared bare repository), and two
// pushes of the same session from two machines with the same base give one
// exit 6.
func TestSessionGitStore(t *testing.T) {
	w, a, b := cltSessPair(t, "far/away")
	const id = "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a"
	content := claudeTranscript(a, id)
	writeSession(t, claudeFile(a.home, a.repo, id), content, time.Time{})
	mustSess(t, a, "push", "--work-factor", sessWF)
	if out := gitOut(t, w.s.root, w.s.env("setup"), "--git-dir", w.remote, "ls-tree", "-r", "--name-only", "ghyll/sessions"); !strings.Contains(out, "/manifest.age") || !strings.Contains(out, "/snapshots/") {
		t.Fatalf("ghyll/sessions on the remote: %q", out)
	}
	if st := mustSess(t, b, "status"); !strings.Contains(st, "1 snapshot(s), manifest present") {
		t.Fatalf("status on B: %s", st)
	}
	mustSess(t, b, "pull")
	if got := string(readFile(t, claudeFile(b.home, b.repo, id))); got != mapped(content, a, b) {
		t.Fatalf("restored through the git store:\n got %q", got)
	}

	// Different sessions from both at once: both land on the branch.
	writeSession(t, claudeFile(a.home, a.repo, "ga"), `{"n":1}`+"\n", time.Time{})
	writeSession(t, claudeFile(b.home, b.repo, "gb"), `{"n":2}`+"\n", time.Time{})
	diff := [2]result{}
	var wg sync.WaitGroup
	for i, m := range []*machine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			diff[i], _ = sessRun(t, m.repo, m.env, sessPass, "push", "--work-factor", sessWF, "--session", []string{"ga", "gb"}[i])
		}()
	}
	wg.Wait()
	if diff[0].code != 0 || diff[1].code != 0 {
		t.Fatalf("different sessions at once on the git store:\n%s\n%s", diff[0], diff[1])
	}
	if ls := mustSess(t, a, "list", "--json"); !strings.Contains(ls, `"session_id": "gb"`) {
		t.Fatalf("gb missing: %s", ls)
	}

	// Both continue the same session from the same base; pushes race.
	writeSession(t, claudeFile(a.home, a.repo, id), content+`{"who":"a"}`+"\n", time.Now().Add(time.Minute))
	writeSession(t, claudeFile(b.home, b.repo, id), mapped(content, a, b)+`{"who":"b"}`+"\n", time.Now().Add(time.Minute))
	codes := pushBoth(t, w, a, b, "push", "--work-factor", sessWF, "--session", id)
	got := []int{codes[0].code, codes[1].code}
	sort.Ints(got)
	if got[0] != 0 || got[1] != 6 {
		t.Fatalf("same session, same base, git store: want one 0 and one 6:\n%s\n%s", codes[0], codes[1])
	}
}

// TestSessionRestoresReinstateObject: an object as Reinstate rc.8 writes
// it (wall-clock TAR mtime, a project id of its own, tokens in the
// transcript) in a second profile of the store restores with --profile and
// --project.
func TestSessionRestoresReinstateObject(t *testing.T) {
	w, a, b := cltSessPair(t, "elsewhere")
	// A first profile, so that the store holds two and a choice is needed.
	cltSessSeed(t, w, a, "s0")

	const profile = "9e8d7c6b-5a49-4382-a716-f5e4d3c2b1a0"
	const sid = "4f3e2d1c-0b9a-4887-a665-544332211000"
	const snap = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	body := `{"type":"user","sessionId":"` + sid + `","cwd":"${REPO:local/demo}","file_path":"${REPO:local/demo}/main.go"}` + "\n" +
		`{"type":"assistant","file":"${HOME}/.bashrc","n":1.50}` + "\n"
	name := "projects/-Users-alice-code-demo/" + sid + ".jsonl"
	var tb bytes.Buffer
	if err := session.WriteTAR(&tb, name, strings.NewReader(body), int64(len(body)), time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.OpenDir(w.root)
	if err != nil {
		t.Fatal(err)
	}
	obj := encrypt(t, snapshotPlain(t, snap, "claude", sid, "local/demo", name, tb.Bytes(), tb.Bytes(), ""))
	if _, err := st.Create(ctx, "profiles/"+profile+"/snapshots/"+snap+".age", bytes.NewReader(obj)); err != nil {
		t.Fatal(err)
	}
	m := session.NewManifest()
	m.Sessions[session.SessionKey("claude", sid)] = session.ManifestEntry{Agent: "claude", SessionID: sid, SnapshotID: snap, ProjectID: "local/demo", UpdatedAt: "2026-07-29T10:00:00Z"}
	m.Revision, m.UpdatedAt = snap, "2026-07-29T10:00:00Z"
	plain, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, "profiles/"+profile+"/manifest.age", bytes.NewReader(encrypt(t, plain))); err != nil {
		t.Fatal(err)
	}

	r := sess(t, b, sessPass, "pull", "--store", w.store)
	wantCode(t, "two profiles, none chosen", r, 3)
	r = sess(t, b, sessPass, "pull", "--store", w.store, "--profile", profile, "--session", sid)
	wantCode(t, "unmapped project", r, 3)
	if !strings.Contains(r.stderr, "--project local/demo=") {
		t.Fatalf("unmapped project message: %s", r.stderr)
	}
	mustSess(t, b, "pull", "--store", w.store, "--profile", profile, "--project", "local/demo="+b.repo)
	got := string(readFile(t, claudeFile(b.home, b.repo, sid)))
	want := strings.NewReplacer("${REPO:local/demo}", b.repo, "${HOME}", b.home).Replace(body)
	if got != want {
		t.Fatalf("restored rc.8 object:\n got %q\nwant %q", got, want)
	}
}

// TestSessionPassphrasePrompt drives the terminal prompt through a pseudo
// terminal (script(1)): echo is off (the passphrase never appears in the
// terminal's output), a new profile asks twice and refuses a mismatch.
func TestSessionPassphrasePrompt(t *testing.T) {
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed")
	}
	w := newSessWorld(t)
	a := w.machine(t, "alice", "code")
	writeSession(t, claudeFile(a.home, a.repo, "s1"), `{"cwd":"`+a.repo+`"}`+"\n", time.Time{})
	prompt := func(answers []string, args ...string) (string, int) {
		t.Helper()
		cmdline := binPath + " session " + strings.Join(args, " ")
		c, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		cmd := exec.CommandContext(c, scriptPath, "-qec", cmdline, "/dev/null")
		// On a terminal `session list` pages (as git's log does); less on
		// script's terminal (no TERM) would stop for RETURN.
		cmd.Dir, cmd.Env = a.repo, append(slices.Clip(a.env), "GIT_PAGER=cat")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		outPipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for _, ans := range answers {
			// Answer only once the prompt is shown (echo is off by then).
			for !strings.HasSuffix(strings.TrimRight(out.String(), " "), ":") {
				n, err := outPipe.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					t.Fatalf("no prompt: %v\n%s", err, out.String())
				}
			}
			io.WriteString(in, ans+"\n")
			out.WriteString("\x00") // consumed this prompt
		}
		rest, _ := io.ReadAll(outPipe)
		out.Write(rest)
		err = cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	out, code := prompt([]string{sessPass, sessPass + "x"}, "push", "--store", w.store, "--work-factor", sessWF)
	if code != 3 || !strings.Contains(out, "passphrases differ") {
		t.Fatalf("mismatched confirmation: exit %d\n%s", code, out)
	}
	out, code = prompt([]string{sessPass, sessPass}, "push", "--store", w.store, "--work-factor", sessWF)
	if code != 0 || !strings.Contains(out, "pushed claude session s1") || strings.Contains(out, sessPass) {
		t.Fatalf("push through the prompt: exit %d\n%s", code, out)
	}
	out, code = prompt([]string{sessPass}, "list", "--store", w.store)
	if code != 0 || !strings.Contains(out, "in sync") || strings.Contains(out, sessPass) {
		t.Fatalf("list through the prompt: exit %d\n%s", code, out)
	}
}

// TestSessionGitStoreLargeObject: a 34 MiB session through the git store
// is split so that no blob on the remote exceeds 32 MiB, and restores
// byte-exact (paths mapped) on another machine. About 25 s, so only with
// GIT_CTX_LONG=1.
func TestSessionGitStoreLargeObject(t *testing.T) {
	if os.Getenv("GIT_CTX_LONG") == "" {
		t.Skip("34 MiB session through the git store: set GIT_CTX_LONG=1 to run it")
	}
	w, a, b := cltSessPair(t, "elsewhere")
	const id = "5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716"
	src := claudeFile(a.home, a.repo, id)
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	want := writeLarge(t, src, a.repo, 34<<20, b.repo)
	start := time.Now()
	mustSess(t, a, "push", "--work-factor", sessWF)
	t.Logf("push %v", time.Since(start))
	start = time.Now()
	out := gitOut(t, w.s.root, w.s.env("setup"), "--git-dir", w.remote, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize)")
	for _, l := range strings.Split(out, "\n") {
		var typ string
		var size int64
		fmt.Sscanf(l, "%s %d", &typ, &size)
		if typ == "blob" && size > 32<<20 {
			t.Fatalf("a blob of %d bytes on the remote", size)
		}
	}
	t.Logf("check %v", time.Since(start))
	start = time.Now()
	mustSess(t, b, "pull")
	t.Logf("pull %v", time.Since(start))
	sum := sha256.Sum256(readFile(t, claudeFile(b.home, b.repo, id)))
	if hex.EncodeToString(sum[:]) != want {
		t.Fatal("34 MiB session restored through the git store differs")
	}
}
