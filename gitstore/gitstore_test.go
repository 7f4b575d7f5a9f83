package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-ctx/git-ctx/chain"
	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
)

func TestInitAndAppendBothLayouts(t *testing.T) {
	isolate(t)
	for _, layout := range []Layout{LayoutCtxV1, LayoutGhyllV1} {
		t.Run(string(layout), func(t *testing.T) {
			s, dir := newStore(t)
			ctx := context.Background()
			d := device(t, "dev-a", 1)
			first := initAndAppend301(t, ctx, s, d, layout)
			entries := checkLayoutChain(t, s, layout, first)
			checkLayoutPaths(t, dir, layout, entries[7].Hash)
			git(t, dir, "fsck", "--strict", "--no-progress")
			if h := git(t, dir, "rev-parse", "HEAD"); h == "" {
				t.Fatal("HEAD gone")
			}
		})
	}
}

// initAndAppend301 creates the branch in layout (a second Init changes
// nothing), then appends 300 drafts at once and one more; returns the hash
// of the first checkpoint.
func initAndAppend301(t *testing.T, ctx context.Context, s *Store, d Device, layout Layout) string {
	t.Helper()
	res, err := s.Init(ctx, InitOptions{Layout: layout, Device: d})
	if err != nil || !res.Created || !res.Published || res.Layout != layout {
		t.Fatalf("init: %+v %v", res, err)
	}
	again, err := s.Init(ctx, InitOptions{Device: d})
	if err != nil || again.Created || again.Published || again.Tip != res.Tip {
		t.Fatalf("second init changed something: %+v %v", again, err)
	}
	// 300 drafts in one append cross a ctx-v1 segment boundary.
	ar, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(300, "bulk")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "one")}); err != nil {
		t.Fatal(err)
	}
	return ar.Checkpoints[0].Hash
}

// checkLayoutChain: the branch has layout, dev-a's chain of 301 links from
// first, reads back and verifies; returns the chain's entries.
func checkLayoutChain(t *testing.T, s *Store, layout Layout, first string) []checkpoint.ChainEntry {
	t.Helper()
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	if v.Layout != layout {
		t.Fatalf("layout %s", v.Layout)
	}
	entries, err := v.Chain(repoID, "dev-a")
	if err != nil || len(entries) != 301 {
		t.Fatalf("chain: %d %v", len(entries), err)
	}
	if entries[0].Parent != checkpoint.ZeroHash || entries[1].Parent != entries[0].Hash || entries[0].Hash != first {
		t.Fatal("chain does not link")
	}
	cp, err := v.Checkpoint(repoID, entries[300].Hash)
	if err != nil || cp.Summary != "one 0" || cp.Version != layout.Rule().Version() {
		t.Fatalf("read back: %+v %v", cp, err)
	}
	rep, err := v.Verify()
	if err != nil || !rep.OK || rep.Verified() != 301 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	return entries
}

// checkLayoutPaths: the branch holds the paths of its layout (and a
// ghyll-v1 branch no LAYOUT file); sample is one checkpoint's hash.
func checkLayoutPaths(t *testing.T, dir string, layout Layout, sample string) {
	t.Helper()
	paths := git(t, dir, "ls-tree", "-r", "--name-only", BranchRef)
	wantPaths := []string{DeviceKeyPath("dev-a"), "repos/" + repoID + "/checkpoints/" + sample + ".json"}
	if layout == LayoutCtxV1 {
		// A new ctx-v1 branch has two fan-out levels (FORMAT §2.2).
		wantPaths[1] = "repos/" + repoID + "/checkpoints/" + sample[:2] + "/" + sample[2:4] + "/" + sample + ".json"
		if l := git(t, dir, "show", BranchRef+":"+LayoutFile); l != "ctx-v1 fanout=2" {
			t.Fatalf("LAYOUT holds %q", l)
		}
		wantPaths = append(wantPaths, LayoutFile, SegmentPath(repoID, "dev-a", 0), SegmentPath(repoID, "dev-a", 1))
		seg0 := git(t, dir, "show", BranchRef+":"+SegmentPath(repoID, "dev-a", 0))
		if n := strings.Count(seg0, "\n") + 1; n != SegmentLines {
			t.Fatalf("segment 0 has %d lines", n)
		}
	} else {
		wantPaths = append(wantPaths, ChainPath(repoID, "dev-a"))
		if strings.Contains(paths, LayoutFile) {
			t.Fatal("ghyll-v1 branch has a LAYOUT file")
		}
	}
	for _, p := range wantPaths {
		if !strings.Contains(paths, p) {
			t.Errorf("missing %s", p)
		}
	}
}

func TestAppendRewritesOnlyChangedPaths(t *testing.T) {
	s, _, a := initStore(t, "dev-a", InitOptions{})
	ctx := context.Background()
	b := device(t, "dev-b", 2)
	for _, d := range []Device{a, b} {
		if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(3, d.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.View()
	bChain, _ := before.entry(path2(ChainDir(repoID), "dev-b"))
	keyA, _ := before.entry(DeviceKeyPath("dev-a"))
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: a, Drafts: drafts(1, "later")}); err != nil {
		t.Fatal(err)
	}
	after, _ := s.View()
	bChain2, _ := after.entry(path2(ChainDir(repoID), "dev-b"))
	keyA2, _ := after.entry(DeviceKeyPath("dev-a"))
	if bChain.Hash != bChain2.Hash || keyA.Hash != keyA2.Hash {
		t.Fatal("an append by dev-a rewrote dev-b's chain tree or dev-a's key")
	}
	c, err := s.readCommit(after.Commit)
	if err != nil || len(c.ParentHashes) != 1 || c.ParentHashes[0] != before.Commit {
		t.Fatalf("append is not one commit on the old tip: %v", err)
	}
	if !strings.HasPrefix(c.Message, "ctx: checkpoint ") || !strings.Contains(c.Message, "by dev-a (turn 1): later 0") {
		t.Fatalf("message %q", c.Message)
	}
}

func path2(a, b string) string { return a + "/" + b }

func TestEditTreeMatchesGit(t *testing.T) {
	isolate(t)
	s, dir := newStore(t)
	// Names chosen to exercise git's tree order: "a" (dir) sorts as "a/",
	// after "a.b" and "a-c" but before "a0".
	files := map[string][]byte{"a/x": []byte("1"), "a.b": []byte("2"), "a-c": []byte("3"), "a0": []byte("4"), "z/y/w": []byte("5")}
	tree, err := s.treeWith(plumbing.ZeroHash, files)
	if err != nil {
		t.Fatal(err)
	}
	// git's own mktree of the same listing must produce the same id.
	listing := git(t, dir, "ls-tree", tree.String())
	cmd := exec.Command("git", "mktree")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(listing + "\n")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != tree.String() {
		t.Fatalf("mktree gives %s, we wrote %s (%v)", out, tree, err)
	}
	git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
	// A path through a file is refused.
	if _, err := s.treeWith(tree, map[string][]byte{"a0/x": []byte("6")}); err == nil {
		t.Fatal("wrote a path through a file")
	}
	// Names git refuses, or reads as .git, are never written.
	for _, p := range []string{".GIT/x", "a/git~1", "repos/.git. /x", "x/.g\u200cit", "a//b", "../x", ".gitmodules"} {
		if _, err := s.treeWith(tree, map[string][]byte{p: []byte("7")}); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("treeWith(%q) = %v, want ErrUnsafePath", p, err)
		}
	}
}

// TestVerifyReportsUnsafeNames: a tree entry git refuses (written here
// without the tree writer's check) is a verify problem at its path, and a
// device id breaking the read rule or colliding by case is one too.
func TestVerifyReportsUnsafeNames(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{})
	if _, err := s.Append(context.Background(), AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "x")}); err != nil {
		t.Fatal(err)
	}
	good, _ := s.View()
	root, err := s.readTree(good.Root)
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := s.writeBlob([]byte("x"))
	sub, err := s.writeTree([]object.TreeEntry{{Name: "config", Mode: filemode.Regular, Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	entries := append([]object.TreeEntry{}, root.Entries...)
	for i, e := range entries {
		if e.Name == "devices" {
			devs, _ := s.readTree(e.Hash)
			key := devs.Entries[0].Hash
			dt, err := s.writeTree(append(append([]object.TreeEntry{}, devs.Entries...),
				object.TreeEntry{Name: "D.pub", Mode: filemode.Regular, Hash: key},
				object.TreeEntry{Name: "a b.pub", Mode: filemode.Regular, Hash: key}))
			if err != nil {
				t.Fatal(err)
			}
			entries[i].Hash = dt
		}
	}
	entries = append(entries, object.TreeEntry{Name: ".GIT", Mode: filemode.Dir, Hash: sub})
	tree, err := s.writeTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, commitView(t, s, tree, "tamper"))
	// "D" and "d" collide; whichever is listed second is reported.
	want := map[string]string{".GIT": "unsafe path", "devices/d.pub": "only in letter case", "devices/a b.pub": "bad device id"}
	for _, p := range rep.Problems {
		path := strings.Replace(p.Path, "devices/D.pub", "devices/d.pub", 1)
		if w, ok := want[path]; ok && strings.Contains(p.Reason, w) {
			delete(want, path)
		}
	}
	if rep.OK || len(want) > 0 {
		t.Fatalf("verify misses %v: %+v", want, rep.Problems)
	}
}

func TestKeyConflict(t *testing.T) {
	s, _, _ := initStore(t, "same", InitOptions{})
	ctx := context.Background()
	_, err := s.Init(ctx, InitOptions{Device: device(t, "same", 2)})
	if !errors.Is(err, ErrKeyConflict) || !strings.Contains(err.Error(), "ctx.device") {
		t.Fatalf("init: %v", err)
	}
	_, err = s.Append(ctx, AppendRequest{RepoID: repoID, Device: device(t, "same", 2), Drafts: drafts(1, "x")})
	if !errors.Is(err, ErrKeyConflict) {
		t.Fatalf("append: %v", err)
	}
}

// TestAppendRefusesRecordThatWouldNotVerify: a draft whose file would not
// read back as the record that was signed (here an unknown member "Summary",
// which readers refuse as a case variant of a known key) is refused before
// anything is written; text with invalid UTF-8 is made valid and verifies.
func TestAppendRefusesRecordThatWouldNotVerify(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	before, _ := s.Tip()
	bad := drafts(1, "x")
	bad[0].Extra = []checkpoint.Member{{Key: "Summary", Value: []byte(`"forged"`)}}
	_, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: bad})
	if !errors.Is(err, checkpoint.ErrUnencodable) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("append of a record that does not read back: %v", err)
	}
	if after, _ := s.Tip(); after != before {
		t.Fatalf("the branch moved from %s to %s", before, after)
	}
	latin := drafts(1, "caf\xe9")
	res, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: latin})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.View()
	if rep := mustVerify(t, v); !rep.OK || !strings.Contains(res.Checkpoints[0].Summary, "\uFFFD") {
		t.Fatalf("a record from Latin-1 text: %+v %q", rep, res.Checkpoints[0].Summary)
	}
}

func TestNotInitialized(t *testing.T) {
	isolate(t)
	s, _ := newStore(t)
	if _, err := s.View(); !errors.Is(err, ErrNotInitialized) {
		t.Fatal(err)
	}
	_, err := s.Append(context.Background(), AppendRequest{RepoID: repoID, Device: device(t, "d", 1), Drafts: drafts(1, "x")})
	if !errors.Is(err, ErrNotInitialized) {
		t.Fatal(err)
	}
}

func TestCASRefusesMovedRef(t *testing.T) {
	s, dir, _ := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	initTip, _ := s.Tip()
	head := plumbing.NewHash(git(t, dir, "rev-parse", "HEAD"))
	if err := s.casRef(ctx, head, head, "test"); !errors.Is(err, ErrBranchMoved) {
		t.Fatalf("stale old value accepted: %v", err)
	}
	if tip, _ := s.Tip(); tip != initTip {
		t.Fatal("ref moved")
	}
	if err := s.casRef(ctx, plumbing.ZeroHash, head, "test"); !errors.Is(err, ErrBranchMoved) {
		t.Fatalf("create over an existing ref: %v", err)
	}
}

// Goroutines with separate Stores contend like separate processes: every
// append lands on one linear chain.
func TestConcurrentAppends(t *testing.T) {
	s, dir, d := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r, err := gitrepo.Open(ctx, dir)
			if err != nil {
				errs <- err
				return
			}
			st, _ := Open(r)
			for i := 0; i < 8; i++ {
				if _, err := st.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, fmt.Sprintf("w%d", w))}); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, _ := s.View()
	if rep := mustVerify(t, v); !rep.OK || rep.Verified() != 48 {
		t.Fatalf("%+v", rep)
	}
}

func TestVerifyFindsDamage(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{})
	res, err := s.Append(context.Background(), AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(3, "x")})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := s.View()
	second := res.Checkpoints[1]
	edit := func(files map[string][]byte) *Report {
		return mustVerify(t, editView(t, s, good, files, "tamper"))
	}
	raw, _ := good.CheckpointFile(repoID, second.Hash)
	edited := bytes.Replace(raw, []byte(`"x 1"`), []byte(`"x 9"`), 1)
	rep := edit(map[string][]byte{good.CheckpointPath(repoID, second.Hash): edited})
	if rep.OK || rep.Chains[0].Failure == nil || rep.Chains[0].Failure.Reason != chain.HashMismatch || rep.Chains[0].Failure.Hash != second.Hash {
		t.Fatalf("edited summary: %+v", rep.Chains[0].Failure)
	}
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey)
	rep = edit(map[string][]byte{DeviceKeyPath("d"): checkpoint.EncodePublicKey(other)})
	if rep.OK || rep.Chains[0].Failure.Reason != chain.BadSignature || rep.Chains[0].Failure.Index != 0 {
		t.Fatalf("replaced key: %+v", rep.Chains[0].Failure)
	}
	rep = edit(map[string][]byte{"stray.txt": []byte("x")})
	if rep.OK || len(rep.Problems) != 1 || rep.Problems[0].Path != "stray.txt" {
		t.Fatalf("stray file: %+v", rep.Problems)
	}
}

// The ref may live only in packed-refs (after git gc); appends still move it
// with a compare-and-swap, git sees the result, and the reflog records it.
func TestPackedRefAndReflog(t *testing.T) {
	s, dir, d := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(s.refPath()); !os.IsNotExist(err) {
		t.Fatal("ref still loose after pack-refs")
	}
	res, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(2, "p")})
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "rev-parse", BranchRef); got != res.Commit.String() {
		t.Fatalf("git sees %s, want %s", got, res.Commit)
	}
	log := git(t, dir, "reflog", "show", "--format=%H %gs", BranchRef)
	if !strings.Contains(log, res.Commit.String()+" ctx: checkpoint") || strings.Count(log, "\n") != 1 {
		t.Fatalf("reflog:\n%s", log)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}

// A ref lock held by another writer makes us wait, then fail with git's
// advice instead of overwriting; nothing moves.
func TestForeignRefLock(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	initTip, _ := s.Tip()
	if err := os.WriteFile(s.refPath()+".lock", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := s.Append(cctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "x")}); err == nil {
		t.Fatal("appended through a foreign lock")
	}
	if tip, _ := s.Tip(); tip != initTip {
		t.Fatal("ref moved")
	}
	os.Remove(s.refPath() + ".lock")
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "x")}); err != nil {
		t.Fatal(err)
	}
}

// TestIsAncestorMatchesGit compares the in-process ancestry walk (and its
// hand-over to git past ancestorWalkLimit) with `git merge-base
// --is-ancestor` on a history with merges, a second root and a line longer
// than the walk limit.
func TestIsAncestorMatchesGit(t *testing.T) {
	isolate(t)
	s, dir := newStore(t)
	empty := git(t, dir, "mktree")
	commit := func(msg string, parents ...string) string {
		args := []string{"commit-tree", empty, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return git(t, dir, args...)
	}
	root := commit("root")
	a := commit("a", root)
	b := commit("b", root)
	m := commit("merge", a, b)
	other := commit("other root")
	joined := commit("join", m, other)
	long := []string{joined}
	for i := 0; i < ancestorWalkLimit+10; i++ {
		long = append(long, commit(fmt.Sprint("step ", i), long[len(long)-1]))
	}
	tip := long[len(long)-1]
	all := []string{root, a, b, m, other, joined, long[5], long[ancestorWalkLimit], tip}
	for _, x := range all {
		for _, y := range all {
			cmd := exec.Command("git", "merge-base", "--is-ancestor", x, y)
			cmd.Dir = dir
			want := cmd.Run() == nil
			got, err := s.IsAncestor(context.Background(), plumbing.NewHash(x), plumbing.NewHash(y))
			if err != nil {
				t.Fatalf("IsAncestor(%.7s, %.7s): %v", x, y, err)
			}
			if got != want {
				t.Errorf("IsAncestor(%.7s, %.7s) = %v, git says %v", x, y, got, want)
			}
		}
	}
	if found, sure := s.walkForAncestor(plumbing.NewHash(root), plumbing.NewHash(tip)); sure {
		t.Errorf("walk from the long line's tip settled (%v) within the limit", found)
	}
	if found, sure := s.walkForAncestor(plumbing.NewHash(other), plumbing.NewHash(m)); !sure || found {
		t.Errorf("other root vs merge: found=%v sure=%v, want a sure no", found, sure)
	}
}

// A ref lock left behind by a process killed between creating and renaming
// it (kill -9 of git-ctx or git) does not block git-ctx forever: once it is
// older than staleRefLock it is removed and the update goes on. Found by the
// crash tests (integration/crash_test.go); before, every later write waited
// 5 s and failed until someone removed the file by hand.
func TestStaleRefLockRecovered(t *testing.T) {
	s, _, d := initStore(t, "d", InitOptions{})
	ctx := context.Background()
	lock := s.refPath() + ".lock"
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleRefLock)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second) // far less than refLockWait
	defer cancel()
	res, err := s.Append(cctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(1, "after a crash")})
	if err != nil {
		t.Fatalf("append through a stale lock: %v", err)
	}
	if tip, _ := s.Tip(); tip != res.Commit {
		t.Fatal("the ref did not move")
	}
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock still there: %v", err)
	}
}

// TestSignatureClean: a user.name or user.email holding a newline, "<" or
// ">" cannot break the commit header (git fsck --strict: badName).
func TestSignatureClean(t *testing.T) {
	for _, tc := range []struct{ name, email, wantName, wantEmail string }{
		{"B <evil>\nparent 0000", "b@x>\n", "B evilparent 0000", "b@x"},
		{" \t\n", "<>", "git-ctx", "git-ctx@localhost"},
		{"Ann Example", "ann@example.org", "Ann Example", "ann@example.org"},
	} {
		sig := Author{Name: tc.name, Email: tc.email}.signature(time.Unix(0, 0))
		if sig.Name != tc.wantName || sig.Email != tc.wantEmail {
			t.Errorf("signature(%q, %q) = %q <%q>, want %q <%q>", tc.name, tc.email, sig.Name, sig.Email, tc.wantName, tc.wantEmail)
		}
	}
}
