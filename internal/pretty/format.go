// Package pretty shows records the way git shows commits: --format
// strings with placeholders modelled on git's pretty formats (Parse,
// Format.Render), the presets oneline, short and full, git's --date modes
// in the viewer's zone (FormatDate, Relative, Location) and git's colour
// decision (UseColor: --color, NO_COLOR, color.ctx, color.ui, auto).
//
// It is pure: the caller passes the environment's TZ, the present, the
// configuration and whether output is a terminal, so tests set them
// without touching the process. Text that others wrote (summaries,
// device, session and model names) goes through internal/termtext before
// it is placed in the output; the format string is the user's own and is
// written as given.
package pretty

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/git-ctx/git-ctx/internal/termtext"
)

// Record is what a format can show of one record. Empty fields show as
// empty; a zero Time shows no date.
type Record struct {
	Hash    string
	Device  string
	Author  string
	Session string
	Turn    int
	Model   string
	Summary string
	Time    time.Time
	// Status is the verification status: "verified", "unverified" or,
	// in a review, the review's status words.
	Status string
}

// Style is how a format renders: the date mode, the clock (zone and
// present) and whether to colour.
type Style struct {
	Date  DateMode
	Clock Clock
	Color bool
}

// Format is a parsed --format: what to print for each record and how
// records are separated.
type Format struct {
	parts []part
	// separator: records are separated by a newline ("format:"), not
	// ended by one ("tformat:", the default); gap: a blank line between
	// records (the multi-line presets, as git prints them).
	separator, gap bool
}

// part is literal text, a placeholder or a colour switch.
type part struct {
	lit   string
	ph    string // placeholder without the %: "h", "ad", …; "" for lit and colours
	color string // a colour switch (SGR sequence); "auto" for %C(auto)
	isCol bool
}

// placeholders are the ones Parse accepts (besides %n, %%, %C…).
var placeholders = map[string]bool{
	"H": true, "h": true, "d": true, "an": true, "ae": true,
	"ad": true, "ar": true, "at": true, "ai": true, "aI": true, "as": true,
	"s": true, "b": true, "B": true, "S": true, "T": true, "m": true, "v": true,
}

// The presets, as git's --format=oneline|short|full; "I" (the whole
// summary, indented) exists only here.
var presets = map[string]string{
	"oneline": "%C(auto)%h %s",
	"short":   "%C(yellow)checkpoint %H%Creset%nDevice:  %d%nAuthor:  %an%n%n%I",
	"full": "%C(yellow)checkpoint %H%Creset%nDevice:  %d%nAuthor:  %an%nDate:    %ad%nSession: %S/%T%nModel:   %m%n" +
		"Status:  %C(auto)%v%n%n%I",
}

// Oneline is --oneline: the short hash and the summary's first line.
func Oneline() *Format {
	f, _ := Parse("oneline")
	return f
}

// Parse reads a --format value: a preset name (oneline, short, full), or
// "format:FMT" (records separated by newlines), "tformat:FMT" or FMT
// (each record ended by a newline) with git-like placeholders:
//
//	%H full hash      %h short hash (12)    %d device        %an author (%ae too)
//	%ad date (--date) %ar relative  %at unix  %ai iso  %aI iso-strict  %as short
//	%s summary's first line  %b the rest  %B the whole summary
//	%S session  %T turn  %m model  %v verification status
//	%n newline  %% a percent sign
//	%Cred %Cgreen %Cblue %Creset  %C(NAME…) (bold, dim, ul, the eight colours, reset, auto)
//
// Colours are written only when colour is on; %C(auto) colours the hash
// yellow and the status green or red up to the next colour switch. An
// unknown placeholder is an error.
func Parse(spec string) (*Format, error) {
	if p, ok := presets[spec]; ok {
		f, err := parse(p, true)
		if err != nil {
			return nil, err
		}
		f.gap = spec != "oneline"
		return f, nil
	}
	switch {
	case strings.HasPrefix(spec, "format:"):
		f, err := parse(strings.TrimPrefix(spec, "format:"), false)
		if err == nil {
			f.separator = true
		}
		return f, err
	case strings.HasPrefix(spec, "tformat:"):
		return parse(strings.TrimPrefix(spec, "tformat:"), false)
	}
	if !strings.Contains(spec, "%") {
		return nil, fmt.Errorf("%q is neither a format (oneline, short, full) nor a format string with %%-placeholders", spec)
	}
	return parse(spec, false)
}

// parse reads a format string; preset allows %I.
func parse(s string, preset bool) (*Format, error) {
	f := &Format{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.parts = append(f.parts, part{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		p, n, err := placeholder(rest, preset)
		if err != nil {
			return nil, err
		}
		if p.lit != "" {
			lit.WriteString(p.lit)
		} else {
			flush()
			f.parts = append(f.parts, p)
		}
		i += n
	}
	flush()
	return f, nil
}

// placeholder reads the placeholder at the start of s (after its %):
// the part and how many bytes it took.
func placeholder(s string, preset bool) (part, int, error) {
	switch {
	case s == "":
		return part{}, 0, fmt.Errorf("a lone %% at the end (write %%%% for a percent sign)")
	case s[0] == 'n':
		return part{lit: "\n"}, 1, nil
	case s[0] == '%':
		return part{lit: "%"}, 1, nil
	case s[0] == 'I' && preset:
		return part{ph: "I"}, 1, nil
	case s[0] == 'C':
		return colorSwitch(s)
	}
	for _, n := range []int{2, 1} {
		if len(s) >= n && placeholders[s[:n]] {
			return part{ph: s[:n]}, n, nil
		}
	}
	bad := s[:1]
	if s[0] == 'a' && len(s) > 1 {
		bad = s[:2]
	}
	return part{}, 0, fmt.Errorf("unknown placeholder %%%s", bad)
}

// colorNames are the words %C(…) accepts, as SGR parameters.
var colorNames = map[string]string{
	"normal": "", "reset": "", "bold": "1", "dim": "2", "ul": "4", "black": "30", "red": "31", "green": "32",
	"yellow": "33", "blue": "34", "magenta": "35", "cyan": "36", "white": "37",
}

// colorSwitch reads %Cred, %Cgreen, %Cblue, %Creset or %C(…) at the start
// of s (which begins with 'C').
func colorSwitch(s string) (part, int, error) {
	for name, code := range map[string]string{"red": Red, "green": Green, "blue": Blue, "reset": Reset} {
		if strings.HasPrefix(s[1:], name) {
			return part{color: code, isCol: true}, 1 + len(name), nil
		}
	}
	if !strings.HasPrefix(s, "C(") {
		return part{}, 0, fmt.Errorf("unknown placeholder %%%s (colours: %%Cred, %%Cgreen, %%Cblue, %%Creset, %%C(NAME))", s[:min(len(s), 2)])
	}
	spec, _, ok := strings.Cut(s[2:], ")")
	if !ok {
		return part{}, 0, fmt.Errorf("%%C( without a closing parenthesis")
	}
	n := 2 + len(spec) + 1
	words := strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == ',' })
	if len(words) == 1 && words[0] == "auto" {
		return part{color: "auto", isCol: true}, n, nil
	}
	var codes []string
	reset := false
	for _, w := range words {
		if w == "auto" {
			continue // "auto," is git's historical prefix: colour only when colour is on, as always here
		}
		code, ok := colorNames[w]
		if !ok {
			return part{}, 0, fmt.Errorf("unknown colour %q in %%C(%s)", w, spec)
		}
		if w == "reset" || w == "normal" {
			reset = true
		}
		if code != "" {
			codes = append(codes, code)
		}
	}
	switch {
	case len(codes) > 0:
		return part{color: "\x1b[" + strings.Join(codes, ";") + "m", isCol: true}, n, nil
	case reset:
		return part{color: Reset, isCol: true}, n, nil
	}
	return part{}, 0, fmt.Errorf("no colour in %%C(%s)", spec)
}

// Render is the text of one record in f: everything others wrote made
// safe for a terminal, colours only when st.Color.
func (f *Format) Render(r Record, st Style) string {
	var b strings.Builder
	auto := false
	for _, p := range f.parts {
		switch {
		case p.isCol:
			auto = p.color == "auto"
			if st.Color && !auto {
				b.WriteString(p.color)
			}
		case p.ph == "":
			b.WriteString(p.lit)
		default:
			v := value(p.ph, r, st)
			if auto && st.Color {
				v = Paint(true, autoColor(p.ph, r), v)
			}
			b.WriteString(v)
		}
	}
	return b.String()
}

// autoColor is the colour %C(auto) gives a placeholder.
func autoColor(ph string, r Record) string {
	switch ph {
	case "h", "H":
		return Yellow
	case "v":
		return StatusColor(r.Status)
	}
	return ""
}

// value is one placeholder's text for r.
func value(ph string, r Record, st Style) string {
	line := termtext.Line
	switch ph {
	case "H":
		return line(r.Hash)
	case "h":
		return line(ShortHash(r.Hash))
	case "d":
		return line(r.Device)
	case "an", "ae":
		return line(r.Author)
	case "S":
		return line(r.Session)
	case "T":
		return strconv.Itoa(r.Turn)
	case "m":
		return line(r.Model)
	case "v":
		return line(r.Status)
	case "s":
		first, _ := splitSummary(r.Summary)
		return line(first)
	case "b":
		_, rest := splitSummary(r.Summary)
		return blockOf(rest, "")
	case "B":
		return blockOf(strings.TrimSpace(r.Summary), "")
	case "I":
		return blockOf(strings.TrimSpace(r.Summary), "    ")
	}
	return dateValue(ph, r.Time, st)
}

// dateValue is a date placeholder's text (%ad and its fixed-mode kin).
func dateValue(ph string, t time.Time, st Style) string {
	if t.IsZero() {
		return ""
	}
	mode := map[string]DateMode{"ad": st.Date, "ar": DateRelative, "at": DateUnix, "ai": DateISO, "aI": DateISOStrict, "as": DateShort}[ph]
	if mode == "" {
		mode = DateISOStrict
	}
	return FormatDate(t, mode, st.Clock)
}

// blockOf is s as lines safe for a terminal, each starting with indent.
func blockOf(s, indent string) string {
	if s == "" {
		return ""
	}
	return termtext.Block(s, indent)
}

// splitSummary is a summary's first line and the rest (leading blank
// lines and trailing space dropped).
func splitSummary(s string) (first, rest string) {
	first, rest, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimRight(first, "\r"), strings.TrimSpace(rest)
}

// Print writes record number i (from 0) of a listing in f, with f's
// separators: a newline after each record (tformat), or between records
// (format:), and a blank line between records of a multi-line preset.
func (f *Format) Print(w io.Writer, i int, r Record, st Style) error {
	var b strings.Builder
	if i > 0 && (f.separator || f.gap) {
		b.WriteString("\n")
	}
	b.WriteString(f.Render(r, st))
	if !f.separator {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ShortHash is the 12-character form of a 64-character record hash; other
// strings are returned as they are.
func ShortHash(h string) string {
	if len(h) == 64 {
		return h[:12]
	}
	return h
}
