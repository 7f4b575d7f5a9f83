package pretty

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var testRecord = Record{
	Hash:    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	Device:  "laptop-1",
	Author:  "a@example.org",
	Session: "s1",
	Turn:    3,
	Model:   "m-1",
	Summary: "first line\n\nsecond\x1b[2Jline\nthird",
	Time:    time.Date(2026, 12, 3, 8, 15, 2, 0, time.UTC),
	Status:  "verified",
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no zone %s: %v", name, err)
	}
	return loc
}

// TestFormatPlaceholders: every placeholder renders its field; text
// others wrote is escaped; %% and %n are literal.
func TestFormatPlaceholders(t *testing.T) {
	st := Style{Date: DateISO, Clock: Clock{Loc: time.UTC, Now: testRecord.Time.Add(3 * time.Hour)}}
	cases := map[string]string{
		"%H":              testRecord.Hash,
		"%h":              "0123456789ab",
		"%d|%an|%ae":      "laptop-1|a@example.org|a@example.org",
		"%S/%T %m %v":     "s1/3 m-1 verified",
		"%s":              "first line",
		"%b":              "second\\x1b[2Jline\nthird",
		"%ad":             "2026-12-03 08:15:02 +0000",
		"%ar|%at|%as":     "3 hours ago|1796285702|2026-12-03",
		"%ai|%aI":         "2026-12-03 08:15:02 +0000|2026-12-03T08:15:02Z",
		"100%% %n%h":      "100% \n0123456789ab",
		"%Cred%h%Creset":  "0123456789ab", // colour off: no escapes
		"%C(bold blue)%s": "first line",
		"plain":           "",
	}
	for spec, want := range cases {
		f, err := Parse(spec)
		if spec == "plain" {
			if err == nil {
				t.Errorf("Parse(%q): no error for a format without placeholders", spec)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", spec, err)
		}
		if got := f.Render(testRecord, st); got != want {
			t.Errorf("%q: got %q, want %q", spec, got, want)
		}
	}
}

// TestFormatUnknown: an unknown placeholder, a lone % and a bad colour
// are errors that name what is wrong.
func TestFormatUnknown(t *testing.T) {
	for spec, want := range map[string]string{
		"%q":         "unknown placeholder %q",
		"%h %":       "lone %",
		"%ax":        "unknown placeholder %ax",
		"%C(purple)": `unknown colour "purple"`,
		"%C(red":     "closing parenthesis",
		"%Cx":        "unknown placeholder %Cx",
		"medium":     "neither a format",
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): error %v, want one containing %q", spec, err, want)
		}
	}
}

// TestFormatColour: colours only when on; %C(auto) paints the hash
// yellow and the status green or red.
func TestFormatColour(t *testing.T) {
	f, err := Parse("%C(auto)%h %v%Creset %Cred%s%Creset %C(bold yellow)x")
	if err != nil {
		t.Fatal(err)
	}
	on := Style{Color: true}
	bad := testRecord
	bad.Status = "unverified"
	if got, want := f.Render(testRecord, on), Yellow+"0123456789ab"+Reset+" "+Green+"verified"+Reset+Reset+" "+Red+"first line"+Reset+" \x1b[1;33mx"; got != want {
		t.Errorf("colour on: %q, want %q", got, want)
	}
	if got := f.Render(bad, on); !strings.Contains(got, Red+"unverified"+Reset) {
		t.Errorf("unverified not red: %q", got)
	}
	if got := f.Render(testRecord, Style{}); strings.Contains(got, "\x1b") {
		t.Errorf("colour off wrote escapes: %q", got)
	}
}

// TestFormatPrint: tformat ends every record with a newline, format:
// separates, the multi-line presets leave a blank line between records.
func TestFormatPrint(t *testing.T) {
	print := func(spec string) string {
		f, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for i := 0; i < 2; i++ {
			f.Print(&b, i, testRecord, Style{})
		}
		return b.String()
	}
	if got := print("%h"); got != "0123456789ab\n0123456789ab\n" {
		t.Errorf("tformat: %q", got)
	}
	if got := print("format:%h"); got != "0123456789ab\n0123456789ab" {
		t.Errorf("format: %q", got)
	}
	if got := print("oneline"); got != "0123456789ab first line\n0123456789ab first line\n" {
		t.Errorf("oneline: %q", got)
	}
	got := print("full")
	for _, want := range []string{"checkpoint " + testRecord.Hash + "\nDevice:  laptop-1\n", "Session: s1/3\nModel:   m-1\nStatus:  verified\n\n    first line\n    \n    second", "third\n\ncheckpoint "} {
		if !strings.Contains(got, want) {
			t.Errorf("full lacks %q:\n%s", want, got)
		}
	}
}

// TestDateModes: each mode, in a fixed zone that is not UTC.
func TestDateModes(t *testing.T) {
	c := Clock{Loc: mustLoc(t, "Asia/Kolkata"), Now: testRecord.Time.Add(26 * time.Hour)}
	for mode, want := range map[DateMode]string{
		DateDefault:   "Thu Dec 3 13:45:02 2026 +0530",
		DateLocal:     "Thu Dec 3 13:45:02 2026",
		DateISO:       "2026-12-03 13:45:02 +0530",
		DateISOStrict: "2026-12-03T13:45:02+05:30",
		DateRFC:       "Thu, 3 Dec 2026 13:45:02 +0530",
		DateShort:     "2026-12-03",
		DateUnix:      "1796285702",
		DateRelative:  "26 hours ago",
	} {
		if got := FormatDate(testRecord.Time, mode, c); got != want {
			t.Errorf("%s: %q, want %q", mode, got, want)
		}
	}
	if _, err := ParseDateMode("yesterday"); err == nil {
		t.Error("ParseDateMode accepted an unknown mode")
	}
	if m, err := ParseDateMode(""); err != nil || m != DateISOStrict {
		t.Errorf(`ParseDateMode(""): %v %v`, m, err)
	}
}

// TestRelative: git's thresholds and rounding.
func TestRelative(t *testing.T) {
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for ago, want := range map[time.Duration]string{
		-time.Second:                "in the future",
		time.Second:                 "1 second ago",
		89 * time.Second:            "89 seconds ago",
		90 * time.Second:            "2 minutes ago",
		89 * time.Minute:            "89 minutes ago",
		35 * time.Hour:              "35 hours ago",
		36 * time.Hour:              "2 days ago",
		13 * 24 * time.Hour:         "13 days ago",
		20 * 24 * time.Hour:         "3 weeks ago",
		100 * 24 * time.Hour:        "3 months ago",
		365 * 24 * time.Hour:        "1 year ago",
		(365 + 60) * 24 * time.Hour: "1 year, 2 months ago",
		3000 * 24 * time.Hour:       "8 years ago",
	} {
		if got := Relative(now.Add(-ago), now); got != want {
			t.Errorf("%v ago: %q, want %q", ago, got, want)
		}
	}
}

// TestLocation: TZ as libc reads it.
func TestLocation(t *testing.T) {
	mustLoc(t, "America/New_York")
	if Location("", false) != time.Local {
		t.Error("unset TZ is not time.Local")
	}
	for tz, want := range map[string]string{"": "UTC", ":America/New_York": "America/New_York", "America/New_York": "America/New_York", "No/Such_Zone": "UTC"} {
		if got := Location(tz, true).String(); got != want {
			t.Errorf("TZ=%q: %s, want %s", tz, got, want)
		}
	}
}

// TestUseColor: the decision matrix.
func TestUseColor(t *testing.T) {
	cfg := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	cases := []struct {
		name string
		in   ColorInputs
		want bool
	}{
		{"terminal", ColorInputs{Terminal: true}, true},
		{"file", ColorInputs{}, false},
		{"pager", ColorInputs{Paging: true}, true},
		{"pager, color.pager false", ColorInputs{Paging: true, Config: cfg("color.pager", "false")}, false},
		{"dumb terminal", ColorInputs{Terminal: true, Term: "dumb"}, false},
		{"NO_COLOR on a terminal", ColorInputs{Terminal: true, NoColor: "1"}, false},
		{"NO_COLOR beats color.ui=always", ColorInputs{NoColor: "x", Config: cfg("color.ui", "always")}, false},
		{"--color=always beats NO_COLOR", ColorInputs{Flag: ColorAlways, NoColor: "1"}, true},
		{"--color=auto keeps NO_COLOR", ColorInputs{Flag: ColorAuto, NoColor: "1", Terminal: true}, false},
		{"--no-color on a terminal", ColorInputs{Flag: ColorNever, Terminal: true}, false},
		{"color.ui=always to a file", ColorInputs{Config: cfg("color.ui", "always")}, true},
		{"color.ui=never on a terminal", ColorInputs{Terminal: true, Config: cfg("color.ui", "never")}, false},
		{"color.ui=true is auto (file)", ColorInputs{Config: cfg("color.ui", "true")}, false},
		{"color.ctx beats color.ui", ColorInputs{Terminal: true, Config: cfg("color.ui", "always", "color.ctx", "false")}, false},
		{"flag beats config", ColorInputs{Flag: ColorNever, Config: cfg("color.ui", "always")}, false},
	}
	for _, c := range cases {
		got, err := UseColor(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := UseColor(ColorInputs{Config: cfg("color.ui", "sometimes")}); err == nil || !strings.Contains(err.Error(), "color.ui") {
		t.Errorf("bad color.ui: %v", err)
	}
	if StatusColor("verified") != Green || StatusColor("UNVERIFIED") != Red || StatusColor("MODIFIED verified") != Red || StatusColor("new key") != "" {
		t.Error("StatusColor")
	}
}
