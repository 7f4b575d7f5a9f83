package pretty

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseFormat: a --format is the user's text. Parse returns a format
// or an error without panicking; a parsed format renders any record
// without panicking, and with colour off it writes no escape sequence the
// format itself did not hold (others' text is made safe, colour
// placeholders write nothing).
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"oneline", "short", "full", "%h %s", "format:%H%n%b", "tformat:%C(auto)%h%Creset %ad %ar", "%C(bold red)%d%Creset", "%", "%z", "%C(", "%%%n%S/%T %m %v %an %ae %at %ai %aI %as %B"} {
		f.Add(s, "summary line\n\nbody \x1b[31mred\x1b[0m", int64(1796203298))
	}
	f.Fuzz(func(t *testing.T, spec, summary string, unix int64) {
		fm, err := Parse(spec)
		if err != nil {
			return
		}
		rec := Record{Hash: strings.Repeat("ab", 32), Device: "dev\x1b]0;x\a", Author: "a@b", Session: "s", Turn: 3, Model: "m",
			Summary: summary, Time: time.Unix(unix%(1<<40), 0), Status: "verified"}
		st := Style{Clock: Clock{Loc: time.UTC, Now: time.Unix(1796203298, 0)}}
		for _, d := range []DateMode{DateDefault, DateRelative, DateISOStrict, DateUnix} {
			st.Date = d
			out := fm.Render(rec, st)
			if !strings.Contains(spec, "\x1b") && strings.Contains(out, "\x1b") {
				t.Fatalf("format %q, colour off: output holds an escape: %q", spec, out)
			}
		}
		st.Color = true
		_ = fm.Render(rec, st)
	})
}
