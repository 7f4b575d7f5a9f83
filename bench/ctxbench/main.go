// Command ctxbench is git-ctx's benchmark harness. It builds memory branches
// of real signed checkpoints through the real write path, then measures
// operations in process and as whole `git ctx` commands, and prints Markdown
// tables of medians. scripts/bench.sh runs it for docs/PERFORMANCE.md.
//
// # Targets (issue 18, item 8)
//
// Every measurement of one of the targets is also registered as a
// row of docs/PERFORMANCE.md's summary table, as a ratio to a floor
// measured in the same run:
//
//	brRecord(id, figure, floor, detail)
//
// id is a key of brCatalogue (report.go: the item, what is measured, the
// unit, what the floor is, the target in words and the limit it sets on the
// ratio, the figure or the figure's excess over the floor), optionally with
// "@instance", a branch size as brSize(n) makes it ("1.hook-wall@100k") or
// a session size. figure and floor are in the catalogue's unit: seconds,
// bytes, a rate per second, MiB or a plain ratio. detail is short measured
// context for the table ("median of 21", a related figure). A target that
// is not in the catalogue is registered with brAdd(brTarget{…}) and all its
// fields. Met or missed is computed from the numbers (brJudge), never
// passed in.
//
// With -targets FILE each registration appends one JSON line (brTarget,
// plus the load average and time) to FILE, so several ctxbench runs
// (scripts/bench.sh runs one per mode) collect into one file; without it
// brRecord does nothing. `ctxbench -summary FILE` prints the table: one row
// per catalogue instance a full run measures (absent ones say "not measured
// in this run") and per measured row, with the figure, the floor, the
// ratio, the limit, met or missed and, for a miss, the hand-written note
// `<!-- dominates ID: text -->` (by full id, else by catalogue key) from
// bench/performance-intro.md. scripts/bench.sh puts the table in place of the
// intro's `<!-- targets table -->` line.
//
// A new mode: declare its flag in its own file, add one call line to main
// below, call brRecord for each target it measures, and add its ctxbench
// invocation to scripts/bench.sh (both scales).
package main

import (
	"compress/zlib"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/snapshots"
	"github.com/git-ctx/git-ctx/internal/workspace"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

var (
	sizesFlag = flag.String("sizes", "1000,10000,100000", "branch sizes (checkpoints)")
	pullSize  = flag.Int("pull", 10000, "checkpoints in the pull benchmark (0: skip)")
	hookSize  = flag.Int("hook", 10000, "checkpoints on the branch in the commit-hook benchmark (0: skip)")
	snapSize  = flag.Int("snapshot", 10000, "checkpoints on the branch in the snapshot benchmark (0: skip)")
	devices   = flag.Int("devices", 20, "devices the checkpoints are spread over")
	runs      = flag.Int("runs", 15, "repetitions per measurement (median reported)")
	binary    = flag.String("bin", "", "git-ctx binary for whole-command timings (required)")
	work      = flag.String("work", "", "scratch directory (default: a temp dir, removed)")
	rotSize   = flag.Int("rot", 10000, "single appends in the repository-rot check (0: skip)")
	junkSize  = flag.Int("junk", 200000, "rejected paths in the junk-pull benchmark (0: skip)")
	layouts   = flag.String("layouts", "ctx-v1,ghyll-v1", "layouts to measure appends in (the other operations use ctx-v1)")
)

func main() {
	flag.Parse()
	if scryptChildIfAsked() || touchChildIfAsked() || payloadChildIfAsked() || ftsChildIfAsked() {
		return
	}
	if *brSummary != "" {
		brPrintSummary(*brSummary)
		return
	}
	if *binary == "" {
		fatal(fmt.Errorf("-bin is required"))
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "ctxbench")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	isolate(dir)
	if benchExplainIfAsked(dir) {
		return
	}
	if benchStart(dir) || benchVerify(dir) || benchFanout(dir) || benchPullFetch(dir) {
		return
	}
	if *sessBench {
		benchSessions(dir)
		return
	}
	sizes := sizeList(*sizesFlag)
	fmt.Printf("| operation | layout | checkpoints | median | runs |\n|---|---|---:|---:|---:|\n")
	for _, n := range sizes {
		benchSize(dir, gitstore.LayoutCtxV1, n)
	}
	for _, name := range strings.Split(*layouts, ",") {
		if l, err := gitstore.ParseLayout(name); err == nil && l != gitstore.LayoutCtxV1 {
			for _, n := range sizes {
				benchAppendOnly(dir, l, n)
			}
		}
	}
	if *pullSize > 0 {
		benchPull(dir, *pullSize)
	}
	if *hookSize > 0 {
		benchHook(dir, *hookSize)
	}
	benchHookSpools(dir)
	if *snapSize > 0 {
		benchSnapshot(dir, *snapSize)
	}
	if *rotSize > 0 {
		benchRot(dir, *rotSize)
	}
	if *junkSize > 0 {
		benchJunkPull(dir, *junkSize)
	}
	benchStallsIfAsked(dir)
}

// benchJunkPull: an attacker's commit adds n paths outside the layout (one
// small blob at all of them) to a shared remote; a clone holding the honest
// branch (100 checkpoints, cache built) pulls it, rejecting and
// quarantining every path.
func benchJunkPull(dir string, n int) {
	ctx := context.Background()
	src, _ := build(dir, gitstore.LayoutCtxV1, 100)
	bare := filepath.Join(dir, "junk-remote.git")
	os.RemoveAll(bare)
	run(dir, "git", "clone", "-q", "--bare", "--no-local", src, bare)
	run(bare, "git", "fetch", "-q", src, "+refs/heads/ghyll/memory:refs/heads/ghyll/memory")
	victim := filepath.Join(dir, "junk-victim")
	os.RemoveAll(victim)
	run(dir, "git", "clone", "-q", "--no-local", bare, victim)
	run(victim, "git", "fetch", "-q", "origin", "ghyll/memory:ghyll/memory")
	m, err := workspace.Open(ctx, victim)
	if err != nil {
		fatal(err)
	}
	db, err := m.Cache(ctx)
	if err != nil {
		fatal(err)
	}
	db.Close()

	var stream strings.Builder
	stream.WriteString("blob\nmark :1\ndata 5\njunk\n")
	msg := "ctx: checkpoint (nothing to see here)"
	fmt.Fprintf(&stream, "commit refs/heads/ghyll/memory\ncommitter M <m@example.org> 1700000000 +0000\ndata %d\n%s\nfrom refs/heads/ghyll/memory^0\n", len(msg), msg)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&stream, "M 100644 :1 junk/%03d/%06d.json\n", i/1000, i)
	}
	stream.WriteString("done\n")
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir, cmd.Stdin = bare, strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("fast-import: %v\n%s", err, out))
	}

	rr := max(3, *runs/5)
	p := timePulls(ctx, rr, func(i int) string {
		clone := filepath.Join(dir, fmt.Sprintf("junk-clone-%d", i))
		os.RemoveAll(clone)
		run(dir, "cp", "-a", victim, clone)
		return clone
	}, func(res *ctxsync.PullResult) error {
		if len(res.Rejected) != n {
			return fmt.Errorf("junk pull rejected %d of %d paths", len(res.Rejected), n)
		}
		return nil
	})
	op := fmt.Sprintf("pull of one commit adding %d rejected paths (file remote)", n)
	row(op+": total", gitstore.LayoutCtxV1, 100, median(p.total), rr)
	row(op+": fetch", gitstore.LayoutCtxV1, 100, median(p.fetch), rr)
	row(op+": verify (diff and classify)", gitstore.LayoutCtxV1, 100, median(p.verify), rr)
	row(op+": merge commit", gitstore.LayoutCtxV1, 100, median(p.merge), rr)
	row(op+": cache (quarantine)", gitstore.LayoutCtxV1, 100, median(p.cache), rr)
}

// benchRot: n single appends (what n post-commit hooks do) into a fresh
// repository with git's default gc settings, then what `git count-objects
// -v` reports and what `git gc --auto` does about it.
func benchRot(dir string, n int) {
	ctx := context.Background()
	repo := filepath.Join(dir, "rot")
	os.RemoveAll(repo)
	os.MkdirAll(repo, 0o755)
	run(repo, "git", "init", "-q", "-b", "main")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "root")
	run(repo, "git", "config", "ctx.repoId", strings.Repeat("cd", 32))
	run(repo, "git", "config", "gc.auto", "6700") // git's default (the harness turns it off globally)
	m, err := workspace.Open(ctx, repo)
	if err != nil {
		fatal(err)
	}
	if _, err := m.Init(ctx, gitstore.LayoutCtxV1); err != nil {
		fatal(err)
	}
	t := time.Now()
	for i := 0; i < n; i++ {
		if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: fmt.Sprintf("rot check append %d", i)}); err != nil {
			fatal(err)
		}
	}
	total := time.Since(t)
	counts := map[string]string{}
	for _, line := range strings.Split(output(repo, "git", "count-objects", "-v"), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			counts[k] = v
		}
	}
	g := time.Now()
	run(repo, "git", "gc", "--auto", "--quiet")
	gcAuto := time.Since(g)
	layout := gitstore.LayoutCtxV1
	row(fmt.Sprintf("%d single appends in process (mean per append, packing included)", n), layout, n, total/time.Duration(n), 1)
	rowText("`git count-objects -v` after them: loose objects / packs / pack size", layout, n,
		fmt.Sprintf("%s / %s / %s KiB", counts["count"], counts["packs"], counts["size-pack"]), 1)
	row("`git gc --auto` afterwards (gc.auto 6700: nothing to do)", layout, n, gcAuto, 1)
	os.RemoveAll(repo)
}

// benchSnapshot: create (signed) and verify a context snapshot, in process
// and as whole commands, on a branch of n checkpoints.
func benchSnapshot(dir string, n int) {
	ctx := context.Background()
	repo, m := build(dir, gitstore.LayoutCtxV1, n)
	if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: "session for the snapshot", Files: []string{"a.go"}}); err != nil {
		fatal(err)
	}
	var last string
	row("snapshot create, signed (in process)", gitstore.LayoutCtxV1, n, measure(*runs, func() {
		res, err := snapshots.Create(ctx, m, snapshots.CreateOptions{Sign: true})
		if err != nil {
			fatal(err)
		}
		last = res.Snapshot.SnapshotID
	}), *runs)
	row("snapshot verify (in process)", gitstore.LayoutCtxV1, n, measure(*runs, func() {
		if _, _, err := snapshots.Verify(ctx, m, last); err != nil {
			fatal(err)
		}
	}), *runs)
	row("`git ctx snapshot create` (whole command)", gitstore.LayoutCtxV1, n, measure(*runs, func() { gitctx(repo, "snapshot", "create") }), *runs)
	row("`git ctx snapshot verify ID` (whole command)", gitstore.LayoutCtxV1, n, measure(*runs, func() { gitctx(repo, "snapshot", "verify", last[:12]) }), *runs)
}

// benchHook: `git commit` without and with the post-commit hook, on a
// branch of n checkpoints; the git-ctx binary's directory goes on PATH for
// the stub to find it.
func benchHook(dir string, n int) {
	repo, _ := build(dir, gitstore.LayoutCtxV1, n)
	os.Setenv("PATH", filepath.Dir(*binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	i := 0
	commit := func() {
		i++
		os.WriteFile(filepath.Join(repo, "f.txt"), []byte(fmt.Sprint(i)), 0o644)
		run(repo, "git", "add", "f.txt")
		run(repo, "git", "commit", "-q", "-m", fmt.Sprintf("change %d", i))
	}
	commit() // warm up
	without := measure(*runs, commit)
	gitctx(repo, "hooks", "install")
	commit()
	with := measure(*runs, commit)
	row("`git commit` without hooks", gitstore.LayoutCtxV1, n, without, *runs)
	row("`git commit` with the post-commit hook", gitstore.LayoutCtxV1, n, with, *runs)
	row("added by the hook (difference of medians)", gitstore.LayoutCtxV1, n, with-without, *runs)
}

// benchPull: a remote holding n checkpoints from the devices; a fresh clone
// (its own device, initialised) pulls them all over a file remote.
func benchPull(dir string, n int) {
	ctx := context.Background()
	src, _ := build(dir, gitstore.LayoutCtxV1, n) // over -devices (20), as in the issue
	bare := filepath.Join(dir, "pull-remote.git")
	os.RemoveAll(bare)
	run(dir, "git", "clone", "-q", "--bare", "--no-local", src, bare)
	run(bare, "git", "fetch", "-q", src, "+refs/heads/ghyll/memory:refs/heads/ghyll/memory")
	rr := max(3, *runs/5)
	p := timePulls(ctx, rr, func(i int) string {
		clone := filepath.Join(dir, fmt.Sprintf("pull-clone-%d", i))
		os.RemoveAll(clone)
		cloneCodeBranch(dir, bare, clone)
		return clone
	}, func(res *ctxsync.PullResult) error {
		if res.Added != n || len(res.Rejected) != 0 {
			return fmt.Errorf("pull added %d of %d, rejected %d", res.Added, n, len(res.Rejected))
		}
		return nil
	})
	op := fmt.Sprintf("pull %d new checkpoints from %d devices (file remote)", n, *devices)
	row(op+": total", gitstore.LayoutCtxV1, n, median(p.total), rr)
	row(op+": fetch", gitstore.LayoutCtxV1, n, median(p.fetch), rr)
	row(op+": verify (both cores)", gitstore.LayoutCtxV1, n, median(p.verify), rr)
	row(op+": merge commit", gitstore.LayoutCtxV1, n, median(p.merge), rr)
	row(op+": cache (index + quarantine)", gitstore.LayoutCtxV1, n, median(p.cache), rr)
	benchPullCommand(dir, bare, n, rr)

	// Whole-branch verify, and the per-core rate with one core.
	m, err := workspace.Open(ctx, src)
	if err != nil {
		fatal(err)
	}
	for _, procs := range []int{runtime.NumCPU(), 1} {
		prev := runtime.GOMAXPROCS(procs)
		var rep *gitstore.Report
		d := measure(rr, func() {
			var err error
			if rep, err = checkpoints.Verify(ctx, m); err != nil || !rep.OK {
				fatal(fmt.Errorf("verify: %v", err))
			}
		})
		runtime.GOMAXPROCS(prev)
		fmt.Printf("| whole-branch verify, GOMAXPROCS=%d | ctx-v1 | %d | %s (%.0f checkpoints/s) | %d |\n",
			procs, n, fmtDur(d), float64(rep.Verified())/d.Seconds(), rr)
	}
}

// benchPullCommand (item 5): `git ctx pull` as a whole command into a
// fresh clone of bare against its floor, a plain `git fetch` of the same
// ref into another fresh clone, interleaved.
func benchPullCommand(dir, bare string, n, rr int) {
	clone := func(name string) string {
		c := filepath.Join(dir, name)
		os.RemoveAll(c)
		cloneCodeBranch(dir, bare, c)
		return c
	}
	var pulls, fetches []time.Duration
	for i := 0; i < rr; i++ {
		c := clone("pull-cmd")
		t := time.Now()
		gitctx(c, "pull")
		pulls = append(pulls, time.Since(t))
		os.RemoveAll(c)
		c = clone("fetch-cmd")
		t = time.Now()
		run(c, "git", "fetch", "-q", "--no-tags", "origin", "+refs/heads/ghyll/memory:refs/remotes/origin/ghyll/memory")
		fetches = append(fetches, time.Since(t))
		os.RemoveAll(c)
	}
	pm, fm := median(pulls), median(fetches)
	row(fmt.Sprintf("`git ctx pull` of %d new checkpoints (whole command, file remote)", n), gitstore.LayoutCtxV1, n, pm, rr)
	row("floor: plain `git fetch` of the same ref into a fresh clone", gitstore.LayoutCtxV1, n, fm, rr)
	brRecord("5.pull@"+brSize(n), pm.Seconds(), fm.Seconds(), fmt.Sprintf("%d devices, median of %d", *devices, rr))
}

// cloneCodeBranch clones bare's code branch alone into clone, so that the
// memory branch is still to be fetched: a plain clone brings every branch,
// ghyll/memory included, and a `git fetch` of it afterwards transfers
// nothing (the floor this benchmark measured before, 48–89 ms for 10k).
func cloneCodeBranch(dir, bare, clone string) {
	run(dir, "git", "clone", "-q", "--no-local", "--single-branch", bare, clone)
	if out, err := exec.Command("git", "-C", clone, "rev-parse", "-q", "--verify", "refs/remotes/origin/ghyll/memory").Output(); err == nil {
		fatal(fmt.Errorf("clone of the code branch alone holds the memory branch (%s): the pull benchmark's floor would transfer nothing", strings.TrimSpace(string(out))))
	}
}

func isolate(dir string) {
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	cfg := filepath.Join(home, "gitconfig")
	os.WriteFile(cfg, []byte("[user]\n\tname = Bench\n\temail = bench@example.org\n[gc]\n\tauto = 0\n"), 0o644)
	os.Setenv("HOME", home)
	os.Setenv("GIT_CONFIG_GLOBAL", cfg)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CTX_HOME", filepath.Join(dir, "ctxhome"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
}

var words = strings.Fields(`auth token refresh cache session decision migrate schema index query
	router handler retry backoff timeout deadline config parser lexer build release deploy rollback
	feature flag metric trace span logger error panic recover goroutine channel mutex lock queue
	worker pool batch stream buffer encode decode json yaml proto grpc http client server tls cert`)

func summary(r *rand.Rand) string {
	n := 6 + r.IntN(12)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

func output(dir string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("%s %v: %v", name, args, err))
	}
	return string(out)
}

func run(dir string, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("%s %v: %v\n%s", name, args, err, out))
	}
}

// build makes a repository whose memory branch holds n checkpoints spread
// over the devices, written in batches through gitstore.Append, then packed
// as `git gc` would leave it.
//
// The first build of a layout, size and device count is kept in
// dir/pristine and copied by later builds (of this run, or of another
// ctxbench run with the same -work: scripts/bench.sh runs one per mode).
func build(dir string, layout gitstore.Layout, n int) (string, *workspace.Workspace) {
	repo := filepath.Join(dir, fmt.Sprintf("%s-%d", layout, n))
	os.RemoveAll(repo)
	pristine := filepath.Join(dir, "pristine", fmt.Sprintf("%s-%d-%d", layout, n, *devices))
	if _, err := os.Stat(filepath.Join(pristine, ".ready")); err == nil {
		run(dir, "cp", "-a", filepath.Join(pristine, "repo"), repo)
		m, err := workspace.Open(context.Background(), repo)
		if err != nil {
			fatal(err)
		}
		return repo, m
	}
	repo, m := buildNew(repo, layout, n)
	os.RemoveAll(pristine)
	os.MkdirAll(pristine, 0o755)
	run(dir, "cp", "-a", repo, filepath.Join(pristine, "repo"))
	if err := os.WriteFile(filepath.Join(pristine, ".ready"), nil, 0o644); err != nil {
		fatal(err)
	}
	return repo, m
}

// buildNew writes the branch of build into the new repository repo.
func buildNew(repo string, layout gitstore.Layout, n int) (string, *workspace.Workspace) {
	os.MkdirAll(repo, 0o755)
	run(repo, "git", "init", "-q", "-b", "main")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "root")
	run(repo, "git", "config", "ctx.repoId", strings.Repeat("ab", 32))
	ctx := context.Background()
	m, err := workspace.Open(ctx, repo)
	if err != nil {
		fatal(err)
	}
	if _, err := m.Init(ctx, layout); err != nil {
		fatal(err)
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	per := n / *devices
	for d := 0; d < *devices; d++ {
		seed := make([]byte, 32)
		seed[0], seed[1] = byte(d), 0xbe
		dev := gitstore.Device{ID: fmt.Sprintf("bench-dev-%02d", d), Key: ed25519.NewKeyFromSeed(seed)}
		for done := 0; done < per; done += 2000 {
			k := min(2000, per-done)
			drafts := make([]gitstore.Draft, k)
			for i := range drafts {
				drafts[i] = gitstore.Draft{AuthorID: fmt.Sprintf("dev%d@example.org", d), SessionID: fmt.Sprintf("s-%d-%d", d, (done+i)/50),
					Turn: (done+i)%50 + 1, ActiveModel: "claude-sonnet", Summary: summary(r),
					FilesTouched: []string{fmt.Sprintf("pkg/%s/%s.go", words[r.IntN(len(words))], words[r.IntN(len(words))])},
					ToolsUsed:    []string{"Edit", "Bash"}}
			}
			if _, err := m.Store.Append(ctx, gitstore.AppendRequest{RepoID: strings.Repeat("ab", 32), Device: dev, Drafts: drafts}); err != nil {
				fatal(err)
			}
		}
	}
	run(repo, "git", "repack", "-adq")
	run(repo, "git", "prune")
	if _, err := m.Init(ctx, layout); err != nil { // publish the bench identity's key
		fatal(err)
	}
	return repo, m
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func measure(runs int, f func()) time.Duration {
	ds := make([]time.Duration, runs)
	for i := range ds {
		t := time.Now()
		f()
		ds[i] = time.Since(t)
	}
	return median(ds)
}

func row(op string, layout gitstore.Layout, n int, d time.Duration, runs int) {
	fmt.Printf("| %s | %s | %d | %s | %d |\n", op, layout, n, fmtDur(d), runs)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	default:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
}

func gitctx(repo string, args ...string) {
	cmd := exec.Command(*binary, args...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		fatal(fmt.Errorf("git-ctx %v: %v\n%s", args, err, out))
	}
}

func benchSize(dir string, layout gitstore.Layout, n int) {
	ctx := context.Background()
	t0 := time.Now()
	repo, m := build(dir, layout, n)
	fmt.Fprintf(os.Stderr, "built %d checkpoints (%s) in %s\n", n, layout, time.Since(t0).Round(time.Millisecond))

	// Reindex: a full rebuild of the cache from the branch.
	rr := max(3, *runs/5)
	row("reindex (full cache rebuild, in process)", layout, n, measure(rr, func() {
		if err := m.Reindex(ctx); err != nil {
			fatal(err)
		}
	}), rr)

	// One append, in process and as `git ctx checkpoint`.
	row("append one checkpoint (in process: checkpoints.Record)", layout, n, measure(*runs, func() {
		if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: "bench append"}); err != nil {
			fatal(err)
		}
	}), *runs)
	command := measure(*runs, func() { gitctx(repo, "checkpoint", "-m", "bench append") })
	row("`git ctx checkpoint -m …` (whole command)", layout, n, command, *runs)
	benchObjectBytes(repo, layout, n)
	script := benchPlumbingScript(dir, repo, n)
	row("the same append by a plain script of git plumbing (hash-object, ls-tree, mktree, commit-tree, update-ref)", layout, n, script, *runs)
	rowText("ratio: plumbing script ÷ `git ctx checkpoint`", layout, n, fmt.Sprintf("%.1f×", script.Seconds()/command.Seconds()), *runs)

	// Incremental refresh after one new checkpoint (refresh only).
	ds := make([]time.Duration, *runs)
	for i := range ds {
		if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: "bench refresh"}); err != nil {
			fatal(err)
		}
		t := time.Now()
		db, err := m.Cache(ctx)
		if err != nil {
			fatal(err)
		}
		ds[i] = time.Since(t)
		db.Close()
	}
	row("cache refresh after one new checkpoint (in process)", layout, n, median(ds), *runs)

	row("log -n 20 (in process, warm cache)", layout, n, measure(*runs, func() {
		if _, err := checkpoints.Log(ctx, m, checkpoints.Filter{Limit: 20}); err != nil {
			fatal(err)
		}
	}), *runs)
	row("`git ctx log -n 20` (whole command)", layout, n, measure(*runs, func() { gitctx(repo, "log", "-n", "20") }), *runs)
	row("search two words (in process)", layout, n, measure(*runs, func() {
		if _, err := checkpoints.Search(ctx, m, "refresh token", 20, "[", "]"); err != nil {
			fatal(err)
		}
	}), *runs)
	row("`git ctx search refresh token` (whole command)", layout, n, measure(*runs, func() { gitctx(repo, "search", "refresh", "token") }), *runs)
}

// benchAppendOnly measures appends (in process, whole command, bytes) in a
// layout other than ctx-v1.
func benchAppendOnly(dir string, layout gitstore.Layout, n int) {
	ctx := context.Background()
	t0 := time.Now()
	repo, m := build(dir, layout, n)
	fmt.Fprintf(os.Stderr, "built %d checkpoints (%s) in %s\n", n, layout, time.Since(t0).Round(time.Millisecond))
	row("append one checkpoint (in process: checkpoints.Record)", layout, n, measure(*runs, func() {
		if _, err := checkpoints.Record(ctx, m, checkpoints.RecordInput{Summary: "bench append"}); err != nil {
			fatal(err)
		}
	}), *runs)
	row("`git ctx checkpoint -m …` (whole command)", layout, n, measure(*runs, func() {
		gitctx(repo, "checkpoint", "-m", "bench append")
	}), *runs)
	benchObjectBytes(repo, layout, n)
	os.RemoveAll(repo)
}

// benchObjectBytes: on-disk bytes (zlib-compressed loose objects) that one
// `git ctx checkpoint` adds to the object store, median over the runs.
// The floor (item 7) is the part any layout writes: the checkpoint blob and
// the commit.
func benchObjectBytes(repo string, layout gitstore.Layout, n int) {
	sizes := make([]int, *runs)
	counts := make([]int, *runs)
	floors := make([]int, *runs)
	for i := range sizes {
		before := looseObjects(repo)
		gitctx(repo, "checkpoint", "-m", "bench bytes")
		for p, sz := range looseObjects(repo) {
			if _, ok := before[p]; !ok {
				sizes[i] += int(sz)
				counts[i]++
				if t := looseType(repo, p); t == "commit" || (t == "blob" && looseIsRecord(repo, p)) {
					floors[i] += int(sz)
				}
			}
		}
	}
	sort.Ints(sizes)
	sort.Ints(counts)
	sort.Ints(floors)
	rowText("new git objects per append (on-disk bytes, loose)", layout, n,
		fmt.Sprintf("%.1f KiB in %d objects", float64(sizes[len(sizes)/2])/1024, counts[len(counts)/2]), *runs)
	if layout == gitstore.LayoutCtxV1 {
		brRecord("7.bytes@"+brSize(n), float64(sizes[len(sizes)/2]), float64(floors[len(floors)/2]),
			fmt.Sprintf("%d objects, median of %d", counts[len(counts)/2], *runs))
	}
}

// looseInflate returns the start of the inflated loose object id of repo
// (its header, "type size\x00", and up to 64 bytes of content).
func looseInflate(repo, id string) []byte {
	f, err := os.Open(filepath.Join(repo, ".git", "objects", id[:2], id[2:]))
	if err != nil {
		return nil
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return nil
	}
	defer z.Close()
	b, _ := io.ReadAll(io.LimitReader(z, 96))
	return b
}

// looseType is the type of the loose object id ("" when unreadable).
func looseType(repo, id string) string {
	t, _, _ := strings.Cut(string(looseInflate(repo, id)), " ")
	return t
}

// looseIsRecord: the loose blob id is a checkpoint record (a JSON object),
// not a chain segment (lines of {"hash":…,"parent":…,"ts":…}).
func looseIsRecord(repo, id string) bool {
	_, body, _ := strings.Cut(string(looseInflate(repo, id)), "\x00")
	return strings.HasPrefix(body, "{") && !strings.HasPrefix(body, `{"hash":`)
}

// looseObjects lists the loose object files of repo with their sizes.
func looseObjects(repo string) map[string]int64 {
	out := map[string]int64{}
	root := filepath.Join(repo, ".git", "objects")
	dirs, _ := os.ReadDir(root)
	for _, d := range dirs {
		if len(d.Name()) != 2 || !d.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(root, d.Name()))
		for _, f := range files {
			if fi, err := f.Info(); err == nil {
				out[d.Name()+f.Name()] = fi.Size()
			}
		}
	}
	return out
}

// plumbingScript is the append a user would script instead of git-ctx, for
// the ctx-v1 layout: write the record blob, extend the device's last chain
// segment, rebuild the seven trees on the two changed paths with ls-tree
// and mktree, commit and compare-and-swap the ref. It neither signs nor
// hashes the record (the caller passes them) nor rolls segments over, so it
// is a lower bound of such a script's cost.
const plumbingScript = `#!/usr/bin/env bash
# usage: append.sh REPO_ID DEVICE HASH RECORD_FILE
set -euo pipefail
ref=refs/heads/ghyll/memory
tip=$(git rev-parse "$ref")
base=repos/$1
blob=$(git hash-object -w "$4")
# replace TREEISH NAME MODE TYPE ID: print the id of TREEISH with entry NAME set
replace() {
  { git ls-tree "$1" 2>/dev/null | awk -F'\t' -v n="$2" '$2 != n' || true
    printf '%s %s %s\t%s\n' "$3" "$4" "$5" "$2"; } | git mktree
}
fan=${3:0:2}
t_fan=$(replace "$tip:$base/checkpoints/$fan" "$3.json" 100644 blob "$blob")
t_cps=$(replace "$tip:$base/checkpoints" "$fan" 040000 tree "$t_fan")
seg=$(git ls-tree --name-only "$tip:$base/chains/$2/" | tail -n 1)
segblob=$({ git cat-file blob "$tip:$base/chains/$2/$seg"; cat "$4"; echo; } | git hash-object -w --stdin)
t_dev=$(replace "$tip:$base/chains/$2" "$seg" 100644 blob "$segblob")
t_chains=$(replace "$tip:$base/chains" "$2" 040000 tree "$t_dev")
t_base=$(replace "$tip:$base" checkpoints 040000 tree "$t_cps")
t_base=$(replace "$t_base" chains 040000 tree "$t_chains")
t_repos=$(replace "$tip:repos" "$1" 040000 tree "$t_base")
t_root=$(replace "$tip" repos 040000 tree "$t_repos")
commit=$(git commit-tree "$t_root" -p "$tip" -m "ctx: checkpoint ${3:0:12} by $2 (script)")
git update-ref "$ref" "$commit" "$tip"
`

// benchPlumbingScript times plumbingScript on repo (ctx-v1), appending to
// one existing device's chain.
func benchPlumbingScript(dir, repo string, n int) time.Duration {
	script := filepath.Join(dir, "append.sh")
	if err := os.WriteFile(script, []byte(plumbingScript), 0o755); err != nil {
		fatal(err)
	}
	record := filepath.Join(dir, "record.json")
	// The script's records are not a valid chain: put the branch back after.
	tip := strings.TrimSpace(output(repo, "git", "rev-parse", "refs/heads/ghyll/memory"))
	defer run(repo, "git", "update-ref", "refs/heads/ghyll/memory", tip)
	i := 0
	return measure(*runs, func() {
		i++
		body := fmt.Sprintf(`{"author_id":"dev0@example.org","device_id":"bench-dev-00","session_id":"s-script","turn":%d,"summary":"script append %d %s","v":1}`, i, n, strings.Repeat("x", 400))
		sum := sha256.Sum256([]byte(body))
		if err := os.WriteFile(record, []byte(body), 0o644); err != nil {
			fatal(err)
		}
		run(repo, "bash", script, strings.Repeat("ab", 32), "bench-dev-00", hex.EncodeToString(sum[:]), record)
	})
}

// rowText prints a row whose value is not a duration.
func rowText(op string, layout gitstore.Layout, n int, v string, runs int) {
	fmt.Printf("| %s | %s | %d | %s | %d |\n", op, layout, n, v, runs)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ctxbench:", err)
	os.Exit(1)
}

// pullTimes are the phases of timed pulls, one entry per pull.
type pullTimes struct{ total, fetch, verify, merge, cache []time.Duration }

// timePulls runs rr pulls from origin, each into the clone prepare(i)
// makes (removed afterwards), fails the run when check refuses a result,
// and returns the phases' durations.
func timePulls(ctx context.Context, rr int, prepare func(i int) string, check func(*ctxsync.PullResult) error) pullTimes {
	var p pullTimes
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for i := 0; i < rr; i++ {
		clone := prepare(i)
		m, err := workspace.Open(ctx, clone)
		if err != nil {
			fatal(err)
		}
		t := time.Now()
		res, err := ctxsync.Pull(ctx, m, "origin", ctxsync.Options{})
		if err != nil {
			fatal(err)
		}
		p.total = append(p.total, time.Since(t))
		if err := check(res); err != nil {
			fatal(err)
		}
		p.fetch, p.verify = append(p.fetch, ms(res.Durations.Fetch)), append(p.verify, ms(res.Durations.Verify))
		p.merge, p.cache = append(p.merge, ms(res.Durations.Merge)), append(p.cache, ms(res.Durations.Cache))
		os.RemoveAll(clone)
	}
	return p
}
