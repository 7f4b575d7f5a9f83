package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// goutFixture is a repository with two checkpoints of session s1:
// "first line" (with a body, model m-1) and "second".
func goutFixture(t *testing.T) (repo string, env []string, recs []testrepo.Record) {
	t.Helper()
	_, repo, env = newInitRepo(t)
	inproc.Checkpoint(t, repo, env, "-m", "first line\n\nbody \x1b[2J text", "--session", "s1", "--model", "m-1")
	inproc.Checkpoint(t, repo, env, "-m", "second", "--session", "s1")
	recs = inproc.Log(t, repo, env)
	if len(recs) != 2 {
		t.Fatalf("log: %d records", len(recs))
	}
	return repo, env, recs
}

// TestGitoutOneline: --oneline (and --format=oneline) prints the short
// hash and the summary's first line, newest first, for log and search;
// review prints each checkpoint it adds that way under its commit.
func TestGitoutOneline(t *testing.T) {
	repo, env, recs := goutFixture(t)
	want := recs[0].Hash[:12] + " second\n" + recs[1].Hash[:12] + " first line\n"
	for _, args := range [][]string{{"log", "--oneline"}, {"log", "--format=oneline"}, {"log", "--pretty", "oneline"}} {
		if got := inproc.MustCtx(t, repo, env, args...); got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
	if got := inproc.MustCtx(t, repo, env, "search", "second", "--oneline"); got != recs[0].Hash[:12]+" second\n" {
		t.Errorf("search --oneline: %q", got)
	}
	review := inproc.MustCtx(t, repo, env, "review", "--oneline")
	for _, line := range []string{"\n  " + recs[1].Hash[:12] + " first line\n", "\n  " + recs[0].Hash[:12] + " second\n", "commit "} {
		if !strings.Contains(review, line) {
			t.Errorf("review --oneline lacks %q:\n%s", line, review)
		}
	}
	if strings.Contains(review, "+ checkpoint") {
		t.Errorf("review --oneline still prints the long checkpoint lines:\n%s", review)
	}
}

// TestGitoutFormat: every record placeholder of --format, the body made
// safe for the terminal, %% and %n; format: separates instead of ending.
func TestGitoutFormat(t *testing.T) {
	repo, env, recs := goutFixture(t)
	old := recs[1]
	got := inproc.MustCtx(t, repo, env, "log", "-n", "2", "--format=%h|%H|%d|%an|%S|%T|%m|%v|%s|%b|100%%%nnext")
	lines := strings.Split(got, "\n")
	if len(lines) != 5 || lines[4] != "" {
		t.Fatalf("two records of two lines each expected: %q", got)
	}
	want := strings.Join([]string{old.Hash[:12], old.Hash, old.Device, old.Author, "s1", "1", "m-1", "verified", "first line", `body \x1b[2J text`, "100%"}, "|")
	if lines[2] != want || lines[3] != "next" {
		t.Errorf("older record: %q, want %q then \"next\"", lines[2:4], want)
	}
	if got := inproc.MustCtx(t, repo, env, "log", "--format=format:%T"); got != "2\n1" {
		t.Errorf("format: separator semantics: %q", got)
	}
	full := inproc.MustCtx(t, repo, env, "log", "-n", "1", "--format=full")
	for _, w := range []string{"checkpoint " + recs[0].Hash + "\n", "Device:  " + recs[0].Device + "\n", "Session: s1/2\n", "Status:  verified\n", "\n    second\n"} {
		if !strings.Contains(full, w) {
			t.Errorf("--format=full lacks %q:\n%s", w, full)
		}
	}
}

// TestGitoutFormatErrors: an unknown placeholder, a bad --date or --color
// value, and --oneline with --format are usage errors (exit 2) that print
// nothing on stdout.
func TestGitoutFormatErrors(t *testing.T) {
	repo, env, _ := goutFixture(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"log", "--format=%h %q"}, "--format: unknown placeholder %q"},
		{[]string{"log", "--format=%C(purple)%h"}, `unknown colour "purple"`},
		{[]string{"log", "--format=medium"}, "neither a format"},
		{[]string{"search", "second", "--format=%x"}, "unknown placeholder %x"},
		{[]string{"review", "--format=%h%"}, "lone %"},
		{[]string{"log", "--date=yesterday"}, `--date: unknown date format "yesterday"`},
		{[]string{"log", "--color=sometimes"}, "--color:"},
		{[]string{"log", "--oneline", "--format=%h"}, "exclude each other"},
	} {
		r := inproc.Ctx(t, repo, env, c.args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stdout, r.Stderr, c.msg)
		}
	}
}

// TestGitoutDates: times are shown in TZ's zone (UTC, then India's
// +05:30) in every --date mode, show's Date too; --json does not change.
func TestGitoutDates(t *testing.T) {
	if _, err := time.LoadLocation("Asia/Kolkata"); err != nil {
		t.Skipf("no zone database: %v", err)
	}
	repo, env, recs := goutFixture(t)
	ts := recs[0].TS
	at := time.Unix(0, ts)
	if ts < 1e12 {
		at = time.Unix(ts, 0)
	}
	ist := time.FixedZone("IST", 5*3600+1800)
	india := testrepo.WithEnv(env, "TZ=Asia/Kolkata")
	date := func(env []string, args ...string) string {
		out := inproc.MustCtx(t, repo, env, append([]string{"log", "-n", "1", "--format=%ad"}, args...)...)
		return strings.TrimSuffix(out, "\n")
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{env, nil, at.UTC().Format("2006-01-02T15:04:05Z")},
		{india, nil, at.In(ist).Format("2006-01-02T15:04:05-07:00")},
		{india, []string{"--date=iso"}, at.In(ist).Format("2006-01-02 15:04:05 -0700")},
		{india, []string{"--date=iso-strict"}, at.In(ist).Format("2006-01-02T15:04:05-07:00")},
		{india, []string{"--date=default"}, at.In(ist).Format("Mon Jan 2 15:04:05 2006 -0700")},
		{india, []string{"--date=local"}, at.In(ist).Format("Mon Jan 2 15:04:05 2006")},
		{india, []string{"--date=rfc"}, at.In(ist).Format("Mon, 2 Jan 2006 15:04:05 -0700")},
		{india, []string{"--date=short"}, at.In(ist).Format("2006-01-02")},
		{india, []string{"--date=unix"}, strconv.FormatInt(at.Unix(), 10)},
	} {
		if got := date(c.env, c.args...); got != c.want {
			t.Errorf("%v %v: %q, want %q", c.env[len(c.env)-1], c.args, got, c.want)
		}
	}
	if got := date(india, "--date=relative"); !regexp.MustCompile(`^\d+ (second|minute|hour)s? ago$`).MatchString(got) {
		t.Errorf("--date=relative: %q", got)
	}
	// The default line and show follow TZ too.
	line := inproc.MustCtx(t, repo, india, "log", "-n", "1")
	if want := at.In(ist).Format("2006-01-02T15:04:05-07:00"); !strings.Contains(line, " "+want+" ") {
		t.Errorf("log line %q lacks %q", line, want)
	}
	if got := inproc.MustCtx(t, repo, india, "log", "-n", "1", "--date=short"); !strings.Contains(got, " "+at.In(ist).Format("2006-01-02")+" "+recs[0].Device+" ") {
		t.Errorf("log --date=short line: %q", got)
	}
	if show := inproc.MustCtx(t, repo, india, "show", recs[0].Hash[:12]); !strings.Contains(show, "+05:30") {
		t.Errorf("show's date is not in TZ's zone:\n%s", show)
	}
	// --json is unchanged whatever TZ and --date say.
	if a, b := inproc.MustCtx(t, repo, env, "log", "--json"), inproc.MustCtx(t, repo, india, "log", "--json", "--date=iso"); a != b {
		t.Errorf("--json changed with TZ and --date:\n%s\n%s", a, b)
	}
}
