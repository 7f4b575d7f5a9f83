package pager

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a fixed environment for Options.Getenv.
func env(kv ...string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

var onTerminal = func(io.Writer) bool { return true }

// TestSelect: git's order (GIT_PAGER, core.pager, PAGER, less), empty or
// cat as none, only on a terminal, -P and -p, pager.ctx.
func TestSelect(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"GIT_PAGER first", Options{Pages: true, Getenv: env("GIT_PAGER", "gp", "PAGER", "p"), Config: env("core.pager", "cp")}, "gp"},
		{"core.pager second", Options{Pages: true, Getenv: env("PAGER", "p"), Config: env("core.pager", "cp")}, "cp"},
		{"PAGER third", Options{Pages: true, Getenv: env("PAGER", "p")}, "p"},
		{"less last", Options{Pages: true, Getenv: env()}, "less"},
		{"empty GIT_PAGER is none", Options{Pages: true, Getenv: env("GIT_PAGER", "", "PAGER", "p")}, ""},
		{"empty core.pager is none", Options{Pages: true, Getenv: env("PAGER", "p"), Config: env("core.pager", "")}, ""},
		{"cat is none", Options{Pages: true, Getenv: env("PAGER", "cat")}, ""},
		{"not a paging command", Options{Getenv: env("PAGER", "p")}, ""},
		{"-p pages any command", Options{Mode: Always, Getenv: env("PAGER", "p")}, "p"},
		{"-P", Options{Mode: Never, Pages: true, Getenv: env("PAGER", "p")}, ""},
		{"pager.ctx false", Options{Pages: true, Getenv: env("PAGER", "p"), Config: env("pager.ctx", "false")}, ""},
		{"pager.ctx true pages any command", Options{Getenv: env("PAGER", "p"), Config: env("pager.ctx", "true")}, "p"},
		{"pager.ctx names the pager", Options{Getenv: env("GIT_PAGER", "gp"), Config: env("pager.ctx", "most -s")}, "most -s"},
		{"-p beats pager.ctx false", Options{Mode: Always, Getenv: env("PAGER", "p"), Config: env("pager.ctx", "false")}, "p"},
	}
	for _, c := range cases {
		c.o.Terminal = onTerminal
		if got := Select(io.Discard, c.o); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	o := Options{Pages: true, Mode: Always, Getenv: env("PAGER", "p")}
	if got := Select(&bytes.Buffer{}, o); got != "" {
		t.Errorf("not a terminal: %q, want no pager", got)
	}
	if w, done := Wrap(&bytes.Buffer{}, o); Paging(w) || done() != nil {
		t.Error("Wrap of a non-terminal is not stdout itself")
	}
}

// pagerRun wraps a temporary file (standing for the terminal) with pager
// command, writes text, finishes and returns what reached the file.
func pagerRun(t *testing.T, command string, text string, extra ...string) (string, *Pager) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, done := Wrap(out, Options{Pages: true, Terminal: onTerminal, Getenv: env(append([]string{"GIT_PAGER", command}, extra...)...)})
	p, ok := w.(*Pager)
	if !ok {
		t.Fatalf("no pager for %q", command)
	}
	if text != "" {
		if n, err := io.WriteString(w, text); err != nil || n != len(text) {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if err := done(); err != nil {
		t.Fatalf("done: %v", err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), p
}

// TestPagerRuns: the pager runs through sh -c, reads the output, writes
// to stdout, with LESS=FRX and LV=-c added when unset and kept when set.
func TestPagerRuns(t *testing.T) {
	t.Setenv("LESS", "from the process, not Getenv")
	got, _ := pagerRun(t, `printf '%s|%s\n' "$LESS" "$LV"; sed 's/^/paged: /'`, "one\ntwo\n")
	if want := "FRX|-c\npaged: one\npaged: two\n"; got != want {
		t.Errorf("pager output %q, want %q", got, want)
	}
	got, _ = pagerRun(t, `printf '%s\n' "$LESS"; cat >/dev/null`, "x\n", "LESS", "-S")
	if got != "-S\n" {
		t.Errorf("LESS set by the user: pager saw %q", got)
	}
}

// TestPagerLazy: a command that prints nothing starts no pager.
func TestPagerLazy(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "started")
	pagerRun(t, "echo started > '"+mark+"'; cat", "")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the pager started without any output")
	}
	pagerRun(t, "echo started > '"+mark+"'; cat", "x\n")
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the pager did not start on output")
	}
}

// TestPagerQuitsEarly: a pager that exits without reading (the user
// quits less at once), reads one line only, or fails: every write still
// reports success (more output than a pipe holds, so some writes meet the
// closed pipe), done returns nil, and what it read is what it printed.
func TestPagerQuitsEarly(t *testing.T) {
	big := strings.Repeat("a line of output that nobody reads\n", 1<<15) // ~1 MiB
	for _, command := range []string{"exit 0", "exit 3", "head -n 1"} {
		got, p := pagerRun(t, command, big)
		if !p.gone {
			t.Errorf("%q: the writer did not notice the pager was gone", command)
		}
		want := ""
		if command == "head -n 1" {
			want = "a line of output that nobody reads\n"
		}
		if got != want {
			t.Errorf("%q: terminal got %q, want %q", command, got[:min(len(got), 80)], want)
		}
	}
}

// TestPagerCannotStart: when sh cannot be found the output goes to
// stdout unpaged, as git goes on without its pager.
func TestPagerCannotStart(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	got, p := pagerRun(t, "sed s/^/paged:/", "plain\n")
	if got != "plain\n" || p.in != nil {
		t.Fatalf("output %q (pager input %v), want it unpaged", got, p.in)
	}
}

// TestPagerStderr: the pager's own standard error goes to Options.Stderr.
func TestPagerStderr(t *testing.T) {
	out, err := os.Create(filepath.Join(t.TempDir(), "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var errb bytes.Buffer
	w, done := Wrap(out, Options{Pages: true, Terminal: onTerminal, Stderr: &errb, Getenv: env("GIT_PAGER", "echo oops >&2; cat")})
	io.WriteString(w, "x\n")
	done()
	if errb.String() != "oops\n" {
		t.Fatalf("pager stderr %q", errb.String())
	}
}

// TestSelectReadsNoConfigOffTerminal: off a terminal the configuration
// is not consulted at all (every command is wrapped; most never page).
func TestSelectReadsNoConfigOffTerminal(t *testing.T) {
	read := false
	o := Options{Mode: Always, Pages: true, Config: func(string) (string, bool) { read = true; return "", false }}
	if got := Select(&bytes.Buffer{}, o); got != "" || read {
		t.Fatalf("Select off a terminal: %q, configuration read %v", got, read)
	}
}
