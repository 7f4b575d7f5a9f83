package integration

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	ckpt "github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// A memory branch as ghyll's own library writes it (witlox/ghyll, the
// memory package: InitBranch, WriteCheckpoint, CommitAndPush; reference
// checkpoint-format.md §6.2, §7.1, §8, §10.2), built here with git
// plumbing only: an init commit holding only devices/.gitkeep, then
// "checkpoint by <device>" commits adding the device's PEM key, its
// checkpoint files (v 2, ghyll's code rule, signed with a real ed25519
// key) and its one chain file, in which every session starts a new root
// and later records link to their session's latest record; compaction
// records (session "") link to the session's latest record too and are
// continued by nothing.

// grDevice is one ghyll installation: a hostname device id and its key.
type grDevice struct {
	id    string
	key   ed25519.PrivateKey
	chain string // the chain file as written so far
}

// grSession is one ghyll session of a device: its id and latest record.
type grSession struct {
	dev  *grDevice
	id   string
	head string // the session's latest record ("" before the first)
	turn int
}

// grBranch writes ghyll's branch into the repository dir, commit by commit.
type grBranch struct {
	dir      string
	env      []string
	repoHash string // repos/<repoHash>/: SHA-256 of the exact origin URL
	tip      string
	ts       int64
	pending  []fileEdit
	written  map[string]ckpt.ChainEntry // by hash
}

// grNewBranch writes ghyll's init commit ("init: device <id>", only
// devices/.gitkeep, by ghyll <ghyll@local>) in dir, whose checkpoints go
// under repoHash.
func grNewBranch(t *testing.T, dir string, env []string, repoHash, device string) *grBranch {
	t.Helper()
	b := &grBranch{dir: dir, env: withEnv(env, "GIT_AUTHOR_NAME=ghyll", "GIT_AUTHOR_EMAIL=ghyll@local",
		"GIT_COMMITTER_NAME=ghyll", "GIT_COMMITTER_EMAIL=ghyll@local"), repoHash: repoHash,
		ts: 1764460800000000000, written: map[string]ckpt.ChainEntry{}}
	idx := filepath.Join(t.TempDir(), "index")
	ienv := withEnv(b.env, "GIT_INDEX_FILE="+idx)
	blob := gitOut(t, dir, ienv, "hash-object", "-w", "--stdin") // empty stdin: the empty blob
	gitOut(t, dir, ienv, "update-index", "--add", "--cacheinfo", "100644,"+blob+",devices/.gitkeep")
	tree := gitOut(t, dir, ienv, "write-tree")
	b.tip = gitOut(t, dir, b.env, "commit-tree", tree, "-m", "init: device "+device)
	gitOut(t, dir, b.env, "update-ref", memRef, b.tip, "")
	return b
}

// grNewDevice is a ghyll device with a fresh key.
func grNewDevice(t *testing.T, id string) *grDevice {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &grDevice{id: id, key: key}
}

// publicPEM is the device's key as ghyll writes devices/<id>.pub: a PEM
// block "ED25519 PUBLIC KEY" around the raw 32 bytes.
func (d *grDevice) publicPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "ED25519 PUBLIC KEY", Bytes: d.key.Public().(ed25519.PublicKey)}))
}

// session starts a session of d (ghyll's id: <device>-<start ns>).
func (b *grBranch) session(d *grDevice) *grSession {
	b.ts += 1000
	return &grSession{dev: d, id: fmt.Sprintf("%s-%d", d.id, b.ts)}
}

// grRecord makes one record as ghyll's createCheckpoint does (v 2, author =
// device, repo and branch empty, emb/files/tools nil, hash under ghyll's
// code rule, sig over the hash's hex) and returns its file and chain line.
func grRecord(t *testing.T, d *grDevice, parent, session string, turn int, ts int64, summary string) (*ckpt.Checkpoint, []byte) {
	t.Helper()
	if parent == "" {
		parent = ckpt.ZeroHash
	}
	cp := &ckpt.Checkpoint{Version: 2, ParentHash: parent, DeviceID: d.id, AuthorID: d.id, Timestamp: ts,
		SessionID: session, Turn: turn, ActiveModel: "m25", Summary: summary}
	h, err := cp.ComputeHash(ckpt.RuleGhyllV2)
	if err != nil {
		t.Fatal(err)
	}
	cp.Hash, cp.Signature = h, hex.EncodeToString(ed25519.Sign(d.key, []byte(h)))
	file, err := cp.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	return cp, file
}

// write adds a record to the pending commit: its file, and a line appended
// to its device's chain file (ghyll's WriteCheckpoint).
func (b *grBranch) write(t *testing.T, d *grDevice, parent, session string, turn int, summary string) string {
	t.Helper()
	b.ts += 1000
	cp, file := grRecord(t, d, parent, session, turn, b.ts, summary)
	b.pending = append(b.pending, fileEdit{path: ghyllV1CheckpointPath(b.repoHash, cp.Hash), content: string(file)})
	d.chain += fmt.Sprintf("{\"hash\":%q,\"parent\":%q,\"ts\":%d}\n", cp.Hash, cp.ParentHash, cp.Timestamp)
	b.written[cp.Hash] = cp.Entry()
	return cp.Hash
}

// checkpoint writes the session's next interval checkpoint (parent: the
// session's latest record, the zero hash for its first).
func (b *grBranch) checkpoint(t *testing.T, s *grSession) string {
	t.Helper()
	s.turn += 5
	s.head = b.write(t, s.dev, s.head, s.id, s.turn, fmt.Sprintf("turn %d", s.turn))
	return s.head
}

// checkpoints writes the next interval checkpoint of each session in ss,
// in that order (a session named twice gets two).
func (b *grBranch) checkpoints(t *testing.T, ss ...*grSession) {
	t.Helper()
	for _, s := range ss {
		b.checkpoint(t, s)
	}
}

// compaction writes a compaction checkpoint of s: session "", parent the
// session's latest record, which stays the session's latest.
func (b *grBranch) compaction(t *testing.T, s *grSession) string {
	t.Helper()
	return b.write(t, s.dev, s.head, "", s.turn, "## Goal\nkeep the schema\n## Progress\nmigrations <done> & tested")
}

// commit commits what is pending with d's key and chain file, as ghyll's
// CommitAndPush does ("checkpoint by <device>"), on top of the tip.
func (b *grBranch) commit(t *testing.T, d *grDevice) string {
	t.Helper()
	edits := append(b.pending, fileEdit{path: "devices/" + d.id + ".pub", content: d.publicPEM()},
		fileEdit{path: "repos/" + b.repoHash + "/chains/" + d.id + ".jsonl", content: d.chain})
	c, ok := plumbingCommit(t, b.dir, b.env, b.tip, "checkpoint by "+d.id, edits...)
	if !ok {
		t.Fatal("commit-tree refused ghyll's commit")
	}
	gitOut(t, b.dir, b.env, "update-ref", memRef, c, b.tip)
	b.tip, b.pending = c, nil
	return c
}

// push pushes the branch to origin (a fast-forward unless force).
func (b *grBranch) push(t *testing.T, force bool) {
	t.Helper()
	args := []string{"push", "-q", "origin", memRef + ":" + memRef}
	if force {
		args = append(args, "--force")
	}
	gitOut(t, b.dir, b.env, args...)
}

// grWantPulled fails unless d's pull printed no rejection and took n new
// records of each device in want.
func grWantPulled(t *testing.T, d *syncDevice, what, out string, want map[string]int) {
	t.Helper()
	if strings.Contains(out, "reject") || strings.Contains(out, "quarantin") {
		t.Fatalf("%s: the pull rejected something:\n%s", what, out)
	}
	for dev, n := range want {
		syncWantLine(t, what, out, syncPulled(dev, n))
	}
	if q := syncUnverified(t, d); len(q) != 0 {
		t.Fatalf("%s: quarantined %+v", what, q)
	}
}

// grWantLog fails unless d's log lists exactly want, and verify passes with
// every entry of each chain verified.
func grWantLog(t *testing.T, d *syncDevice, what string, want map[string]ckpt.ChainEntry) {
	t.Helper()
	var hashes []string
	for h := range want {
		hashes = append(hashes, h)
	}
	testrepo.WantHashes(t, what+": log", d.hashes(t), hashes...)
	rep := d.wantVerifies(t)
	n := 0
	for _, c := range rep.Chains {
		if c.Verified != c.Entries {
			t.Fatalf("%s: verify: chain of %s verified %d of %d\n%s", what, c.Device, c.Verified, c.Entries, rep.Raw)
		}
		n += c.Entries
	}
	if n != len(want) || rep.Layout != "ghyll-v1" {
		t.Fatalf("%s: verify covers %d entries (layout %s), want %d in ghyll-v1\n%s", what, n, rep.Layout, len(want), rep.Raw)
	}
}

// TestGhyllSessionsMerge: a branch written by ghyll's library — two
// devices, each with two sessions (alice's one after the other with a
// compaction record, bob's interleaved), every session a new root — is
// pulled by a git-ctx clone with no rejection, verifies and is listed
// whole; ghyll's later sessions and records pull incrementally the same
// way. Then a hostile push (a second, validly signed continuation inside
// one of alice's sessions; two of bob's new records reordered) is rejected
// with session_fork and broken_chain, and nothing from the bad record on
// is merged. (Before the ghyll-v1 session rule, the first pull merged each
// device's first session and rejected the rest broken_chain.)
func TestGhyllSessionsMerge(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	g := syncFirstDevice(t, s, rem, "G") // where ghyll runs (its clone of the project)
	origin := g.git(t, "remote", "get-url", "origin")
	repoHash := sha256Hex(strings.TrimSpace(origin)) // ghyll's repo directory (reference §8.2)

	alice, bob := grNewDevice(t, "alice-laptop"), grNewDevice(t, "bob-desktop")
	b := grNewBranch(t, g.dir, g.env, repoHash, alice.id)
	a1 := b.session(alice)
	b.checkpoints(t, a1, a1)
	b.compaction(t, a1)
	b.checkpoint(t, a1)
	b.commit(t, alice)
	b1, b2 := b.session(bob), b.session(bob) // two sessions at once (two worktrees)
	b.checkpoints(t, b1, b2)
	b.commit(t, bob)
	a2 := b.session(alice)
	b.checkpoints(t, a2, a2)
	b.commit(t, alice)
	b.checkpoints(t, b1, b2, b1)
	b.commit(t, bob)
	b.push(t, false)

	// A git-ctx clone adopts the branch: with no REPO file on it, its
	// repository id is ghyll's directory for origin (FORMAT.md §3.4a),
	// found without any configuration.
	c := syncCloneDevice(t, s, rem, "C")
	if got := c.git(t, "remote", "get-url", "origin"); got != origin {
		t.Fatalf("C's origin is %q, ghyll's %q", got, origin)
	}
	out := c.must(t, "pull")
	grWantPulled(t, c, "C's first pull", out, map[string]int{alice.id: 6, bob.id: 5})
	honest := map[string]ckpt.ChainEntry{}
	for h, e := range b.written {
		honest[h] = e
	}
	grWantLog(t, c, "after the first pull", honest)

	// ghyll goes on: a third session of alice (a new root) and records of
	// both of bob's sessions; C pulls them from its local chains on.
	a3 := b.session(alice)
	b.checkpoints(t, a3, a3)
	b.commit(t, alice)
	b.checkpoints(t, b2, b1)
	b.commit(t, bob)
	b.push(t, false)
	out = c.must(t, "pull")
	grWantPulled(t, c, "C's second pull", out, map[string]int{alice.id: 2, bob.id: 2})
	for h, e := range b.written {
		honest[h] = e
	}
	grWantLog(t, c, "after the second pull", honest)

	// Hostile: alice's key signs a second continuation of a3's first
	// record (a fork inside the session), followed by a record on it; bob's
	// two new records are pushed with their chain lines swapped.
	aliceChain := alice.chain
	fork := b.write(t, alice, b.written[a3.head].Parent, a3.id, a3.turn, "turn 15 (the other one)")
	afterFork := b.write(t, alice, fork, a3.id, a3.turn+5, "turn 20 on the fork")
	b.commit(t, alice)
	bobChain := bob.chain
	b6, b7 := b.checkpoint(t, b1), b.checkpoint(t, b1)
	lines := strings.SplitAfter(bob.chain, "\n")
	n := len(lines) - 1 // the last element is "" after the final newline
	lines[n-2], lines[n-1] = lines[n-1], lines[n-2]
	bob.chain = strings.Join(lines, "")
	b.commit(t, bob)
	b.push(t, false)

	r := c.ctx(t, "pull")
	wantCode(t, "C's pull of the hostile push", r, 1)
	syncWantLine(t, "C's pull of the hostile push", r.stdout, fmt.Sprintf("%s: +0 checkpoints, verified; rejected %s: session_fork", alice.id, short12(fork)))
	syncWantLine(t, "C's pull of the hostile push", r.stdout, fmt.Sprintf("%s: +0 checkpoints, verified; rejected %s: broken_chain", bob.id, short12(b7)))
	q := syncUnverified(t, c)
	for _, w := range []syncWantQ{{alice.id, []string{"session_fork"}, fork}, {bob.id, []string{"broken_chain"}, b7}} {
		found := false
		for _, got := range q {
			found = found || syncMatchQ(got, w)
		}
		if !found {
			t.Fatalf("pull did not reject %s's %s with %v:\n%s\nquarantine: %+v", w.device, short12(w.record), w.reasons, r, q)
		}
	}
	grWantLog(t, c, "after the hostile pull", honest)
	for _, h := range []string{fork, afterFork, b6, b7} {
		if _, ok := honest[h]; ok {
			t.Fatalf("a hostile record %s counts as honest", short12(h))
		}
	}
	chains := map[string]string{alice.id: aliceChain, bob.id: bobChain}
	for dev, want := range chains {
		if got := branchFile(t, c.dir, c.env, "repos/"+repoHash+"/chains/"+dev+".jsonl"); got != want {
			t.Fatalf("C's chain of %s changed by the hostile pull:\n%s\nwant\n%s", dev, got, want)
		}
	}
	if strings.Contains(c.must(t, "log"), "on the fork") {
		t.Fatal("log shows a record past the fork")
	}
}

// short12 is the first 12 characters of a hash.
func short12(h string) string { return h[:min(12, len(h))] }
