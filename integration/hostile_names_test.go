package integration

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	ctxcheckpoint "github.com/git-ctx/git-ctx/formats/checkpoint"
)

// Hostile names (issue 14, items 2 and 7): device ids and path components
// that arrive on pull are held to a rule of their own. The attacker M has
// push access and writes the memory branch with raw git plumbing
// (hash-object, mktree, commit-tree); its records are validly signed with
// its own key, so only the names are wrong.

// namesWorld: a bare remote, honest clones A and B that have exchanged one
// record each, and the attacker's clone M with the memory branch as a ref.
type namesWorld struct {
	s      *sandbox
	rem    *syncRemote
	a, b   *syncDevice
	m      string // the attacker's clone
	menv   []string
	repoID string
	idA    string
	idB    string
	before []record // a1, b1: pushed before the attack
}

func namesNewWorld(t *testing.T) *namesWorld {
	t.Helper()
	s, rem, a := cltTeam(t, "file", "A")
	w := &namesWorld{s: s, rem: rem, a: a, menv: s.env("M")}
	w.before = append(w.before, w.a.cp(t, "a1 before the attack"))
	w.a.must(t, "push")
	var b1 record
	w.b, b1 = cltJoin(t, s, w.rem, w.a, "b1 before the attack")
	w.before = append(w.before, b1)
	w.idA, w.idB = w.a.id(t), w.b.id(t)
	w.repoID = status(t, w.a.dir, w.a.env).RepoID
	w.m = filepath.Join(s.root, "M")
	cltAttackerClone(t, s, w.rem.bare, w.m, w.menv)
	return w
}

// namesFile is one blob the attacker places, at a path given as components
// (so that a component may hold any byte but "/" and NUL).
type namesFile struct {
	parts   []string
	content string
}

func namesAt(path, content string) namesFile {
	return namesFile{parts: strings.Split(path, "/"), content: content}
}

// namesTreeEdit returns tree (a tree id, "" for none) with blob placed at
// parts, built with ls-tree and mktree only: no index, so git's own path
// checks (which refuse ".git" aliases) never run.
func namesTreeEdit(t *testing.T, dir string, env []string, tree string, parts []string, blob string) string {
	t.Helper()
	var keep []string
	sub := ""
	if tree != "" {
		for _, e := range strings.Split(mustRun(t, dir, env, "git", "ls-tree", "-z", tree), "\x00") {
			if e == "" {
				continue
			}
			meta, name, _ := strings.Cut(e, "\t")
			if name == parts[0] {
				if f := strings.Fields(meta); len(parts) > 1 && f[1] == "tree" {
					sub = f[2]
				}
				continue
			}
			keep = append(keep, e)
		}
	}
	if len(parts) == 1 {
		keep = append(keep, "100644 blob "+blob+"\t"+parts[0])
	} else {
		keep = append(keep, "040000 tree "+namesTreeEdit(t, dir, env, sub, parts[1:], blob)+"\t"+parts[0])
	}
	r := execute(t, dir, env, []byte(strings.Join(keep, "\x00")+"\x00"), "git", "mktree", "-z")
	if r.code != 0 {
		t.Fatalf("git mktree: %s", r)
	}
	return strings.TrimSpace(r.stdout)
}

// namesPublish commits files on M's memory branch (one commit on top of the
// remote's tip, via commit-tree) and pushes it without force.
func (w *namesWorld) namesPublish(t *testing.T, files ...namesFile) {
	t.Helper()
	dir, env := w.m, w.menv
	gitOut(t, dir, env, "fetch", "-q", "origin", "+"+memRef+":refs/remotes/origin/ghyll/memory")
	old := gitOut(t, dir, env, "rev-parse", "refs/remotes/origin/ghyll/memory")
	tree := gitOut(t, dir, env, "rev-parse", old+"^{tree}")
	for _, f := range files {
		r := execute(t, dir, env, []byte(f.content), "git", "hash-object", "-w", "--stdin")
		if r.code != 0 {
			t.Fatalf("hash-object: %s", r)
		}
		tree = namesTreeEdit(t, dir, env, tree, f.parts, strings.TrimSpace(r.stdout))
	}
	commit := gitOut(t, dir, env, "commit-tree", tree, "-p", old, "-m", "ctx: checkpoint (nothing to see here)")
	gitOut(t, dir, env, "update-ref", memRef, commit)
	gitOut(t, dir, env, "push", "-q", "origin", memRef+":"+memRef)
	if got := syncBareTip(t, w.s, w.rem.bare); got != commit {
		t.Fatalf("M's push did not land: remote at %s, want %s", got, commit)
	}
}

// namesForge writes n validly signed records of device (under priv) for
// repository dir repo in the ctx-v1 layout: the key file, the checkpoint
// files and the chain segment. It returns the files and the hashes.
func namesForge(t *testing.T, repo, device string, priv ed25519.PrivateKey, n int) ([]namesFile, []string) {
	t.Helper()
	pub := priv.Public().(ed25519.PublicKey)
	files := []namesFile{{parts: []string{"devices", device + ".pub"}, content: string(ctxcheckpoint.EncodePublicKey(pub))}}
	var chain strings.Builder
	var hashes []string
	parent := ctxcheckpoint.ZeroHash
	for i := 0; i < n; i++ {
		cp := &ctxcheckpoint.Checkpoint{ParentHash: parent, DeviceID: device, AuthorID: "m@example.org",
			Timestamp: 1764460800000000000 + int64(i), Turn: i + 1, Summary: fmt.Sprintf("forged record %d of %s in %q", i+1, device, repo)}
		if err := cp.Seal(priv); err != nil {
			t.Fatal(err)
		}
		raw, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, namesFile{parts: []string{"repos", repo, "checkpoints", cp.Hash[:2], cp.Hash[2:4], cp.Hash + ".json"}, content: string(raw)})
		chain.Write(cp.Entry().MarshalLine())
		hashes = append(hashes, cp.Hash)
		parent = cp.Hash
	}
	files = append(files, namesFile{parts: []string{"repos", repo, "chains", device, "00000000.jsonl"}, content: chain.String()})
	return files, hashes
}

func namesNewKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// namesDevices is `git ctx devices --json`.
type namesDevice struct {
	ID          string   `json:"id"`
	Fingerprint string   `json:"fingerprint"`
	SameKeyAs   []string `json:"same_key_as"`
}

func namesDevicesOf(t *testing.T, d *syncDevice) map[string]namesDevice {
	t.Helper()
	out := d.must(t, "devices", "--json")
	var l []namesDevice
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("devices --json: %v\n%s", err, out)
	}
	m := map[string]namesDevice{}
	for _, x := range l {
		m[x.ID] = x
	}
	return m
}

// namesWantRejected fails unless d's quarantine (git ctx log --unverified
// --json) holds a row with reason for each record (a path or a device id
// matched against record or device).
func namesWantRejected(t *testing.T, d *syncDevice, reason string, records ...string) {
	t.Helper()
	q := syncUnverified(t, d)
	for _, rec := range records {
		found := false
		for _, x := range q {
			if x.Reason == reason && (x.Record == rec || x.Device == rec) {
				found = true
			}
		}
		if !found {
			t.Errorf("device %s: no %s row for %q in log --unverified: %+v", d.name, reason, rec, q)
		}
	}
	if txt := d.must(t, "log", "--unverified"); !strings.Contains(txt, reason) {
		t.Errorf("device %s: log --unverified does not show %s:\n%s", d.name, reason, txt)
	}
}

// namesHonestAfter: B, then A, write records after the attack and push them;
// both honest clones end up with every honest record (before and after),
// none of hidden, a verifying branch, and nothing unsafe in their tip tree.
func (w *namesWorld) namesHonestAfter(t *testing.T, hidden ...string) {
	t.Helper()
	// B pulls the attack (which is reported, exit 1), writes, pushes.
	if r := w.b.ctx(t, "pull"); r.code != 1 {
		t.Fatalf("B's pull of the attacked remote: want exit 1 (rejections), got %s", r)
	}
	b2 := w.b.cp(t, "b2 after the attack")
	w.b.must(t, "push")
	a2 := w.a.cp(t, "a2 after the attack")
	r := w.a.ctx(t, "sync")
	if r.code != 0 && r.code != 1 {
		t.Fatalf("A's sync: %s", r)
	}
	w.b.must(t, "pull")
	want := append(syncHashesOf(w.before...), b2.Hash, a2.Hash)
	for _, d := range []*syncDevice{w.a, w.b} {
		got := d.hashes(t)
		for _, h := range want {
			if !got[h] {
				t.Errorf("device %s lacks honest record %s (has %v)", d.name, h, syncSorted(got))
			}
		}
		for _, h := range hidden {
			if got[h] {
				t.Errorf("device %s merged the attacker's record %s", d.name, h)
			}
		}
		d.wantVerifies(t)
		for _, p := range strings.Split(mustRun(t, d.dir, d.env, "git", "ls-tree", "-r", "-t", "-z", "--name-only", memRef), "\x00") {
			for _, c := range strings.Split(p, "/") {
				if low := strings.ToLower(strings.TrimRight(c, ". ")); low == ".git" || low == "git~1" || low == ".gitmodules" || strings.ContainsRune(c, '\u200c') {
					t.Errorf("device %s: the memory branch holds %q", d.name, p)
				}
			}
		}
	}
}

// TestHostileNamesDeviceIDs: ids that break the branch rule (whitespace,
// control, non-ASCII look-alikes), ids that differ from a pinned id only in
// case or a trailing dot, and two new ids that differ only in case are
// refused bad_device_id with their records; the same key published under a
// second id is merged and reported once, and `devices` shows it.
func TestHostileNamesDeviceIDs(t *testing.T) {
	t.Parallel()
	t.Run("bad_characters", func(t *testing.T) {
		t.Parallel()
		w := namesNewWorld(t)
		var files []namesFile
		var hidden, ids []string
		for _, id := range []string{"evil dev", "l\u0430ptop", "tab\tid", "zw\u200bsp", "-rf", strings.Repeat("x", 129)} {
			f, h := namesForge(t, w.repoID, id, namesNewKey(t), 2)
			files, hidden, ids = append(files, f...), append(hidden, h...), append(ids, id)
		}
		w.namesPublish(t, files...)
		r := w.a.ctx(t, "pull")
		wantCode(t, "A's pull", r, 1)
		namesWantRejected(t, w.a, "bad_device_id", ids...)
		// Names are shown quoted, never raw: a control character in an id
		// must not reach the terminal.
		if txt := w.a.must(t, "log", "--unverified"); strings.Contains(r.stdout+txt, "tab\tid") || !strings.Contains(r.stdout+txt, `"tab\tid"`) {
			t.Errorf("a raw tab reaches the output, or the id is not shown quoted:\n%s\n%s", r.stdout, txt)
		}
		devs := namesDevicesOf(t, w.a)
		for _, id := range ids {
			if _, ok := devs[id]; ok {
				t.Errorf("devices lists the refused id %q", id)
			}
		}
		w.namesHonestAfter(t, hidden...)
	})
	t.Run("case_of_pinned", func(t *testing.T) {
		t.Parallel()
		w := namesNewWorld(t)
		upper, dotted := strings.ToUpper(w.idB), w.idB+"."
		f1, h1 := namesForge(t, w.repoID, upper, namesNewKey(t), 2)
		f2, h2 := namesForge(t, w.repoID, dotted, namesNewKey(t), 1)
		w.namesPublish(t, append(f1, f2...)...)
		r := w.a.ctx(t, "pull")
		wantCode(t, "A's pull", r, 1)
		namesWantRejected(t, w.a, "bad_device_id", upper, dotted)
		for _, q := range syncUnverified(t, w.a) {
			if q.Device == upper && q.Reason == "bad_device_id" && !strings.Contains(q.Detail, "only in letter case") {
				t.Errorf("the quarantine does not say why %s is refused: %+v", upper, q)
			}
		}
		w.namesHonestAfter(t, append(h1, h2...)...)
	})
	t.Run("case_fold_together", func(t *testing.T) {
		t.Parallel()
		w := namesNewWorld(t)
		f1, h1 := namesForge(t, w.repoID, "Mallory-1", namesNewKey(t), 1)
		f2, h2 := namesForge(t, w.repoID, "mallory-1", namesNewKey(t), 1)
		w.namesPublish(t, append(f1, f2...)...)
		wantCode(t, "A's pull", w.a.ctx(t, "pull"), 1)
		namesWantRejected(t, w.a, "bad_device_id", "Mallory-1", "mallory-1")
		w.namesHonestAfter(t, append(h1, h2...)...)
	})
	t.Run("ghyll_host_id_accepted", func(t *testing.T) {
		t.Parallel()
		// A ghyll device id is its host name, capitals and dots included.
		w := namesNewWorld(t)
		f, h := namesForge(t, w.repoID, "Alice-MacBook-Pro.local", namesNewKey(t), 2)
		w.namesPublish(t, f...)
		out := w.a.must(t, "pull")
		syncWantLine(t, "A's pull", out, syncPulled("Alice-MacBook-Pro.local", 2))
		syncWantHashes(t, "A after the pull", w.a.hashes(t), append(syncHashesOf(w.before...), h...)...)
	})
	t.Run("same_key_second_id", func(t *testing.T) {
		t.Parallel()
		w := namesNewWorld(t)
		// M republishes B's public key under a second id (no records: M
		// cannot sign as B).
		keyB := branchFile(t, w.a.dir, w.a.env, "devices/"+w.idB+".pub")
		w.namesPublish(t, namesAt("devices/b-twin.pub", keyB+"\n"))
		r := w.a.ctx(t, "pull", "--json")
		wantCode(t, "A's pull --json", r, 0)
		var pr struct {
			SharedKeys []struct {
				Fingerprint string   `json:"fingerprint"`
				Devices     []string `json:"devices"`
				New         []string `json:"new"`
			} `json:"shared_keys"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &pr); err != nil {
			t.Fatalf("pull --json: %v\n%s", err, r)
		}
		want := []string{"b-twin", w.idB}
		sort.Strings(want)
		if len(pr.SharedKeys) != 1 || strings.Join(pr.SharedKeys[0].Devices, ",") != strings.Join(want, ",") ||
			strings.Join(pr.SharedKeys[0].New, ",") != "b-twin" {
			t.Fatalf("pull --json shared_keys = %+v, want one entry for %v (new: b-twin)\n%s", pr.SharedKeys, want, r.stdout)
		}
		devs := namesDevicesOf(t, w.a)
		if fp := devs[w.idB].Fingerprint; devs["b-twin"].Fingerprint != fp || pr.SharedKeys[0].Fingerprint != fp {
			t.Fatalf("fingerprints: devices %+v, pull %s", devs, pr.SharedKeys[0].Fingerprint)
		}
		if strings.Join(devs["b-twin"].SameKeyAs, ",") != w.idB || strings.Join(devs[w.idB].SameKeyAs, ",") != "b-twin" ||
			len(devs[w.idA].SameKeyAs) != 0 {
			t.Fatalf("devices --json same_key_as: %+v", devs)
		}
		if txt := w.a.must(t, "devices"); !strings.Contains(txt, "same key as b-twin") || !strings.Contains(txt, "same key as "+w.idB) {
			t.Fatalf("devices does not show the shared key:\n%s", txt)
		}
		// B pulls it in human form: one warning line; later pulls stay quiet.
		out := w.b.must(t, "pull")
		if n := strings.Count(out, "warning: one key"); n != 1 {
			t.Fatalf("B's pull prints the shared-key warning %d times:\n%s", n, out)
		}
		w.b.cp(t, "b2 after the twin")
		w.b.must(t, "push")
		if out := w.a.must(t, "pull"); strings.Contains(out, "warning: one key") {
			t.Fatalf("A's second pull repeats the warning:\n%s", out)
		}
		if out := w.b.must(t, "pull"); strings.Contains(out, "warning: one key") {
			t.Fatalf("B's second pull repeats the warning:\n%s", out)
		}
	})
}

// TestHostileNamesGitAliases: M pushes (to a remote without fsck) trees
// whose components git refuses or a checkout reads as .git or .gitmodules:
// repository directories ".git", ".GIT", "git~1", ".git. " and ".g<U+200C>it"
// holding validly signed chains, a ".gitmodules" file and a ".git" directory
// under devices/. Every such path is rejected unsafe_path, nothing of it is
// merged, the rest of the pull merges, and both honest clones keep merging.
func TestHostileNamesGitAliases(t *testing.T) {
	t.Parallel()
	w := namesNewWorld(t)
	priv := namesNewKey(t)
	var files []namesFile
	var hidden, bad []string
	for _, repo := range []string{".git", ".GIT", "git~1", ".git. ", ".g\u200cit", "GITMOD~1"} {
		f, h := namesForge(t, repo, "mallory-2", priv, 1)
		if repo != ".git" {
			f = f[1:] // the key once
		}
		files, hidden = append(files, f...), append(hidden, h...)
		bad = append(bad, "repos/"+repo+"/chains/mallory-2/00000000.jsonl", "repos/"+repo+"/checkpoints/"+h[0][:2]+"/"+h[0][2:4]+"/"+h[0]+".json")
	}
	files = append(files,
		namesAt("repos/"+w.repoID+"/.gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = ../evil\n"),
		namesFile{parts: []string{"devices", ".Git", "x.pub"}, content: "x\n"},
		namesFile{parts: []string{"repos", w.repoID, "chains", "git~1", "00000000.jsonl"}, content: "x\n"},
	)
	bad = append(bad, "repos/"+w.repoID+"/.gitmodules", "devices/.Git/x.pub", "repos/"+w.repoID+"/chains/git~1/00000000.jsonl")
	// An honest-looking record of M in the real repository merges.
	okFiles, okHashes := namesForge(t, w.repoID, "mallory-2", priv, 1)
	w.namesPublish(t, append(files, okFiles[1:]...)...)

	r := w.a.ctx(t, "pull")
	wantCode(t, "A's pull", r, 1)
	syncWantLine(t, "A's pull", r.stdout, syncPulled("mallory-2", 1))
	if !strings.Contains(r.stdout, "unsafe_path") {
		t.Errorf("A's pull does not name unsafe_path:\n%s", r)
	}
	namesWantRejected(t, w.a, "unsafe_path", bad...)
	if got := w.a.hashes(t); !got[okHashes[0]] {
		t.Errorf("A did not merge M's record in the real repository")
	}
	w.namesHonestAfter(t, hidden...)
}

// TestHostileNamesFsck: a realistic session (checkpoints, a snapshot, a
// package, pulls that merge) through a remote with receive.fsckObjects and
// transfer.fsckObjects, and clones that check what they fetch: every push
// is accepted, and `git fsck --strict` passes on both clones and the remote.
func TestHostileNamesFsck(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	for _, kv := range [][2]string{{"receive.fsckObjects", "true"}, {"transfer.fsckObjects", "true"}} {
		mustRun(t, rem.bare, s.env("setup"), "git", "config", kv[0], kv[1])
	}
	a := syncFirstDevice(t, s, rem, "A")
	a.git(t, "config", "transfer.fsckObjects", "true")
	a.must(t, "init")
	checkpoint(t, a.dir, a.env, "-m", "add login\n\nDecision: use JWT", "--session", "s1", "--file", "auth.go")
	a.cp(t, "a2")
	a.must(t, "snapshot", "create", "--sign")
	pkg := pkgBuild(t, a, "auth.ctxpkg", "--name", "@team/auth", "--version", "1.0.0", "--sign")
	a.must(t, "pkg", "publish", pkg)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.git(t, "config", "transfer.fsckObjects", "true")
	// An identity git itself would clean up: angle brackets and a newline
	// must not reach a commit header.
	b.git(t, "config", "user.name", "B <evil>\nparent 0000000000000000000000000000000000000000")
	b.git(t, "config", "user.email", "b@example.org>\n")
	b.must(t, "pull")
	b.must(t, "init")
	b.cp(t, "b1")
	a.cp(t, "a3 concurrent")
	a.must(t, "push")
	b.must(t, "snapshot", "create", "--sign")
	b.must(t, "sync") // a real merge: both sides moved
	a.must(t, "pull")
	a.cp(t, "a4")
	a.must(t, "sync")
	b.must(t, "pull")
	if syncBareTip(t, s, rem.bare) != a.tip(t) || b.tip(t) != a.tip(t) {
		t.Fatalf("clones and remote disagree: remote %s, A %s, B %s", syncBareTip(t, s, rem.bare), a.tip(t), b.tip(t))
	}
	if n := len(strings.Fields(gitOut(t, a.dir, a.env, "rev-list", "--merges", memRef))); n == 0 {
		t.Fatal("the session made no merge commit")
	}
	for _, dir := range []string{a.dir, b.dir, rem.bare} {
		if out, errOut, code := run(t, dir, s.env("setup"), "git", "fsck", "--strict", "--no-dangling"); code != 0 {
			t.Errorf("git fsck --strict in %s: exit %d\n%s%s", dir, code, out, errOut)
		}
	}
	// A fresh remote with fsck on accepts the whole branch in one push.
	fresh := syncNewBare(t, s, filepath.Join(s.root, "srv", "fresh.git"))
	mustRun(t, fresh, s.env("setup"), "git", "config", "receive.fsckObjects", "true")
	if _, errOut, code := run(t, a.dir, a.env, "git", "push", "-q", fresh, memRef+":"+memRef); code != 0 {
		t.Fatalf("a receive.fsckObjects remote refuses the memory branch:\n%s", errOut)
	}
	a.wantVerifies(t)
}

// TestHostileNamesRepoIDOverride: ctx.repoId naming .git in any spelling is
// refused (exit 3, one line) and nothing is written.
func TestHostileNamesRepoIDOverride(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a := newSyncDevice(s, "A", newRepo(t, s, "A"))
	a.must(t, "init")
	tip := a.tip(t)
	for _, v := range []string{".git", ".GIT", "git~1", ".git.", ".g\u200cit", ".gitmodules"} {
		a.git(t, "config", "ctx.repoId", v)
		r := a.ctx(t, "checkpoint", "-m", "x")
		wantCode(t, "checkpoint with ctx.repoId="+v, r, 3)
		wantOneLine(t, "checkpoint with ctx.repoId="+v, r.stderr)
		if a.tip(t) != tip {
			t.Fatalf("ctx.repoId=%q: the branch moved", v)
		}
	}
}
