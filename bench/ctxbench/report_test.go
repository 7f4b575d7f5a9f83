package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrJudge: met or missed follows from the figure, the floor and the
// catalogue's limit, for each kind of limit.
func TestBrJudge(t *testing.T) {
	cases := []struct {
		t    brTarget
		want bool
	}{
		{brTarget{Figure: 1.2, Floor: 1, Ratio: 1.2, Limit: 1.25, On: brOnRatio}, true},
		{brTarget{Figure: 1.3, Floor: 1, Ratio: 1.3, Limit: 1.25, On: brOnRatio}, false},
		{brTarget{Figure: 1, Floor: 0, Limit: 1.25, On: brOnRatio}, false}, // no floor: cannot be met
		{brTarget{Figure: 0.060, Floor: 0.050, Limit: 0.015, On: brOnExcess}, true},
		{brTarget{Figure: 0.070, Floor: 0.050, Limit: 0.015, On: brOnExcess}, false},
		{brTarget{Figure: 31000, Floor: 40000, Limit: 30000, On: brOnFigure, AtLeast: true}, true},
		{brTarget{Figure: 15000, Floor: 40000, Limit: 30000, On: brOnFigure, AtLeast: true}, false},
		{brTarget{Figure: 100, Floor: 12, Limit: 128, On: brOnFigure}, true},
		{brTarget{Figure: 130, Floor: 12, Limit: 128, On: brOnFigure}, false},
	}
	for i, c := range cases {
		if got := brJudge(c.t); got != c.want {
			t.Errorf("case %d %+v: met %v, want %v", i, c.t, got, c.want)
		}
	}
}

// TestBrSummary: rows registered by brRecord come back in the summary
// table with their computed status and, for a miss, the note of the
// notes file (by full id, else by catalogue key); expected instances
// not measured are listed as such.
func TestBrSummary(t *testing.T) {
	dir := t.TempDir()
	file, notes := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "intro.md")
	os.WriteFile(notes, []byte("x\n<!-- dominates 3.status: counting walks\n  the index -->\n<!-- dominates 1.hook-cpu@1k: sh start -->\n"), 0o644)
	saved := *brTargetsFile
	*brTargetsFile = file
	defer func() { *brTargetsFile = saved }()
	brRecord("3.status@100k", 0.100, 0.040, "") // +60 ms: missed
	brRecord("3.log@100k", 0.050, 0.040, "")    // +10 ms: met
	brRecord("1.hook-cpu@1k", 0.07, 0.05, "")   // 1.4×: missed
	brRecord("7.bytes@10k", 12<<10, 1<<10, "x") // met
	got, err := brReadTargets(file)
	if err != nil || len(got) != 4 {
		t.Fatalf("read back %d rows: %v", len(got), err)
	}
	if got["3.status@100k"].Met || !got["3.log@100k"].Met || got["1.hook-cpu@1k"].Met || !got["7.bytes@10k"].Met {
		t.Fatalf("statuses: %+v", got)
	}
	savedNotes := *brNotes
	*brNotes = notes
	defer func() { *brNotes = savedNotes }()
	out := captureStdout(t, func() { brPrintSummary(file) })
	for _, want := range []string{
		"2 met, 2 missed,",
		"| **missed**, load ", "| counting walks the index |", "| sh start |",
		"`git ctx status`, CPU, 100k | 100.0 ms | 40.0 ms: `git ctx version` | +60.0 ms |",
		"not measured in this run",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- []byte(b.String())
	}()
	f()
	w.Close()
	os.Stdout = saved
	return string(<-done)
}
