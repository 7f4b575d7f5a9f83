package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/ed25519"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// The fan-out benchmark (issue 18 item 7): how many bytes of new objects
// one append writes on a ctx-v1 branch of one fan-out level (LAYOUT
// "ctx-v1") and of two (LAYOUT "ctx-v1 fanout=2"), and what a new
// teammate's first pull and first cache build cost on a large branch.
var (
	fanSizes      = flag.String("fanout", "", "only the fan-out benchmark (issue 18 item 7), at these branch sizes (e.g. 10000,100000,1000000); branches are kept in -work and reused")
	fanPullAt     = flag.Int("fanout-pull", 0, "with -fanout: measure a new teammate's first pull and first cache build on a fully signed branch of this size (0: skip)")
	fanPullDepths = flag.String("fanout-pull-depths", "2,1", "with -fanout-pull: the fan-out depths to measure it at")
	fanTreesOnly  = flag.Bool("fanout-trees", false, "with -fanout: build the branches' trees only, without the blobs an append does not read (fanBuildTrees), for 1M-checkpoint trees in minutes")
)

// fanDevices is the team the benchmark's branches are spread over (issue
// 18: "a 50-person team over a few years").
const fanDevices = 50

// fanAppends is how many single appends are measured per branch.
const fanAppends = 15

// benchFanout runs the fan-out benchmark when -fanout is given and reports
// whether it ran.
func benchFanout(dir string) bool {
	if *fanSizes == "" {
		return false
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at start: %s\n\n", strings.TrimSpace(string(load)))
	sizes := sizeList(*fanSizes)
	fmt.Printf("| layout | checkpoints | new objects per append (median, min–max) | floor: record blob + commit | ratio | append in process (median) | what the median append wrote |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, n := range sizes {
		for _, depth := range []int{gitstore.FanoutOne, gitstore.FanoutTwo} {
			var repo string
			if *fanTreesOnly {
				repo = fanBuildTrees(dir, depth, n)
			} else {
				repo = fanBuild(dir, depth, n, false)
			}
			fanAppendRow(repo, depth, n)
		}
	}
	if *fanPullAt > 0 {
		for _, s := range strings.Split(*fanPullDepths, ",") {
			var depth int
			if _, err := fmt.Sscan(s, &depth); err == nil && (depth == gitstore.FanoutOne || depth == gitstore.FanoutTwo) {
				fanPull(dir, depth, *fanPullAt)
			}
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at the end: %s\n", strings.TrimSpace(string(load)))
	return true
}

// fanRepoID is the benchmark branches' repository id.
var fanRepoID = strings.Repeat("cd", 32)

// fanKey is device d's key.
func fanKey(d int) gitstore.Device {
	seed := make([]byte, 32)
	seed[0], seed[1] = byte(d), 0xfa
	return gitstore.Device{ID: fmt.Sprintf("fan-dev-%02d", d), Key: ed25519.NewKeyFromSeed(seed)}
}

// fanBuild makes (or reuses, marked done) a repository whose memory branch
// holds n checkpoints over fanDevices chains at fan-out depth depth,
// written in one commit by `git fast-import`: the tree shape of a branch of
// n records, without n commits of history. With real, every record is
// signed and chained (the branch verifies); without, only device 0's chain
// (the one the append benchmark extends) is, and the other devices hold
// filler files at their hash's path and filler segments of the same line
// count: the same trees, built without signing.
func fanBuild(dir string, depth, n int, real bool) string {
	kind := "shape"
	if real {
		kind = "real"
	}
	repo := filepath.Join(dir, fmt.Sprintf("fan-%s-d%d-%d", kind, depth, n))
	done := repo + ".built"
	if _, err := os.Stat(done); err == nil {
		return repo
	}
	t0 := time.Now()
	os.RemoveAll(repo)
	os.MkdirAll(repo, 0o755)
	run(repo, "git", "init", "-q", "-b", "main")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "root")
	run(repo, "git", "config", "ctx.repoId", fanRepoID)
	run(repo, "git", "config", "ctx.packEvery", "0") // no repack between measured appends
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	msg := fmt.Sprintf("ctx: %d checkpoints (bench, fast-import)\n", n)
	fmt.Fprintf(w, "commit %s\ncommitter Bench <bench@example.org> 1764460800 +0000\ndata %d\n%s", gitstore.BranchRef, len(msg), msg)
	put := func(p string, data []byte) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", p, len(data))
		w.Write(data)
		w.WriteByte('\n')
	}
	put(gitstore.LayoutFile, gitstore.LayoutFileContent(gitstore.LayoutCtxV1, depth))
	put(gitstore.RepoFile, (&gitstore.RepoIDs{ID: fanRepoID}).Marshal())
	for d := 0; d < fanDevices; d++ {
		dev := fanKey(d)
		put(gitstore.DeviceKeyPath(dev.ID), checkpoint.EncodePublicKey(dev.Key.Public().(ed25519.PublicKey)))
	}
	type file struct {
		path string
		data []byte
	}
	files := make(chan file, 4096)
	var wg gosync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := wk; d < fanDevices; d += workers {
				fanChain(d, depth, n/fanDevices, real || d == 0, func(p string, data []byte) { files <- file{p, data} })
			}
		}()
	}
	go func() { wg.Wait(); close(files) }()
	for f := range files {
		put(f.path, f.data)
	}
	fmt.Fprintf(w, "\ndone\n")
	if err := w.Flush(); err != nil {
		fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		fatal(fmt.Errorf("git fast-import: %w", err))
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "built depth %d, %d checkpoints in %s\n", depth, n, time.Since(t0).Round(time.Millisecond))
	return repo
}

// fanChain seals device d's chain of per records (real) or makes per
// filler records, and hands each record file and each full (or the last)
// chain segment to put.
func fanChain(d, depth, per int, real bool, put func(string, []byte)) {
	dev := fanKey(d)
	r := rand.New(rand.NewPCG(uint64(d), uint64(per)))
	parent := checkpoint.ZeroHash
	var seg []byte
	lines, index := 0, 0
	for i := 0; i < per; i++ {
		cp := checkpoint.Checkpoint{ParentHash: parent, DeviceID: dev.ID, AuthorID: fmt.Sprintf("dev%d@example.org", d),
			Timestamp: 1764460800000000000 + int64(i)*1e9, SessionID: fmt.Sprintf("s-%d-%d", d, i/50), Turn: i%50 + 1,
			ActiveModel: "claude-sonnet", Summary: summary(r),
			FilesTouched: []string{fmt.Sprintf("pkg/%s/%s.go", words[r.IntN(len(words))], words[r.IntN(len(words))])},
			ToolsUsed:    []string{"Edit", "Bash"}}
		var body []byte
		if real {
			if err := cp.SealRule(dev.Key, checkpoint.RuleSeedV1); err != nil {
				fatal(err)
			}
			var err error
			if body, err = cp.MarshalFile(); err != nil {
				fatal(err)
			}
		} else {
			sum := sha256.Sum256([]byte(fmt.Sprintf("filler %d %d", d, i)))
			cp.Hash = hex.EncodeToString(sum[:])
			cp.Signature = strings.Repeat("0", 128)
			body = []byte(fmt.Sprintf("{\"filler\": %q, \"summary\": %q}\n", cp.Hash, cp.Summary))
		}
		put(gitstore.CheckpointPath(fanRepoID, cp.Hash, depth), body)
		seg = append(seg, cp.Entry().MarshalLine()...)
		if lines++; lines == gitstore.SegmentLines || i == per-1 {
			put(gitstore.SegmentPath(fanRepoID, dev.ID, index), seg)
			seg, lines = nil, 0
			index++
		}
		parent = cp.Hash
	}
}

// fanAppendRow appends fanAppends single records (device 0, in process)
// to the branch in repo and prints the bytes of the loose objects each
// wrote (zlib-compressed, as on disk), the median append's objects by
// path, and the floor: the record's own blob and the commit.
func fanAppendRow(repo string, depth, n int) {
	ctx := context.Background()
	m, err := workspace.Open(ctx, repo)
	if err != nil {
		fatal(err)
	}
	dev := fanKey(0)
	r := rand.New(rand.NewPCG(7, uint64(n)))
	type sample struct {
		bytes, floor int64
		took         time.Duration
		parts        string
	}
	var samples []sample
	for i := 0; i < fanAppends; i++ {
		before := fanLoose(repo)
		t := time.Now()
		res, err := m.Store.Append(ctx, gitstore.AppendRequest{RepoID: fanRepoID, Device: dev, Drafts: []gitstore.Draft{{
			AuthorID: "dev0@example.org", SessionID: "s-bench", Turn: i + 1, ActiveModel: "claude-sonnet", Summary: summary(r),
			FilesTouched: []string{"pkg/bench/append.go"}, ToolsUsed: []string{"Edit"}}}})
		took := time.Since(t)
		if err != nil {
			fatal(err)
		}
		after := fanLoose(repo)
		names := fanObjectNames(repo, res.Commit.String(), res.Checkpoints[0].Hash, depth)
		s := sample{took: took}
		var parts []string
		for h, size := range after {
			if _, old := before[h]; old {
				continue
			}
			s.bytes += size
			name := names[h]
			if name == "" {
				name = "?" + h[:8]
			}
			if name == "commit" || name == "record blob" {
				s.floor += size
			}
			parts = append(parts, fmt.Sprintf("%s %s", name, fanBytes(size)))
		}
		sort.Strings(parts)
		s.parts = strings.Join(parts, ", ")
		samples = append(samples, s)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i].bytes < samples[j].bytes })
	med := samples[len(samples)/2]
	took := make([]time.Duration, len(samples))
	for i, s := range samples {
		took[i] = s.took
	}
	fmt.Printf("| %s | %d | %s (%s–%s) | %s | %.1f× | %s | %s |\n", gitstore.LayoutName(gitstore.LayoutCtxV1, depth), n,
		fanBytes(med.bytes), fanBytes(samples[0].bytes), fanBytes(samples[len(samples)-1].bytes),
		fanBytes(med.floor), float64(med.bytes)/float64(med.floor), fmtDur(median(took)), med.parts)
	if depth == gitstore.FanoutTwo && n >= 1000000 {
		// 10k and 100k are registered by the main harness (benchLayouts);
		// 1M only exists here.
		brRecord("7.bytes@"+brSize(n), float64(med.bytes), float64(med.floor),
			fmt.Sprintf("new branches (two fan-out levels); one level: see the fan-out table; median of %d appends", len(samples)))
	}
}

// fanLoose lists the loose objects of repo with their sizes on disk.
func fanLoose(repo string) map[string]int64 {
	out := map[string]int64{}
	objs := filepath.Join(repo, ".git", "objects")
	filepath.WalkDir(objs, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			if e != nil && e.IsDir() && p != objs && len(e.Name()) != 2 {
				return filepath.SkipDir // pack/, info/
			}
			return nil
		}
		if info, err := e.Info(); err == nil {
			out[filepath.Base(filepath.Dir(p))+e.Name()] = info.Size()
		}
		return nil
	})
	return out
}

// fanObjectNames names the objects an append of record hash in commit
// can have written: the commit, each directory on the record's path and
// the chain's, the record blob and the chain segment.
func fanObjectNames(repo, commit, hash string, depth int) map[string]string {
	cpPath := gitstore.CheckpointPath(fanRepoID, hash, depth)
	paths := map[string]string{
		"": "root tree", "repos": "repos/", gitstore.RepoDir(fanRepoID): "repos/<id>/",
		gitstore.ChainDir(fanRepoID): "chains/", filepath.Join(gitstore.ChainDir(fanRepoID), fanKey(0).ID): "chains/<device>/",
		cpPath: "record blob",
	}
	for p, label := filepath.Dir(cpPath), "checkpoints/"; ; p = filepath.Dir(p) {
		rel := strings.TrimPrefix(p, gitstore.RepoDir(fanRepoID)+"/checkpoints")
		if rel == p {
			break
		}
		paths[p] = label + strings.Repeat("xx/", strings.Count(rel, "/"))
	}
	out := map[string]string{}
	spec := []string{commit}
	keys := []string{""}
	for p := range paths {
		spec = append(spec, commit+":"+p)
		keys = append(keys, p)
	}
	cmd := exec.Command("git", append([]string{"rev-parse"}, spec...)...)
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("rev-parse: %w", err))
	}
	for i, h := range strings.Fields(string(b)) {
		if i == 0 {
			out[h] = "commit"
			continue
		}
		out[h] = paths[keys[i]]
	}
	// The chain segment: the last file of the device's chain directory.
	cmd = exec.Command("git", "ls-tree", commit+":"+filepath.Join(gitstore.ChainDir(fanRepoID), fanKey(0).ID))
	cmd.Dir = repo
	if b, err := cmd.Output(); err == nil {
		ls := strings.Split(strings.TrimSpace(string(b)), "\n")
		if f := strings.Fields(ls[len(ls)-1]); len(f) >= 3 {
			out[f[2]] = "chain segment"
		}
	}
	return out
}

func fanBytes(n int64) string {
	if n >= 1024 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// fanPull measures, on the fully signed branch of n records at fan-out
// depth depth, a new teammate's first `git ctx pull` (fetch, verify,
// merge, cache), first cache build (`git ctx log -n 1` with no cache) and
// whole-branch verify, beside the floors of the same run: a plain `git
// fetch` of the same ref and `git ctx version`.
func fanPull(dir string, depth, n int) {
	src := fanBuild(dir, depth, n, true)
	fmt.Printf("\n| new teammate, %d checkpoints, %s | wall | CPU | max RSS |\n|---|---:|---:|---:|\n", n, gitstore.LayoutName(gitstore.LayoutCtxV1, depth))
	clone := func(name string) string {
		p := filepath.Join(dir, name)
		os.RemoveAll(p)
		run(dir, "git", "clone", "-q", "--single-branch", "-b", "main", src, p) // main only: ghyll/memory is what is measured
		return p
	}
	floorRepo := clone("fan-mate-floor")
	f := fanChild(floorRepo, "git", "fetch", "-q", "origin", "+"+gitstore.BranchRef+":refs/remotes/origin/ghyll/memory")
	fmt.Printf("| floor: plain `git fetch` of ghyll/memory | %s | %s | %.1f MiB |\n", fmtDur(f.wall), fmtDur(f.cpu), f.rssMiB)
	v := fanChild(floorRepo, *binary, "version")
	fmt.Printf("| floor: `git ctx version` | %s | %s | %.1f MiB |\n", fmtDur(v.wall), fmtDur(v.cpu), v.rssMiB)
	mate := clone("fan-mate")
	p := fanChild(mate, *binary, "pull")
	fmt.Printf("| first `git ctx pull` (fetch, verify, merge, cache) | %s (%.2f× the fetch) | %s | %.1f MiB |\n", fmtDur(p.wall), p.wall.Seconds()/f.wall.Seconds(), fmtDur(p.cpu), p.rssMiB)
	os.RemoveAll(filepath.Join(mate, ".git", "ctx"))
	c := fanChild(mate, *binary, "log", "-n", "1")
	fmt.Printf("| first cache build (`git ctx log -n 1`, no cache) | %s | %s | %.1f MiB |\n", fmtDur(c.wall), fmtDur(c.cpu), c.rssMiB)
	ve := fanChild(mate, *binary, "verify")
	fmt.Printf("| `git ctx verify` (whole branch) | %s | %s | %.1f MiB |\n", fmtDur(ve.wall), fmtDur(ve.cpu), ve.rssMiB)
}

// fanChild runs name args once in dir under /usr/bin/time (so that the
// max RSS is the child's own, not this harness's at the fork): wall time,
// the child's CPU and max RSS.
func fanChild(dir, name string, args ...string) childStats {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "FANTIME %M %U %S", name}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t)
	if err != nil {
		fatal(fmt.Errorf("%s %v: %v\n%s%s", name, args, err, out, stderr.String()))
	}
	st := childStats{wall: wall}
	if _, tail, ok := strings.Cut(stderr.String(), "FANTIME "); ok {
		var kib int64
		var user, sys float64
		if _, err := fmt.Sscan(tail, &kib, &user, &sys); err == nil {
			st.rssMiB, st.cpu = float64(kib)/1024, time.Duration((user+sys)*float64(time.Second))
		}
	}
	return st
}

// fanTreeNode is a directory of a branch fanBuildTrees writes: files by
// name (blob ids) and subdirectories.
type fanTreeNode struct {
	files map[string][20]byte
	dirs  map[string]*fanTreeNode
}

func (t *fanTreeNode) put(p string, blob [20]byte) {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		if t.dirs == nil {
			t.dirs = map[string]*fanTreeNode{}
		}
		if t.dirs[d] == nil {
			t.dirs[d] = &fanTreeNode{}
		}
		t = t.dirs[d]
	}
	if t.files == nil {
		t.files = map[string][20]byte{}
	}
	t.files[parts[len(parts)-1]] = blob
}

// fanObjects writes git objects as loose files and remembers their ids.
type fanObjects struct {
	repo string
	ids  []string
}

func (o *fanObjects) write(kind string, body []byte) [20]byte {
	raw := append([]byte(fmt.Sprintf("%s %d\x00", kind, len(body))), body...)
	id := sha1.Sum(raw)
	h := hex.EncodeToString(id[:])
	p := filepath.Join(o.repo, ".git", "objects", h[:2], h[2:])
	os.MkdirAll(filepath.Dir(p), 0o755)
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o444); err != nil && !os.IsExist(err) {
		fatal(err)
	}
	o.ids = append(o.ids, h)
	return id
}

// tree writes t and its subdirectories (entries in git's order: a
// directory sorts as its name plus "/").
func (o *fanObjects) tree(t *fanTreeNode) [20]byte {
	type ent struct {
		key, mode, name string
		id              [20]byte
	}
	var es []ent
	for name, id := range t.files {
		es = append(es, ent{name, "100644", name, id})
	}
	for name, d := range t.dirs {
		es = append(es, ent{name + "/", "40000", name, o.tree(d)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	var body []byte
	for _, e := range es {
		body = append(body, e.mode+" "+e.name+"\x00"...)
		body = append(body, e.id[:]...)
	}
	return o.write("tree", body)
}

// fanBuildTrees makes (or reuses) a repository whose memory branch has the
// exact trees of a ctx-v1 branch of n checkpoints over fanDevices chains at
// fan-out depth depth, with only the blobs an append reads present
// (LAYOUT, REPO, device 0's key, its last record and last chain segment):
// every other entry names a blob id that is not in the repository. The
// trees are packed (`git pack-objects` of the listed objects). What an
// append writes depends only on these trees, so this measures it at sizes
// where signing and storing every record would take hours on this machine.
func fanBuildTrees(dir string, depth, n int) string {
	repo := filepath.Join(dir, fmt.Sprintf("fan-trees-d%d-%d", depth, n))
	if _, err := os.Stat(repo + ".built"); err == nil {
		return repo
	}
	t0 := time.Now()
	os.RemoveAll(repo)
	os.MkdirAll(repo, 0o755)
	run(repo, "git", "init", "-q", "-b", "main")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "root")
	run(repo, "git", "config", "ctx.repoId", fanRepoID)
	run(repo, "git", "config", "ctx.packEvery", "0")
	o := &fanObjects{repo: repo}
	root := &fanTreeNode{}
	root.put(gitstore.LayoutFile, o.write("blob", gitstore.LayoutFileContent(gitstore.LayoutCtxV1, depth)))
	root.put(gitstore.RepoFile, o.write("blob", (&gitstore.RepoIDs{ID: fanRepoID}).Marshal()))
	fake := func(s string) [20]byte { return sha1.Sum([]byte(s)) }
	per := n / fanDevices
	r := rand.New(rand.NewPCG(3, uint64(n)))
	for d := 0; d < fanDevices; d++ {
		dev := fanKey(d)
		if d == 0 {
			root.put(gitstore.DeviceKeyPath(dev.ID), o.write("blob", checkpoint.EncodePublicKey(dev.Key.Public().(ed25519.PublicKey))))
		} else {
			root.put(gitstore.DeviceKeyPath(dev.ID), fake("key "+dev.ID))
		}
		var seg []byte
		lines, index := 0, 0
		parent := checkpoint.ZeroHash
		for i := 0; i < per; i++ {
			cp := checkpoint.Checkpoint{ParentHash: parent, DeviceID: dev.ID, AuthorID: "dev@example.org",
				Timestamp: 1764460800000000000 + int64(i)*1e9, SessionID: "s", Turn: i%50 + 1, Summary: summary(r)}
			var blob [20]byte
			if d == 0 && i == per-1 {
				if err := cp.SealRule(dev.Key, checkpoint.RuleSeedV1); err != nil {
					fatal(err)
				}
				body, err := cp.MarshalFile()
				if err != nil {
					fatal(err)
				}
				blob = o.write("blob", body)
			} else {
				sum := sha256.Sum256([]byte(fmt.Sprintf("filler %d %d", d, i)))
				cp.Hash, cp.Signature = hex.EncodeToString(sum[:]), strings.Repeat("0", 128)
				blob = fake("record " + cp.Hash)
			}
			root.put(gitstore.CheckpointPath(fanRepoID, cp.Hash, depth), blob)
			seg = append(seg, cp.Entry().MarshalLine()...)
			if lines++; lines == gitstore.SegmentLines || i == per-1 {
				p := gitstore.SegmentPath(fanRepoID, dev.ID, index)
				if d == 0 && i == per-1 {
					root.put(p, o.write("blob", seg))
				} else {
					root.put(p, fake(p))
				}
				seg, lines = nil, 0
				index++
			}
			parent = cp.Hash
		}
	}
	tree := o.tree(root)
	msg := fmt.Sprintf("tree %s\nauthor Bench <bench@example.org> 1764460800 +0000\ncommitter Bench <bench@example.org> 1764460800 +0000\n\nctx: %d checkpoints (bench, trees only)\n", hex.EncodeToString(tree[:]), n)
	commit := o.write("commit", []byte(msg))
	pack := exec.Command("git", "pack-objects", "-q", filepath.Join(repo, ".git", "objects", "pack", "pack"))
	pack.Dir = repo
	pack.Stdin = strings.NewReader(strings.Join(o.ids, "\n") + "\n")
	if out, err := pack.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("pack-objects: %v\n%s", err, out))
	}
	run(repo, "git", "prune-packed")
	run(repo, "git", "update-ref", gitstore.BranchRef, hex.EncodeToString(commit[:]))
	if err := os.WriteFile(repo+".built", nil, 0o644); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "built trees of depth %d, %d checkpoints in %s\n", depth, n, time.Since(t0).Round(time.Millisecond))
	return repo
}
