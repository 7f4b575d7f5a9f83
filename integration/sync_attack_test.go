package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syncAttackFixture: devices A (honest) and B (the victim) have pushed to a
// bare repository; device C pulled a1, a2, b1, b2 (pinning both keys);
// then A pushed a3, a4 and B pushed b3, b4, b5, which C has not seen. The
// attacker rewrites what B published; every subtest works on its own copy.
type syncAttackFixture struct {
	root   string // the fixture sandbox (copied from, never changed)
	bare   string // its remote
	cDir   string // device C's checkout
	bSnap  string // a copy of B's checkout taken right after b1
	idA    string
	idB    string
	repoID string
	a      []record // a1..a4
	b      []record // b1..b5
}

func newSyncAttackFixture(t *testing.T) *syncAttackFixture {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	f := &syncAttackFixture{root: s.root, bare: rem.bare}

	a := syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	f.a = append(f.a, a.cp(t, "a1 honest"), a.cp(t, "a2 honest"))
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	f.b = append(f.b, b.cp(t, "b1 victim"))
	f.bSnap = filepath.Join(s.root, "Bsnap")
	syncCopy(t, b.dir, f.bSnap)
	f.b = append(f.b, b.cp(t, "b2 victim"))
	b.must(t, "sync")

	c := syncCloneDevice(t, s, rem, "C")
	out := c.must(t, "pull")
	f.idA, f.idB = a.id(t), b.id(t)
	syncWantLine(t, "C's first pull", out, syncPulled(f.idA, 2))
	syncWantLine(t, "C's first pull", out, syncPulled(f.idB, 2))
	f.cDir = c.dir

	f.a = append(f.a, a.cp(t, "a3 honest, new"), a.cp(t, "a4 honest, new"))
	a.must(t, "sync")
	f.b = append(f.b, b.cp(t, "b3 victim, new"), b.cp(t, "b4 victim, new"), b.cp(t, "b5 victim, new"))
	b.must(t, "sync")
	f.repoID = status(t, a.dir, a.env).RepoID
	if st := status(t, c.dir, c.env); st.RepoID != f.repoID {
		t.Fatalf("C names the repository %s, A %s", st.RepoID, f.repoID)
	}
	return f
}

func (f *syncAttackFixture) cpPath(hash string) string { return ctxV1CheckpointPath(f.repoID, hash) }

func (f *syncAttackFixture) chainPath(device string) string {
	return "repos/" + f.repoID + "/chains/" + device + "/00000000.jsonl"
}

// syncAttack is one subtest's world: a copy of the remote, of C and an
// attacker's clone of the remote with ghyll/memory checked out as a ref.
type syncAttack struct {
	f        *syncAttackFixture
	s        *sandbox
	bare     string
	c        *syncDevice
	attacker string
	env      []string
	forkHash string // the forked case's other continuation
}

func (f *syncAttackFixture) copy(t *testing.T) *syncAttack {
	t.Helper()
	s := newSandbox(t)
	at := &syncAttack{f: f, s: s, env: s.env("attacker")}
	at.bare = filepath.Join(s.root, "srv", "remote.git")
	syncCopy(t, f.bare, at.bare)
	at.c = newSyncDevice(s, "C", filepath.Join(s.root, "C"))
	syncCopy(t, f.cDir, at.c.dir)
	if _, err := os.Stat(filepath.Join(f.root, "ctxhome-C")); err == nil {
		syncCopy(t, filepath.Join(f.root, "ctxhome-C"), s.ctxHome("C"))
	}
	// C keeps its remote URL (which names the repository) but reaches the copy.
	at.c.git(t, "config", "url."+at.bare+".insteadOf", f.bare)
	at.attacker = filepath.Join(s.root, "attacker")
	cltAttackerClone(t, s, at.bare, at.attacker, at.env)
	return at
}

// file is a path's content on the attacker's ghyll/memory.
func (at *syncAttack) file(t *testing.T, path string) string {
	t.Helper()
	return branchFile(t, at.attacker, at.env, path)
}

// publish commits edits on the attacker's branch and force-pushes it.
func (at *syncAttack) publish(t *testing.T, edits ...fileEdit) {
	t.Helper()
	rewriteBranch(t, at.attacker, at.env, "ctx: checkpoint (nothing to see here)", edits...)
	at.forcePush(t)
}

func (at *syncAttack) forcePush(t *testing.T) {
	t.Helper()
	gitOut(t, at.attacker, at.env, "push", "-q", "--force", "origin", memRef+":"+memRef)
	if got := syncBareTip(t, at.s, at.bare); got != gitOut(t, at.attacker, at.env, "rev-parse", memRef) {
		t.Fatalf("the attacker's push did not land: remote at %s", got)
	}
}

// chainLines is device's chain on the attacker's branch, one line each.
func (at *syncAttack) chainLines(t *testing.T, device string) []string {
	t.Helper()
	lines := strings.SplitAfter(at.file(t, at.f.chainPath(device)), "\n")
	return lines[:len(lines)-1]
}

// syncWantQ is a rejection a pull must report.
type syncWantQ struct {
	device  string
	reasons []string // any of these
	record  string   // "" = any
}

func syncMatchQ(q syncQuarantine, w syncWantQ) bool {
	if q.Device != w.device || (w.record != "" && q.Record != w.record) {
		return false
	}
	for _, r := range w.reasons {
		if q.Reason == r {
			return true
		}
	}
	return false
}

func syncOtherHash(h string) string {
	last := "0"
	if h[len(h)-1] == '0' {
		last = "1"
	}
	return h[:len(h)-1] + last
}

// TestSyncAttacks: a tampered branch is rejected for the attacked device
// only, with the right reason, while the honest device's new records in the
// same pull still merge, and C's branch keeps verifying.
func TestSyncAttacks(t *testing.T) {
	t.Parallel()
	f := newSyncAttackFixture(t)
	cases := []tstAttackCase{
		{
			name:   "altered summary",
			attack: tstAttackAlteredSummary,
			code:   1,
		},
		{
			name:   "altered signature",
			attack: tstAttackAlteredSignature,
			code:   1,
		},
		{
			name:    "record removed from the middle",
			attack:  tstAttackRemovedRecord,
			code:    1,
			bMerged: f.b[2:3],
		},
		{
			name:   "two chain lines swapped",
			attack: tstAttackSwappedLines,
			code:   1,
		},
		{
			name:   "replaced device key",
			attack: tstAttackReplacedKey,
			code:   1,
		},
		{
			name:    "record signed with another device's key",
			attack:  tstAttackOtherDevicesKey,
			code:    1,
			bMerged: f.b[2:5],
		},
		{
			name:   "forked chain",
			attack: tstAttackForkedChain,
			code:   6,
			inOutput: func(f *syncAttackFixture, at *syncAttack) []string {
				return []string{at.forkHash[:12], f.b[1].Hash[:12], "fork"}
			},
		},
		{
			name:   "file name is not its hash",
			attack: tstAttackNameNotHash,
			code:   1,
		},
		{
			name:    "paths outside the layout",
			attack:  tstAttackOddPaths,
			code:    1,
			bMerged: f.b[2:5],
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tstRunSyncAttack(t, f, tc)
		})
	}
}

// tstAttackCase is one attack of TestSyncAttacks: attack tampers with a
// copy of the fixture's remote and says what C's pull must quarantine.
type tstAttackCase struct {
	name     string
	attack   func(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ
	code     int
	bMerged  []record // B's new records that verify and merge
	inOutput func(f *syncAttackFixture, at *syncAttack) []string
}

// tstRunSyncAttack runs tc on a copy of f: C's pull exits tc.code and says
// what it rejected, quarantines exactly what the attack wants, merges A's
// records and B's that verified, and takes nothing of the attack.
func tstRunSyncAttack(t *testing.T, f *syncAttackFixture, tc tstAttackCase) {
	at := f.copy(t)
	c := at.c
	want := tc.attack(t, f, at)

	r := tstAttackPull(t, f, at, tc)
	// Quarantine: exactly the expected rejections, none for A.
	q := tstAttackQuarantine(t, f, c, want)
	// A's new records merged; of B's, only what verified.
	tstAttackMerged(t, f, c, tc.bMerged)
	// Nothing of the attack is on C's branch.
	tstAttackBranchClean(t, c, q)
	if t.Failed() {
		t.Logf("pull output:\n%s\n%+v", r, q)
	}
}

// tstAttackPull: C's pull exits tc.code, merges A's two new records, and
// says what it rejected (and what tc.inOutput wants said).
func tstAttackPull(t *testing.T, f *syncAttackFixture, at *syncAttack, tc tstAttackCase) result {
	t.Helper()
	c := at.c
	r := c.ctx(t, "pull")
	wantCode(t, "C's pull of the tampered branch", r, tc.code)
	syncWantLine(t, "C's pull", r.stdout, syncPulled(f.idA, 2))
	if !strings.Contains(r.stdout, "rejected") && tc.code == 1 {
		t.Fatalf("C's pull does not say what it rejected:\n%s", r)
	}
	if tc.inOutput != nil {
		for _, s := range tc.inOutput(f, at) {
			if !strings.Contains(r.stdout, s) {
				t.Fatalf("C's pull output lacks %q:\n%s", s, r)
			}
		}
	}
	return r
}

// tstAttackQuarantine: C's quarantine holds exactly the entries want
// describes, none for A; returns it.
func tstAttackQuarantine(t *testing.T, f *syncAttackFixture, c *syncDevice, want []syncWantQ) []syncQuarantine {
	t.Helper()
	q := syncUnverified(t, c)
	for _, w := range want {
		found := false
		for _, e := range q {
			found = found || syncMatchQ(e, w)
		}
		if !found {
			t.Errorf("no quarantine entry for device %q record %q reason %v in %+v", w.device, w.record, w.reasons, q)
		}
	}
	for _, e := range q {
		ok := false
		for _, w := range want {
			ok = ok || syncMatchQ(e, w)
		}
		if !ok {
			t.Errorf("unexpected quarantine entry %+v", e)
		}
		if e.Device == f.idA {
			t.Errorf("the honest device was quarantined: %+v", e)
		}
	}
	return q
}

// tstAttackMerged: C holds A's records, B's first two and bMerged, and its
// chains verify with those counts.
func tstAttackMerged(t *testing.T, f *syncAttackFixture, c *syncDevice, bMerged []record) {
	t.Helper()
	wantHashes := syncHashesOf(append(append(append([]record{}, f.a...), f.b[:2]...), bMerged...)...)
	syncWantHashes(t, "C's log", c.hashes(t), wantHashes...)
	rep := c.wantVerifies(t)
	for _, ch := range rep.Chains {
		want := map[string]int{f.idA: 4, f.idB: 2 + len(bMerged)}[ch.Device]
		if ch.Entries != want || ch.Verified != want {
			t.Errorf("C's chain of %s: %d entries, %d verified, want %d", ch.Device, ch.Entries, ch.Verified, want)
		}
	}
}

// tstAttackBranchClean: nothing of the attack is on C's branch (no odd
// path, only regular files), and status and log --unverified show the
// quarantine q.
func tstAttackBranchClean(t *testing.T, c *syncDevice, q []syncQuarantine) {
	t.Helper()
	paths := branchPaths(t, c.dir, c.env)
	for _, p := range paths {
		if strings.Contains(p, "..") || strings.Contains(p, "evil") || strings.Contains(p, "eeeeeeee") {
			t.Errorf("C's branch took %s", p)
		}
	}
	for _, mode := range strings.Fields(gitOut(t, c.dir, c.env, "ls-tree", "-r", "--format=%(objectmode)", memRef)) {
		if mode != "100644" {
			t.Errorf("C's branch holds an entry of mode %s", mode)
		}
	}
	if n := syncStatusQuarantined(t, c); n != len(q) || n == 0 {
		t.Errorf("status --json: quarantined %d, log --unverified lists %d", n, len(q))
	}
	if txt := c.must(t, "status"); !strings.Contains(txt, "Unverified:") {
		t.Errorf("status does not show the unverified records:\n%s", txt)
	}
	if txt := c.must(t, "log", "--unverified"); !strings.Contains(txt, "REJECTED device") {
		t.Errorf("log --unverified:\n%s", txt)
	}
}

// tstAttackAlteredSummary publishes the attack "altered summary".
func tstAttackAlteredSummary(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	p := f.cpPath(f.b[2].Hash)
	old := at.file(t, p)
	bad := strings.Replace(old, `"summary": "b3 victim, new"`, `"summary": "b3 victim, new; also: rm -rf /"`, 1)
	if bad == old {
		t.Fatalf("setup: summary not found in %s", old)
	}
	at.publish(t, fileEdit{path: p, content: bad})
	return []syncWantQ{{f.idB, []string{"hash_mismatch"}, f.b[2].Hash}}
}

// tstAttackAlteredSignature publishes the attack "altered signature".
func tstAttackAlteredSignature(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	p := f.cpPath(f.b[2].Hash)
	old := at.file(t, p)
	i := strings.Index(old, `"sig": "`) + len(`"sig": "`)
	if i < len(`"sig": "`) {
		t.Fatalf("setup: no sig in %s", old)
	}
	flip := "0"
	if old[i] == '0' {
		flip = "1"
	}
	at.publish(t, fileEdit{path: p, content: old[:i] + flip + old[i+1:]})
	return []syncWantQ{{f.idB, []string{"bad_signature"}, f.b[2].Hash}}
}

// tstAttackRemovedRecord publishes the attack "record removed from the middle".
func tstAttackRemovedRecord(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	lines := at.chainLines(t, f.idB)
	if len(lines) != 5 || !strings.Contains(lines[3], f.b[3].Hash) {
		t.Fatalf("setup: B's chain %q", lines)
	}
	chain := strings.Join(append(append([]string{}, lines[:3]...), lines[4]), "")
	at.publish(t, fileEdit{path: f.chainPath(f.idB), content: chain},
		fileEdit{path: f.cpPath(f.b[3].Hash), remove: true})
	return []syncWantQ{{f.idB, []string{"broken_chain", "missing_checkpoint"}, ""}}
}

// tstAttackSwappedLines publishes the attack "two chain lines swapped".
func tstAttackSwappedLines(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	lines := at.chainLines(t, f.idB)
	lines[2], lines[3] = lines[3], lines[2]
	at.publish(t, fileEdit{path: f.chainPath(f.idB), content: strings.Join(lines, "")})
	return []syncWantQ{{f.idB, []string{"broken_chain"}, f.b[3].Hash}}
}

// tstAttackReplacedKey publishes the attack "replaced device key".
func tstAttackReplacedKey(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	at.publish(t, fileEdit{path: "devices/" + f.idB + ".pub", content: newPublicKeyPEM(t)})
	return []syncWantQ{
		{f.idB, []string{"key_changed"}, "devices/" + f.idB + ".pub"},
		{f.idB, []string{"key_changed"}, ""},
	}
}

// tstAttackOtherDevicesKey publishes the attack "record signed with another device's key".
func tstAttackOtherDevicesKey(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	// A home that signs as B with A's private key, on a scratch
	// branch that claims A's key is B's.
	home := at.s.ctxHome("forger")
	if err := os.MkdirAll(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	key := readFile(t, filepath.Join(f.root, "ctxhome-A", "keys", f.idA+".key"))
	if err := os.WriteFile(filepath.Join(home, "keys", f.idB+".key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "device-id"), []byte(f.idB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	honest := gitOut(t, at.attacker, at.env, "rev-parse", memRef)
	gitOut(t, at.attacker, at.env, "config", "ctx.repoId", f.repoID)
	rewriteBranch(t, at.attacker, at.env, "scratch", fileEdit{path: "devices/" + f.idB + ".pub", content: at.file(t, "devices/"+f.idA+".pub")})
	evil := checkpoint(t, at.attacker, withEnv(at.env, "GIT_CTX_HOME="+home), "-m", "b6 forged by the attacker")
	if evil.Device != f.idB || evil.Parent != f.b[4].Hash {
		t.Fatalf("setup: forged record %+v", evil)
	}
	chain, file := at.file(t, f.chainPath(f.idB)), at.file(t, f.cpPath(evil.Hash))
	gitOut(t, at.attacker, at.env, "update-ref", memRef, honest)
	at.publish(t, fileEdit{path: f.chainPath(f.idB), content: chain}, fileEdit{path: f.cpPath(evil.Hash), content: file})
	return []syncWantQ{{f.idB, []string{"bad_signature"}, evil.Hash}}
}

// tstAttackForkedChain publishes the attack "forked chain".
func tstAttackForkedChain(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	// B itself signs a different second record on a copy of its
	// old checkout.
	snap := newSyncDevice(at.s, "B", filepath.Join(at.s.root, "Bsnap"))
	syncCopy(t, f.bSnap, snap.dir)
	syncCopy(t, filepath.Join(f.root, "ctxhome-B"), at.s.ctxHome("B"))
	other := snap.cp(t, "b2 victim, the other continuation")
	if other.Parent != f.b[0].Hash || other.Device != f.idB {
		t.Fatalf("setup: forked record %+v", other)
	}
	edits := []fileEdit{
		{path: f.chainPath(f.idB), content: branchFile(t, snap.dir, snap.env, f.chainPath(f.idB))},
		{path: f.cpPath(other.Hash), content: branchFile(t, snap.dir, snap.env, f.cpPath(other.Hash))},
	}
	for _, r := range f.b[2:] {
		edits = append(edits, fileEdit{path: f.cpPath(r.Hash), remove: true})
	}
	at.publish(t, edits...)
	at.forkHash = other.Hash
	return []syncWantQ{{f.idB, []string{"fork"}, other.Hash}}
}

// tstAttackNameNotHash publishes the attack "file name is not its hash".
func tstAttackNameNotHash(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	p := f.cpPath(f.b[2].Hash)
	fake := f.cpPath(syncOtherHash(f.b[2].Hash))
	at.publish(t, fileEdit{path: p, remove: true}, fileEdit{path: fake, content: at.file(t, p)})
	return []syncWantQ{
		{f.idB, []string{"missing_checkpoint"}, f.b[2].Hash},
		{"", []string{"orphan_file"}, fake},
	}
}

// tstAttackOddPaths publishes the attack "paths outside the layout".
func tstAttackOddPaths(t *testing.T, f *syncAttackFixture, at *syncAttack) []syncWantQ {
	link := "devices/" + f.idA + "-evil.pub"
	gitlink := f.cpPath(strings.Repeat("e", 64))
	at.publishOddTree(t, link, gitlink)
	return []syncWantQ{
		{"", []string{"unsafe_path"}, "../x"},
		{"", []string{"unexpected_path"}, link},
		{"", []string{"unexpected_path"}, gitlink},
	}
}

// publishOddTree adds to the attacker's branch a tree entry ".." holding a
// file x, a symbolic link at link and a gitlink (mode 160000) at gitlink,
// and force-pushes it.
func (at *syncAttack) publishOddTree(t *testing.T, link, gitlink string) {
	t.Helper()
	env, dir := at.env, at.attacker
	old := gitOut(t, dir, env, "rev-parse", memRef)
	idx := filepath.Join(at.s.root, "odd-index")
	ienv := withEnv(env, "GIT_INDEX_FILE="+idx)
	gitOut(t, dir, ienv, "read-tree", old)
	target := strings.TrimSpace(execute(t, dir, env, []byte("/etc/passwd"), "git", "hash-object", "-w", "--stdin").stdout)
	gitOut(t, dir, ienv, "update-index", "--add", "--cacheinfo", "120000,"+target+","+link)
	gitOut(t, dir, ienv, "update-index", "--add", "--cacheinfo", "160000,"+old+","+gitlink)
	tree := gitOut(t, dir, ienv, "write-tree")

	x := strings.TrimSpace(execute(t, dir, env, []byte("escaped\n"), "git", "hash-object", "-w", "--stdin").stdout)
	sub := strings.TrimSpace(execute(t, dir, env, []byte("100644 blob "+x+"\tx\n"), "git", "mktree").stdout)
	entries := gitOut(t, dir, env, "ls-tree", tree) + "\n040000 tree " + sub + "\t..\n"
	r := execute(t, dir, env, []byte(entries), "git", "mktree")
	if r.code != 0 {
		t.Fatalf("git mktree refuses a '..' entry: %s", r)
	}
	root := strings.TrimSpace(r.stdout)
	commit := gitOut(t, dir, env, "commit-tree", root, "-p", old, "-m", "ctx: checkpoint (odd paths)")
	gitOut(t, dir, env, "update-ref", memRef, commit, old)
	if !strings.Contains(gitOut(t, dir, env, "ls-tree", root), "\t..") {
		t.Fatal("setup: the root tree has no '..' entry")
	}
	at.forcePush(t)
	// The remote now really holds each odd entry.
	for _, want := range []string{"120000 blob", "160000 commit"} {
		if !strings.Contains(gitOut(t, at.bare, env, "ls-tree", "-r", memRef), want) {
			t.Fatalf("setup: the remote's branch has no %s entry", want)
		}
	}
}
