package sync

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
)

// planDevice is one device of a hand-made branch: its key and its chain
// of checkpoints, sealed for real.
type planDevice struct {
	id   string
	key  ed25519.PrivateKey
	repo string
	cps  []*checkpoint.Checkpoint
}

func newPlanDevice(t *testing.T, id string, seed byte, repo string, n int) *planDevice {
	t.Helper()
	d := &planDevice{id: id, key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32)), repo: repo}
	d.extend(t, n, "")
	return d
}

// extend appends n records whose summaries carry tag.
func (d *planDevice) extend(t *testing.T, n int, tag string) *planDevice {
	t.Helper()
	parent := checkpoint.ZeroHash
	if len(d.cps) > 0 {
		parent = d.cps[len(d.cps)-1].Hash
	}
	for i := 0; i < n; i++ {
		seq := len(d.cps)
		cp := &checkpoint.Checkpoint{ParentHash: parent, DeviceID: d.id, RepoRemote: d.repo, Timestamp: int64(1000 + seq), Turn: seq + 1,
			Summary: fmt.Sprintf("%s record %d%s", d.id, seq, tag)}
		if err := cp.Seal(d.key); err != nil {
			t.Fatal(err)
		}
		d.cps = append(d.cps, cp)
		parent = cp.Hash
	}
	return d
}

// fork returns a copy of d sharing its first n records.
func (d *planDevice) fork(n int) *planDevice {
	return &planDevice{id: d.id, key: d.key, repo: d.repo, cps: append([]*checkpoint.Checkpoint(nil), d.cps[:n]...)}
}

// files returns d's key, chain segment and checkpoint files on a ctx-v1
// branch.
func (d *planDevice) files(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{gitstore.DeviceKeyPath(d.id): checkpoint.EncodePublicKey(d.key.Public().(ed25519.PublicKey))}
	var chainFile []byte
	for _, cp := range d.cps {
		b, err := cp.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		out[gitstore.CheckpointPath(d.repo, cp.Hash, gitstore.FanoutOne)] = b
		chainFile = append(chainFile, cp.Entry().MarshalLine()...)
	}
	if len(d.cps) > 0 {
		out[gitstore.SegmentPath(d.repo, d.id, 0)] = chainFile
	}
	return out
}

// branchFiles is a ctx-v1 branch fixed to testRepoID holding devs.
func branchFiles(t *testing.T, devs ...*planDevice) map[string][]byte {
	t.Helper()
	out := map[string][]byte{
		gitstore.LayoutFile: []byte(string(gitstore.LayoutCtxV1) + "\n"),
		gitstore.RepoFile:   []byte(testRepoID + "\n"),
	}
	for _, d := range devs {
		for p, b := range d.files(t) {
			out[p] = b
		}
	}
	return out
}

// planOutcome is what a test checks of a plan.
type planOutcome struct {
	added, forks int
	packages     int
	newKeys      string   // space-separated
	reasons      []string // sorted, one per rejection
}

func outcomeOf(p *plan) planOutcome {
	o := planOutcome{added: p.added, forks: p.forks, packages: p.packages, newKeys: strings.Join(p.newKeys, " ")}
	for _, r := range p.rejected {
		o.reasons = append(o.reasons, r.Reason)
	}
	sort.Strings(o.reasons)
	return o
}

func reasons(rs ...chain.Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, string(r))
	}
	sort.Strings(out)
	return out
}

// TestMakePlanDecisions: what a pull merges of a fetched branch, decided by
// makePlan on real git trees (written through gitstore): what extends a
// chain is taken up to the first bad record, and each kind of bad fetched
// content is rejected with its reason while everything else still merges.
func TestMakePlanDecisions(t *testing.T) {
	w := newPkgWorld(t)
	alice := newPlanDevice(t, "alice", 1, testRepoID, 3)
	bob := newPlanDevice(t, "bob", 2, testRepoID, 2)
	aliceLong := alice.fork(3).extend(t, 2, "")
	mallory := newPlanDevice(t, "mallory", 3, testRepoID, 1)
	tofu := Policy{Mode: TrustTOFU, Trusted: map[string]bool{}, Untrusted: map[string]bool{}}
	base := branchFiles(t, alice, bob)
	// edit returns base plus the files of extra, with changes applied
	// (nil content: the path is dropped).
	edit := func(from map[string][]byte, changes map[string][]byte, extra ...*planDevice) map[string][]byte {
		out := map[string][]byte{}
		for p, b := range from {
			out[p] = b
		}
		for _, d := range extra {
			for p, b := range d.files(t) {
				out[p] = b
			}
		}
		for p, b := range changes {
			if b == nil {
				delete(out, p)
			} else {
				out[p] = b
			}
		}
		return out
	}
	cpPath := func(d *planDevice, i int) string {
		return gitstore.CheckpointPath(d.repo, d.cps[i].Hash, gitstore.FanoutOne)
	}
	cpFile := func(d *planDevice, i int) []byte {
		b, err := d.cps[i].MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tampered := edit(base, map[string][]byte{cpPath(aliceLong, 3): bytes.Replace(cpFile(aliceLong, 3), []byte("record 3"), []byte("record 9"), 1)}, aliceLong)
	stranger := newPlanDevice(t, "stranger", 4, testRepoID, 2)
	keyless := edit(base, map[string][]byte{gitstore.DeviceKeyPath("stranger"): nil}, stranger)
	otherRepo := newPlanDevice(t, "carol", 5, "4444444444444444444444444444444444444444444444444444444444444444", 2)
	badRepo := newPlanDevice(t, "dave", 6, "x..y", 1)
	bigRecord := bytes.Repeat([]byte("x"), checkpoint.MaxFileSize+1)

	cases := []struct {
		name          string
		local, remote map[string][]byte // local nil: no local branch
		pol           Policy
		want          planOutcome
	}{
		{"first pull takes everything", nil, base, tofu, planOutcome{added: 5, newKeys: "alice bob", reasons: reasons()}},
		{"nothing new", base, base, tofu, planOutcome{reasons: reasons()}},
		{"a chain that extends ours", base, edit(base, nil, aliceLong), tofu, planOutcome{added: 2, reasons: reasons()}},
		{"a new device", base, edit(base, nil, mallory), tofu, planOutcome{added: 1, newKeys: "mallory", reasons: reasons()}},
		{"an edited record stops its chain there", base, tampered, tofu, planOutcome{reasons: reasons(chain.HashMismatch)}},
		{"a fork", edit(base, nil, alice.fork(2).extend(t, 1, " (ours)")), base, tofu, planOutcome{forks: 1, reasons: reasons(chain.Fork)}},
		{"a record dropped from the middle", base, edit(base, map[string][]byte{cpPath(aliceLong, 3): nil}, aliceLong), tofu,
			planOutcome{reasons: reasons(chain.MissingCheckpoint)}},
		{"a replaced key", base, edit(base, map[string][]byte{gitstore.DeviceKeyPath("bob"): checkpoint.EncodePublicKey(mallory.key.Public().(ed25519.PublicKey))}), tofu,
			planOutcome{reasons: reasons(chain.KeyChanged)}},
		{"a key that does not parse", base, edit(base, map[string][]byte{gitstore.DeviceKeyPath("mallory"): []byte("not a key")}, mallory), tofu,
			planOutcome{reasons: reasons(chain.BadKey, chain.BadKey)}},
		{"a device the allowlist does not name", base, edit(base, nil, mallory), Policy{Mode: TrustAllowlist, Trusted: map[string]bool{}, Untrusted: map[string]bool{}},
			planOutcome{reasons: reasons(chain.Untrusted, chain.Untrusted)}},
		{"an untrusted device's new records", base, edit(base, nil, aliceLong), Policy{Mode: TrustTOFU, Trusted: map[string]bool{}, Untrusted: map[string]bool{"alice": true}},
			planOutcome{reasons: reasons(chain.Untrusted)}},
		{"a device id that folds onto a pinned one", base, edit(base, nil, newPlanDevice(t, "Alice", 7, testRepoID, 1)), tofu,
			// The id is refused before its chain is read: its records are
			// orphans too.
			planOutcome{reasons: reasons(chain.BadDeviceID, chain.BadDeviceID, chain.OrphanFile)}},
		{"a device id the read rule refuses", base, edit(base, nil, newPlanDevice(t, "nul", 8, testRepoID, 1)), tofu,
			planOutcome{reasons: reasons(chain.BadDeviceID, chain.BadDeviceID, chain.OrphanFile)}},
		{"records without a key on either branch", base, keyless, tofu, planOutcome{reasons: reasons(chain.UnknownKey)}},
		{"a path outside the layout", base, edit(base, map[string][]byte{"notes.txt": []byte("hi\n")}), tofu, planOutcome{reasons: reasons(chain.UnexpectedPath)}},
		{"a checkpoint file no chain names", base, edit(base, map[string][]byte{cpPath(aliceLong, 4): cpFile(aliceLong, 4)}), tofu,
			planOutcome{reasons: reasons(chain.OrphanFile)}},
		{"a record this branch holds, rewritten", base, edit(base, map[string][]byte{cpPath(alice, 1): cpFile(alice, 2)}), tofu,
			planOutcome{reasons: reasons(chain.RewritesRecord)}},
		{"another layout", base, edit(base, map[string][]byte{gitstore.LayoutFile: nil}), tofu, planOutcome{reasons: reasons(chain.LayoutMismatch)}},
		{"a chain segment that does not parse", base, edit(base, map[string][]byte{gitstore.SegmentPath(testRepoID, "bob", 0): []byte("garbage\n")}), tofu,
			planOutcome{reasons: reasons(chain.MalformedChain)}},
		{"a checkpoint file over its limit", base, edit(base, map[string][]byte{cpPath(aliceLong, 3): bigRecord}, aliceLong), tofu,
			planOutcome{reasons: reasons(chain.TooLarge)}},
		{"another repository's directory", base, edit(base, nil, otherRepo), tofu, planOutcome{newKeys: "carol", reasons: reasons(chain.WrongRepo)}},
		{"a directory name that is no repository id", base, edit(base, nil, badRepo), tofu,
			planOutcome{newKeys: "dave", reasons: reasons(chain.BadRepoID, chain.OrphanFile)}},
		{"a package that verifies", base, edit(base, map[string][]byte{gitstore.PackagePath(testRepoID, "auth", "1.0.0"): w.pkg("auth", "1.0.0", "t")}), tofu,
			planOutcome{packages: 1, reasons: reasons()}},
		{"a package that does not parse", base, edit(base, map[string][]byte{gitstore.PackagePath(testRepoID, "auth", "1.0.0"): []byte("{")}), tofu,
			planOutcome{reasons: reasons(chain.MalformedPackage)}},
		{"a package at another version's path", base, edit(base, map[string][]byte{gitstore.PackagePath(testRepoID, "auth", "2.0.0"): w.pkg("auth", "1.0.0", "t")}), tofu,
			planOutcome{reasons: reasons(chain.PathMismatch)}},
		{"a published package rewritten", edit(base, map[string][]byte{gitstore.PackagePath(testRepoID, "auth", "1.0.0"): w.pkg("auth", "1.0.0", "t")}),
			edit(base, map[string][]byte{gitstore.PackagePath(testRepoID, "auth", "1.0.0"): w.pkg("auth", "1.0.0", "other")}), tofu,
			planOutcome{reasons: reasons(chain.PackageConflict)}},
		{"bad content beside good: the good still merges", base, edit(tampered, map[string][]byte{"notes.txt": []byte("hi\n")}, mallory), tofu,
			planOutcome{added: 1, newKeys: "mallory", reasons: reasons(chain.HashMismatch, chain.UnexpectedPath)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var local *gitstore.View
			if c.local != nil {
				local = w.view(c.local)
			}
			remote := w.view(c.remote)
			p, err := makePlan(w.st, local, remote, c.pol, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := outcomeOf(p)
			if got.added != c.want.added || got.forks != c.want.forks || got.packages != c.want.packages || got.newKeys != c.want.newKeys ||
				strings.Join(got.reasons, " ") != strings.Join(c.want.reasons, " ") {
				t.Fatalf("got %+v\nwant %+v\nrejected: %+v", got, c.want, p.rejected)
			}
			if len(p.accepted) != got.added {
				t.Fatalf("%d records accepted, %d added", len(p.accepted), got.added)
			}
		})
	}
}

// TestMakePlanTakesUpToTheFailure: the records of an extension before a bad
// one are merged (their files and the chain up to them), the bad one and
// everything after it are not, and the rejection names the bad record.
func TestMakePlanTakesUpToTheFailure(t *testing.T) {
	w := newPkgWorld(t)
	alice := newPlanDevice(t, "alice", 1, testRepoID, 2)
	long := alice.fork(2).extend(t, 3, "")
	remote := branchFiles(t, long)
	bad := gitstore.CheckpointPath(testRepoID, long.cps[3].Hash, gitstore.FanoutOne)
	remote[bad] = bytes.Replace(remote[bad], []byte("record 3"), []byte("record 8"), 1)
	p, err := makePlan(w.st, w.view(branchFiles(t, alice)), w.view(remote), Policy{Mode: TrustTOFU}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.added != 1 || len(p.rejected) != 1 || p.rejected[0].Record != long.cps[3].Hash || p.rejected[0].Reason != string(chain.HashMismatch) ||
		!strings.Contains(p.rejected[0].Detail, "(entry 4): this record and the 1 after it are not merged") {
		t.Fatalf("added %d, rejected %+v", p.added, p.rejected)
	}
	good := gitstore.CheckpointPath(testRepoID, long.cps[2].Hash, gitstore.FanoutOne)
	if _, ok := p.edits[good]; !ok {
		t.Fatalf("the verified record %s is not in the edits: %v", good, p.edits)
	}
	if _, ok := p.edits[bad]; ok {
		t.Fatal("the bad record is in the edits")
	}
	seg, ok := p.edits[gitstore.SegmentPath(testRepoID, "alice", 0)]
	if !ok {
		t.Fatal("the chain segment is not in the edits")
	}
	b, err := w.st.ReadBlob(seg, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 3 {
		t.Fatalf("merged chain holds %d lines, want 3", n)
	}
	if len(p.devices) != 1 || !p.devices[0].Rejected || p.devices[0].Added != 1 || p.devices[0].Reason != string(chain.HashMismatch) {
		t.Fatalf("device result %+v", p.devices)
	}
}

// view commits files as a branch tree and returns its view.
func (w *pkgWorld) view(files map[string][]byte) *gitstore.View {
	w.t.Helper()
	v, err := w.st.ViewAt(w.commit(nil, files))
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

// TestMakePlanUnsafePath: a fetched path git refuses or a checkout reads as
// .git is rejected unsafe_path before anything reads it, and the rest of
// the fetched branch still merges. (gitstore never writes such a tree: it
// is made with git's own plumbing.)
func TestMakePlanUnsafePath(t *testing.T) {
	w := newPkgWorld(t)
	alice := newPlanDevice(t, "alice", 1, testRepoID, 2)
	local := w.view(branchFiles(t, alice))
	honest := w.commit(nil, branchFiles(t, alice.fork(2).extend(t, 1, "")))
	blob, err := w.st.WriteBlob([]byte("[core]\n\thooksPath = /tmp/evil\n"))
	if err != nil {
		t.Fatal(err)
	}
	mktree := func(entries string) string {
		cmd := exec.Command("git", "mktree")
		cmd.Dir, cmd.Stdin = w.dir, strings.NewReader(entries)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	sub := mktree("100644 blob " + blob.String() + "\tconfig\n")
	root := mktree(w.git("ls-tree", honest.String()) + "\n040000 tree " + sub + "\t.GIT\n")
	commit := w.git("commit-tree", root, "-m", "evil")
	remote, err := w.st.ViewAt(plumbing.NewHash(commit))
	if err != nil {
		t.Fatal(err)
	}
	p, err := makePlan(w.st, local, remote, Policy{Mode: TrustTOFU}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomeOf(p); got.added != 1 || strings.Join(got.reasons, " ") != string(chain.UnsafePath) || p.rejected[0].Record != ".GIT/config" {
		t.Fatalf("got %+v, rejected %+v", got, p.rejected)
	}
	for path := range p.edits {
		if strings.HasPrefix(strings.ToLower(path), ".git") {
			t.Fatalf("%s is in the merge", path)
		}
	}
}
