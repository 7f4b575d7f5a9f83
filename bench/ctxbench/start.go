package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-ctx/git-ctx/gitstore"
)

// startSizes selects the start-up benchmark (issue 18, "Fast start"): it
// runs alone and then exits.
var (
	startSizes = flag.String("start", "", "start-up benchmark at these branch sizes (comma-separated checkpoints); runs alone")
	startBase  = flag.String("startbase", "", "with -start: also measure this git-ctx binary (e.g. a build of the commit before), interleaved in the same run")
	startFull  = flag.String("startfull", "", "with -start: also measure `version` of this binary (git-ctx-full: everything linked, as git-ctx was before the lean build), interleaved")
	startFloor = flag.String("startfloor", "", "with -start: the dependency floor, a build of bench/startfloor with the shipped tags (scripts/bench.sh builds it), measured interleaved")
)

// startCmd is one measured command line.
type startCmd struct {
	name string
	bin  string
	args []string
}

// startSample is one whole-command run: wall time and CPU (user+system of
// the process and the children it waited for).
type startSample struct{ wall, cpu time.Duration }

// benchStart measures an empty Go binary's start (the floor, built here
// with the same Go), `git-ctx version`, and the read commands at each
// size, interleaved round-robin so load drift hits all alike. It reports
// medians and each against `version`, and returns whether it ran.
func benchStart(dir string) bool {
	if *startSizes == "" {
		return false
	}
	empty := buildEmpty(dir, "emptymain", "package main\n\nfunc main() {}\n")
	// The same with cgo: dynamically linked against libc, as git-ctx is
	// (mattn/go-sqlite3).
	emptyCgo := buildEmpty(dir, "emptycgo", "package main\n\nimport \"C\"\n\nfunc main() {}\n")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("Start-up, %s, GOMAXPROCS=%d, load average at start: %s\n\n", runtime.Version(), runtime.GOMAXPROCS(0), strings.Join(strings.Fields(string(load))[:3], " "))
	printInitTrace()
	fmt.Printf("| command | checkpoints | median wall | median CPU | wall − version | CPU − version | wall ÷ empty binary | CPU ÷ empty binary | runs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range strings.Split(*startSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			continue
		}
		repo := startRepo(dir, n)
		// A branch grows by single appends: make the tip one (the build
		// writes batches, whose commit messages list every record).
		gitctx(repo, "checkpoint", "-m", "start bench tip")
		var logged []struct{ Hash string }
		if err := json.Unmarshal([]byte(output(repo, *binary, "log", "-n", "1", "--json")), &logged); err != nil || len(logged) == 0 {
			fatal(fmt.Errorf("log --json: %v", err))
		}
		id := logged[0].Hash[:12]
		cmds := []startCmd{
			{"empty Go binary (floor)", empty, nil},
			{"empty Go binary with cgo", emptyCgo, nil},
			{"`git ctx version`", *binary, []string{"version"}},
			{"`git ctx log -n 20`", *binary, []string{"log", "-n", "20"}},
			{"`git ctx status`", *binary, []string{"status"}},
			{"`git ctx show <id>`", *binary, []string{"show", id}},
			{"`git ctx search refresh token`", *binary, []string{"search", "refresh", "token"}},
		}
		if *startBase != "" {
			for _, c := range cmds[2:7] {
				cmds = append(cmds, startCmd{c.name + ", baseline binary", *startBase, c.args})
			}
		}
		// After the baseline's rows (indexes 7–11 stay theirs): the
		// dependency floor (the other modules' packages the lean git-ctx
		// imports: go-git, go-sqlite3, age, blake3, urfave/cli, x/sys,
		// x/term, linked and initialised, nothing else) and the full
		// build's `version`.
		if *startFloor != "" {
			cmds = append(cmds, startCmd{startFloorName, *startFloor, nil})
		}
		if *startFull != "" {
			cmds = append(cmds, startCmd{"`git-ctx-full version` (everything linked)", *startFull, []string{"version"}})
		}
		for _, c := range cmds { // warm the cache and the page cache
			startRun(repo, c.bin, c.args)
		}
		samples := make([][]startSample, len(cmds))
		for i := 0; i < *runs; i++ {
			for j, c := range cmds {
				samples[j] = append(samples[j], startRun(repo, c.bin, c.args))
			}
		}
		floor, ver := startMedian(samples[0]), startMedian(samples[2])
		for j, c := range cmds {
			m := startMedian(samples[j])
			diff, cpuDiff := "—", "—"
			switch {
			case j > 2 && j < 7:
				diff, cpuDiff = fmtDur(m.wall-ver.wall), fmtDur(m.cpu-ver.cpu)
			case j > 7 && j < 12 && *startBase != "": // a baseline read command, against the baseline version
				bv := startMedian(samples[7])
				diff, cpuDiff = fmtDur(m.wall-bv.wall), fmtDur(m.cpu-bv.cpu)
			}
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %.2f× | %.2f× | %d |\n", c.name, n, fmtDur(m.wall), fmtDur(m.cpu), diff, cpuDiff,
				m.wall.Seconds()/floor.wall.Seconds(), m.cpu.Seconds()/floor.cpu.Seconds(), *runs)
		}
		fts := ftsRankingFloor(repo, *runs)
		fmt.Printf("\nFTS5's exact ranking of the search's query alone (bm25 over every match, the best 20; each in a fresh process, the connection's open not counted, median of %d): %s CPU\n\n", *runs, fmtDur(fts))
		startTargets(n, cmds, samples, fts)
	}
	return true
}

// startFloorName is the dependency floor's row.
const startFloorName = "dependency floor (bench/startfloor)"

// buildEmpty compiles the one-file program src as module name with the go
// command on PATH, which must be the Go that built this benchmark, for a
// floor.
func buildEmpty(dir, name, src string) string {
	mod := filepath.Join(dir, name)
	os.MkdirAll(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module "+name+"\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "main.go"), []byte(src), 0o644)
	bin := filepath.Join(dir, name+".bin")
	run(mod, "go", "build", "-o", bin, ".")
	// The floor must come from the Go this harness (and git-ctx) was built with.
	if v := output(mod, "go", "version", bin); !strings.Contains(v, runtime.Version()+" ") && !strings.HasSuffix(strings.TrimSpace(v), runtime.Version()) {
		fatal(fmt.Errorf("floor built with %q, not %s: put that Go first on PATH", strings.TrimSpace(v), runtime.Version()))
	}
	return bin
}

// startRepo is the n-checkpoint benchmark repository, built once and kept
// in the scratch directory (a marker file says it is complete).
func startRepo(dir string, n int) string {
	repo := filepath.Join(dir, fmt.Sprintf("%s-%d", gitstore.LayoutCtxV1, n))
	marker := filepath.Join(dir, fmt.Sprintf("start-%d.ready", n))
	if _, err := os.Stat(marker); err == nil {
		return repo
	}
	t0 := time.Now()
	repo, _ = build(dir, gitstore.LayoutCtxV1, n)
	gitctx(repo, "log", "-n", "1") // the first cache build
	os.WriteFile(marker, nil, 0o644)
	fmt.Fprintf(os.Stderr, "built %d checkpoints in %s\n", n, time.Since(t0).Round(time.Millisecond))
	return repo
}

// startRun runs one command and returns its wall and CPU time. A search
// without hits exits 1; any other failure is fatal.
func startRun(repo, bin string, args []string) startSample {
	cmd := exec.Command(bin, args...)
	cmd.Dir = repo
	t := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t)
	if err != nil {
		fatal(fmt.Errorf("%s %v: %v\n%s", bin, args, err, out))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return startSample{wall: wall, cpu: cpu}
}

func startMedian(s []startSample) startSample {
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	return startSample{wall: median(w), cpu: median(c)}
}

// printInitTrace runs `git-ctx version` with GODEBUG=inittrace=1 a few
// times and prints the median total package-init time and the heaviest
// packages.
func printInitTrace() {
	const tries = 9
	totals := make([]time.Duration, 0, tries)
	per := map[string][]float64{}
	for i := 0; i < tries; i++ {
		cmd := exec.Command(*binary, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			fatal(fmt.Errorf("inittrace: %v\n%s", err, out))
		}
		var total float64
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 6 || f[0] != "init" {
				continue
			}
			ms, err := strconv.ParseFloat(f[4], 64)
			if err != nil {
				continue
			}
			total += ms
			per[f[1]] = append(per[f[1]], ms)
		}
		totals = append(totals, time.Duration(total*float64(time.Millisecond)))
	}
	type pkg struct {
		name string
		ms   float64
	}
	var pkgs []pkg
	for name, v := range per {
		sort.Float64s(v)
		pkgs = append(pkgs, pkg{name, v[len(v)/2]})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ms > pkgs[j].ms })
	var top []string
	for _, p := range pkgs[:min(8, len(pkgs))] {
		top = append(top, fmt.Sprintf("%s %.2f ms", p.name, p.ms))
	}
	fmt.Printf("`git ctx version` package init (GODEBUG=inittrace=1, median of %d): %s in %d packages; heaviest: %s\n\n",
		tries, fmtDur(median(totals)), len(pkgs), strings.Join(top, ", "))
}

// startTargets registers item 3's targets (report.go) from one size's
// samples: `version` against the empty Go binary, each read command's CPU
// against `version`'s, and search's against `version` and fts (its
// ranking's floor, ftsRankingFloor).
func startTargets(n int, cmds []startCmd, samples [][]startSample, fts time.Duration) {
	floor, ver := startMedian(samples[0]), startMedian(samples[2])
	detail := fmt.Sprintf("median of %d, interleaved", *runs)
	brRecord("3.version", ver.cpu.Seconds(), floor.cpu.Seconds(), detail+fmt.Sprintf("; cgo empty binary %s", fmtDur(startMedian(samples[1]).cpu)))
	brRecord("3.version-wall", ver.wall.Seconds(), floor.wall.Seconds(), detail)
	for j, c := range cmds {
		if c.name == startFloorName {
			dep := startMedian(samples[j])
			brRecord("3.version-deps", ver.cpu.Seconds(), dep.cpu.Seconds(), detail+fmt.Sprintf("; the floor is %.2f× the empty binary", dep.cpu.Seconds()/floor.cpu.Seconds()))
		}
	}
	for j, id := range []string{"3.log", "3.status", "3.show", "3.search"} {
		m := startMedian(samples[3+j])
		brRecord(id+"@"+brSize(n), m.cpu.Seconds(), ver.cpu.Seconds(), fmt.Sprintf("wall %s, `version` %s", fmtDur(m.wall), fmtDur(ver.wall)))
		if id == "3.search" {
			// Beside the floor: search less `log -n 20`, the read command
			// that shares everything with it but the ranking.
			logCPU := startMedian(samples[3]).cpu
			brRecord("3.search-fts@"+brSize(n), m.cpu.Seconds(), (ver.cpu + fts).Seconds(), fmt.Sprintf("`version` %s + FTS5's ranking %s; search − `log -n 20` %s", fmtDur(ver.cpu), fmtDur(fts), fmtDur(m.cpu-logCPU)))
		}
	}
}
