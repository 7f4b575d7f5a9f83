package main

// The targets report (issue 18, item 8): every benchmark mode that measures
// one of the targets registers a row through brRecord (see the
// package comment in main.go for the API); rows go to the -targets file as
// JSON lines, one per target instance, and `ctxbench -summary FILE` turns
// them into docs/PERFORMANCE.md's summary table (scripts/bench.sh).
// Met/missed is computed here from the figure, the floor measured in the
// same run and the catalogue's limit, never typed in.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	brTargetsFile = flag.String("targets", "", "append one JSON line per measured issue-18 target to this file (see main.go's comment)")
	brSummary     = flag.String("summary", "", "print the Markdown summary table of the targets in this JSON-lines file (made by -targets) and exit")
	brNotes       = flag.String("notes", "bench/performance-intro.md", "with -summary: the file holding the hand-written \"what dominates\" notes (<!-- dominates ID: text -->)")
	brExpect      = flag.String("expect", "", "with -summary: comma-separated target instances (ID@size) whose absence the table reports, or \"measured\" (none); default: the catalogue's full-scale list")
)

// Units of a target's figure and floor.
const (
	brSeconds = "s"   // a duration in seconds
	brBytes   = "B"   // bytes
	brPerSec  = "/s"  // a rate per second
	brMiB     = "MiB" // memory
	brTimes   = "×"   // a dimensionless ratio
)

// What a target's limit bounds.
const (
	brOnRatio  = "ratio"  // figure ÷ floor ≤ limit
	brOnFigure = "figure" // figure ≤ limit (≥ with AtLeast)
	brOnExcess = "excess" // figure − floor ≤ limit
)

// brTarget is one measured target instance: the row of the summary table.
type brTarget struct {
	ID        string  `json:"id"`   // catalogue key, optionally "@instance" (e.g. "1.hook-wall@100k")
	Item      int     `json:"item"` // the numbered item
	Name      string  `json:"name"`
	Unit      string  `json:"unit"`
	Figure    float64 `json:"figure"`
	Floor     float64 `json:"floor"`
	FloorName string  `json:"floor_name"`
	Ratio     float64 `json:"ratio"` // Figure ÷ Floor (0 when there is no floor)
	Target    string  `json:"target"`
	Limit     float64 `json:"limit"`
	On        string  `json:"on"`
	AtLeast   bool    `json:"at_least,omitempty"`
	Met       bool    `json:"met"`
	Detail    string  `json:"detail,omitempty"` // measured context (runs, other figures)
	Load      string  `json:"load"`
	At        string  `json:"at"`
}

// brSpec is a catalogue entry: everything about a target but its figures.
type brSpec struct {
	Item      int
	Name      string
	Unit      string
	FloorName string
	Target    string
	Limit     float64
	On        string
	AtLeast   bool
	Expect    []string // instances a full run measures ("" for none)
}

// brCatalogue is issue 18's targets (items 1–7). A mode that measures a new
// one adds its line here and calls brRecord.
var brCatalogue = map[string]brSpec{
	"1.hook-wall":            {1, "hooked `git commit`, wall", brSeconds, "the same `git commit` without the hook", "≤ 1.25× the commit without the hook", 1.25, brOnRatio, false, []string{"1k", "100k"}},
	"1.hook-cpu":             {1, "hooked `git commit`, CPU", brSeconds, "the same `git commit` without the hook", "≤ 1.25× the commit without the hook", 1.25, brOnRatio, false, []string{"1k", "100k"}},
	"2.stall-p99":            {2, "hooked `git commit`: p99 ÷ median over consecutive commits", brTimes, "the same for `git commit` without the hook", "p99 ≤ 2× the median (1,000 commits at 100k)", 2, brOnFigure, false, []string{"100k"}},
	"2.stall-max":            {2, "hooked `git commit`: slowest of consecutive commits", brSeconds, "slowest `git commit` without the hook", "no commit over 250 ms (1,000 commits at 100k)", 0.25, brOnFigure, false, []string{"100k"}},
	"3.version":              {3, "`git ctx version`, CPU", brSeconds, "an empty Go binary", "≤ 1.5× an empty Go binary's start", 1.5, brOnRatio, false, []string{""}},
	"3.version-wall":         {3, "`git ctx version`, wall", brSeconds, "an empty Go binary", "≤ 1.5× an empty Go binary's start", 1.5, brOnRatio, false, []string{""}},
	"3.version-deps":         {3, "`git ctx version`, CPU, against its dependencies", brSeconds, "bench/startfloor: only the other modules' packages git-ctx imports (go-git, go-sqlite3, age, blake3, urfave/cli), linked and exiting", "≤ 1.5× (the issue's ratio, over the floor no build of git-ctx can go below)", 1.5, brOnRatio, false, []string{""}},
	"3.log":                  {3, "`git ctx log -n 20`, CPU", brSeconds, "`git ctx version`", "within 15 ms of `version` at 100k", 0.015, brOnExcess, false, []string{"100k"}},
	"3.status":               {3, "`git ctx status`, CPU", brSeconds, "`git ctx version`", "within 15 ms of `version` at 100k", 0.015, brOnExcess, false, []string{"100k"}},
	"3.show":                 {3, "`git ctx show <id>`, CPU", brSeconds, "`git ctx version`", "within 15 ms of `version` at 100k", 0.015, brOnExcess, false, []string{"100k"}},
	"3.search":               {3, "`git ctx search refresh token`, CPU", brSeconds, "`git ctx version`", "within 15 ms of `version` at 100k", 0.015, brOnExcess, false, []string{"100k"}},
	"3.search-fts":           {3, "`git ctx search refresh token`, CPU, against `version` and FTS5's ranking", brSeconds, "`git ctx version` plus FTS5's exact ranking of the same query alone (bm25 over every match, the best 20; same cache, in a fresh process as a command runs it)", "within 15 ms (the issue's margin, over the floor no exact search can go below)", 0.015, brOnExcess, false, []string{"100k"}},
	"4.verify":               {4, "whole-branch `git ctx verify`, checkpoints/s", brPerSec, "ed25519 verification of as many signatures alone, both cores", "≥ 30k checkpoints/s at 100k", 30000, brOnFigure, true, []string{"100k"}},
	"4.reindex":              {4, "`git ctx reindex`, wall", brSeconds, "ed25519 verification of as many signatures alone", "≤ 6 s at 100k", 6, brOnFigure, false, []string{"100k"}},
	"4.rss-verify":           {4, "`git ctx verify`, max RSS", brMiB, "`git ctx version`", "< 128 MiB at 100k", 128, brOnFigure, false, []string{"100k"}},
	"4.rss-reindex":          {4, "`git ctx reindex`, max RSS", brMiB, "`git ctx version`", "< 128 MiB at 100k", 128, brOnFigure, false, []string{"100k"}},
	"4.rss-first":            {4, "first cache build, max RSS", brMiB, "`git ctx version`", "< 128 MiB at 100k", 128, brOnFigure, false, []string{"100k"}},
	"5.pull":                 {5, "`git ctx pull` of new records from 20 devices into a fresh clone, wall", brSeconds, "plain `git fetch` of the same ref", "≤ 1.15× `git fetch`", 1.15, brOnRatio, false, []string{"10k"}},
	"6.session-push":         {6, "`git ctx session push`, CPU", brSeconds, "its scrypt derivations, as many in a fresh process", "≤ 1.2× the scrypt it cannot avoid", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"6.session-pull":         {6, "`git ctx session pull`, CPU", brSeconds, "its scrypt derivations, as many in a fresh process", "≤ 1.2× the scrypt it cannot avoid", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"6.session-push-payload": {6, "`git ctx session push`, CPU, against its scrypt and its payload", brSeconds, "its scrypt derivations in a fresh process, plus the payload in the passes the format needs in bounded memory, in another (read and rewrite the session's paths to a temporary file; read it back for the SHA-256 the envelope carries ahead of the payload; read it again through the age stream to the output)", "≤ 1.2× (the issue's ratio, over the work no implementation can avoid)", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"6.session-pull-payload": {6, "`git ctx session pull`, CPU, against its scrypt and its payload", brSeconds, "its scrypt derivations in a fresh process, plus the payload in one pass in another (read through the age stream, one SHA-256, the paths' rewrite, write)", "≤ 1.2× (the issue's ratio, over the work no implementation can avoid)", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"6.session-list":         {6, "`git ctx session list`, CPU", brSeconds, "its scrypt derivations, as many in a fresh process", "≤ 1.2× the scrypt it cannot avoid", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"6.session-status":       {6, "`git ctx session status`, CPU (no derivation)", brSeconds, "`git ctx version`", "≤ 1.2× `version` (it derives nothing)", 1.2, brOnRatio, false, []string{"1 KiB", "64 MiB"}},
	"7.bytes":                {7, "new git objects per append (ctx-v1)", brBytes, "the checkpoint blob and the commit alone", "≤ 64 KiB per append at 1M", 64 << 10, brOnFigure, false, []string{"10k", "100k", "1M"}},
}

// brSize names a branch size as the catalogue's instances do ("1k", "100k", "1M").
func brSize(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// sizeList reads a flag's comma-separated list of positive sizes
// ("1000,100000"); anything else in it is skipped.
func sizeList(list string) []int {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// brRecord registers one measured target instance: id is a catalogue key,
// optionally "@instance" (a size: brSize(n)); figure and floor are in the
// catalogue's unit (seconds, bytes, per second, MiB, or a ratio) and were
// measured in the same run; detail is free text for the table (runs,
// related figures). Met is computed from the catalogue's limit. Without
// -targets it does nothing.
func brRecord(id string, figure, floor float64, detail string) {
	key, _, _ := strings.Cut(id, "@")
	spec, ok := brCatalogue[key]
	if !ok {
		fatal(fmt.Errorf("brRecord: %q is not in brCatalogue (report.go)", key))
	}
	brAdd(brTarget{ID: id, Item: spec.Item, Name: spec.Name, Unit: spec.Unit, Figure: figure, Floor: floor,
		FloorName: spec.FloorName, Target: spec.Target, Limit: spec.Limit, On: spec.On, AtLeast: spec.AtLeast, Detail: detail})
}

// brAdd registers a fully described target row (for a target that is not
// in the catalogue); Ratio, Met, Load and At are filled in here.
func brAdd(t brTarget) {
	if *brTargetsFile == "" {
		return
	}
	if t.Floor != 0 {
		t.Ratio = t.Figure / t.Floor
	}
	t.Met = brJudge(t)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			t.Load = strings.Join(f[:3], " ")
		}
	}
	t.At = time.Now().UTC().Format("2006-01-02T15:04Z")
	line, err := json.Marshal(t)
	if err != nil {
		fatal(err)
	}
	f, err := os.OpenFile(*brTargetsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		fatal(err)
	}
}

// brJudge: whether t meets its limit.
func brJudge(t brTarget) bool {
	v := t.Figure
	switch t.On {
	case brOnRatio:
		if t.Floor == 0 {
			return false
		}
		v = t.Ratio
	case brOnExcess:
		v = t.Figure - t.Floor
	}
	if t.AtLeast {
		return v >= t.Limit
	}
	return v <= t.Limit
}

// brFmt formats v in unit.
func brFmt(v float64, unit string) string {
	switch unit {
	case brSeconds:
		return fmtDur(time.Duration(v * float64(time.Second)))
	case brBytes:
		return fmt.Sprintf("%.1f KiB", v/1024)
	case brPerSec:
		return fmt.Sprintf("%.0f/s", v)
	case brMiB:
		return fmt.Sprintf("%.1f MiB", v)
	case brTimes:
		return fmt.Sprintf("%.2f×", v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// brNotePattern is a hand-written note in the intro: <!-- dominates ID: text -->.
var brNotePattern = regexp.MustCompile(`(?s)<!--\s*dominates\s+(\S+?):\s*(.*?)\s*-->`)

// brReadNotes returns the notes of path by target id (with or without @instance).
func brReadNotes(path string) map[string]string {
	notes := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return notes
	}
	for _, m := range brNotePattern.FindAllStringSubmatch(string(b), -1) {
		notes[m[1]] = strings.Join(strings.Fields(m[2]), " ")
	}
	return notes
}

// brReadTargets reads the JSON lines of path; a later line for the same id
// replaces an earlier one.
func brReadTargets(path string) (map[string]brTarget, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]brTarget{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var t brTarget
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out[t.ID] = t
	}
	return out, sc.Err()
}

// brInstances is every id the table has a row for: the expected ones (from
// -expect, else the catalogue) and every measured one, in item order.
func brInstances(got map[string]brTarget) []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	switch *brExpect {
	case "measured": // only what this run measured
	case "":
		for key, spec := range brCatalogue {
			for _, inst := range spec.Expect {
				if inst == "" {
					add(key)
				} else {
					add(key + "@" + inst)
				}
			}
		}
	default:
		for _, id := range strings.Split(*brExpect, ",") {
			add(strings.TrimSpace(id))
		}
	}
	for id := range got {
		add(id)
	}
	item := func(id string) (int, string, float64) {
		key, inst, _ := strings.Cut(id, "@")
		it := brCatalogue[key].Item
		if t, ok := got[id]; ok {
			it = t.Item
		}
		return it, key, brSizeValue(inst)
	}
	sort.SliceStable(ids, func(i, j int) bool {
		a, ka, sa := item(ids[i])
		b, kb, sb := item(ids[j])
		if a != b {
			return a < b
		}
		if ka != kb {
			return ka < kb
		}
		return sa < sb
	})
	return ids
}

// brSizeValue orders instances: "1k" < "100k" < "1M"; "1 KiB" < "64 MiB".
func brSizeValue(s string) float64 {
	s = strings.ReplaceAll(s, " ", "")
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"k", 1e3}, {"M", 1e6}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, _ := strconv.ParseFloat(s, 64)
	return v * mult
}

// brLimit says what the limit bounds, in the row's unit.
func brLimit(t brTarget) string {
	op := "≤"
	if t.AtLeast {
		op = "≥"
	}
	switch t.On {
	case brOnRatio:
		return fmt.Sprintf("ratio %s %.2f×", op, t.Limit)
	case brOnExcess:
		return fmt.Sprintf("floor + %s", brFmt(t.Limit, t.Unit))
	}
	return op + " " + brFmt(t.Limit, t.Unit)
}

// brPrintSummary prints the summary table of the targets file.
func brPrintSummary(path string) {
	got, err := brReadTargets(path)
	if err != nil {
		fatal(err)
	}
	notes := brReadNotes(*brNotes)
	met, missed, absent := 0, 0, 0
	var b strings.Builder
	b.WriteString("| item | target | measured | floor (same run) | ratio | limit | status | what dominates |\n|---|---|---:|---|---:|---|---|---|\n")
	for _, id := range brInstances(got) {
		key, inst, _ := strings.Cut(id, "@")
		spec := brCatalogue[key]
		name := spec.Name
		if inst != "" {
			name += ", " + inst
		}
		t, ok := got[id]
		if !ok {
			absent++
			fmt.Fprintf(&b, "| %d | %s | — | %s | — | %s | not measured in this run | |\n", spec.Item, name, spec.FloorName, spec.Target)
			continue
		}
		if t.Name != "" && inst != "" {
			name = t.Name + ", " + inst
		} else if t.Name != "" {
			name = t.Name
		}
		ratio := "—"
		if t.Floor != 0 {
			ratio = fmt.Sprintf("%.2f×", t.Ratio)
		}
		if t.On == brOnExcess {
			ratio = "+" + brFmt(t.Figure-t.Floor, t.Unit)
		}
		status, note := "**met**", ""
		if t.Met {
			met++
		} else {
			missed++
			status = "**missed**"
			if note = notes[id]; note == "" {
				note = notes[key]
			}
			if note == "" {
				note = "(no note in " + *brNotes + ")"
			}
		}
		measured := brFmt(t.Figure, t.Unit)
		if t.Detail != "" {
			measured += " (" + t.Detail + ")"
		}
		floor := t.FloorName
		if t.Floor != 0 {
			floor = brFmt(t.Floor, t.Unit) + ": " + t.FloorName
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s, load %s | %s |\n", t.Item, name, measured, floor, ratio, brLimit(t), status, t.Load, note)
	}
	first, last := "", ""
	for _, t := range got {
		if first == "" || t.At < first {
			first = t.At
		}
		last = max(last, t.At)
	}
	fmt.Printf("%d met, %d missed, %d not measured in this run (rows measured %s – %s UTC).\n\n%s", met, missed, absent, first, last, b.String())
}
