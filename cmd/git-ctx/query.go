package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/explain"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/gitname"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// unauthNote marks, in text output, an embedding the record's hash does
// not cover.
func unauthNote(e *cache.Entry) string {
	if e.Unauthenticated() == nil {
		return ""
	}
	return " (unauthenticated: not covered by the record's hash, rule " + string(e.Rule) + ")"
}

func cmdLog() *cli.Command {
	return &cli.Command{
		Name: "log",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "n", Aliases: []string{"max-count"}, Usage: "show at most `N` checkpoints"},
			&cli.StringFlag{Name: "device", Usage: "only checkpoints of device `ID`"},
			&cli.StringFlag{Name: "session", Usage: "only checkpoints of session `ID`"},
			&cli.StringFlag{Name: "author", Usage: "only checkpoints by author `EMAIL`"},
			&cli.StringFlag{Name: "since", Usage: "only checkpoints at or after `WHEN`"},
			&cli.StringFlag{Name: "until", Usage: "only checkpoints at or before `WHEN`"},
			&cli.BoolFlag{Name: "unverified", Usage: "show records that failed verification, with the reasons"},
			&cli.StringFlag{Name: "commit", Usage: "only checkpoints linked to code commit `REV` (see 'git ctx explain')"},
			jsonFlag,
		}, prettyFlags(true)...),
		Action: func(c *cli.Context) error {
			if c.Int("n") < 0 {
				return fault.New(fault.Usage, "-n must not be negative")
			}
			st, err := newTextStyle(c)
			if err != nil {
				return err
			}
			now := time.Now()
			since, err := parseWhen(c.String("since"), now)
			if err != nil {
				return fault.New(fault.Usage, "--since: %v", err)
			}
			until, err := parseWhen(c.String("until"), now)
			if err != nil {
				return fault.New(fault.Usage, "--until: %v", err)
			}
			if c.IsSet("commit") {
				return logCommit(c)
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			f := checkpoints.Filter{Device: c.String("device"), Session: c.String("session"), Author: c.String("author"),
				Since: since, Until: until, Unverified: c.Bool("unverified"), Limit: c.Int("n")}
			entries, err := checkpoints.Log(c.Context, m, f)
			if err != nil {
				return err
			}
			var quarantine []cache.Quarantined
			if f.Unverified {
				if quarantine, err = checkpoints.Quarantine(c.Context, m); err != nil {
					return err
				}
			}
			w := c.App.Writer
			if c.Bool("json") {
				return printLogJSON(w, entries, quarantine, f.Unverified)
			}
			for _, q := range quarantine {
				// Names a pull refused may hide characters: quoted when not all printable, then escaped.
				name := func(s string) string { return termtext.Line(gitname.Display(s)) }
				fmt.Fprintf(w, "REJECTED device %s, %s: %s: %s\n", name(q.Device), name(orDash(shortHash(q.Record))),
					termtext.Line(q.Reason), name(q.Detail))
			}
			hint := false
			for i, e := range entries {
				st.entry(w, i, e, "")
				hint = hint || !e.Verified && e.DeviceID == m.OwnDeviceID()
			}
			if hint {
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: UNVERIFIED records of this device: %s\n", workspace.NewChainHint())
			}
			return nil
		},
	}
}

// logCommit is `log --commit REV`: the checkpoints linked to one code
// commit (verified or not, marked as log marks them), newest first.
func logCommit(c *cli.Context) error {
	for _, f := range []string{"device", "session", "author", "since", "until", "unverified"} {
		if c.IsSet(f) {
			return fault.New(fault.Usage, "log --commit takes only -n and --json, not --%s", f)
		}
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	entries, err := explain.Log(c.Context, m, c.String("commit"), c.Int("n"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printLogJSON(c.App.Writer, entries, nil, false)
	}
	for _, e := range entries {
		printEntryLine(c.App.Writer, e, "")
	}
	if len(entries) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "git-ctx: no checkpoint is linked to %s (see 'git ctx explain %s')\n",
			termtext.Line(c.String("commit")), termtext.Line(c.String("commit")))
	}
	return nil
}

// printLogJSON prints log's JSON: the entries, or with --unverified an
// object of the entries and the quarantine.
func printLogJSON(w io.Writer, entries []*cache.Entry, quarantine []cache.Quarantined, unverified bool) error {
	if unverified {
		out, err := output.NewLogUnverified(entries, quarantine)
		if err != nil {
			return err
		}
		return output.Write(w, out)
	}
	list, err := output.Entries(entries)
	if err != nil {
		return err
	}
	return output.Write(w, list)
}

// printEntryLine prints one line per checkpoint; tail (already made safe
// for the terminal) replaces the summary's first line when not empty.
func printEntryLine(w io.Writer, e *cache.Entry, tail string) {
	plainStyle().entryLine(w, e, tail)
}

func shortHash(h string) string {
	if len(h) == 64 {
		return h[:12]
	}
	return h
}

// parseWhen reads a date, an RFC 3339 time or an age ("36h", "7d", "2w")
// as unix nanoseconds; "" is 0 (no bound).
func parseWhen(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixNano(), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t.UnixNano(), nil
	}
	if len(s) > 1 {
		if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && n >= 0 {
			switch s[len(s)-1] {
			case 'd':
				return now.Add(-time.Duration(n) * 24 * time.Hour).UnixNano(), nil
			case 'w':
				return now.Add(-time.Duration(n) * 7 * 24 * time.Hour).UnixNano(), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UnixNano(), nil
	}
	return 0, fmt.Errorf("%q is not a date (2026-11-30), a time (RFC 3339) or an age (36h, 7d, 2w)", s)
}

func cmdSearch() *cli.Command {
	return &cli.Command{
		Name: "search", ArgsUsage: "<word>...",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "n", Value: 20, Usage: "at most `N` results"},
			jsonFlag,
		}, prettyFlags(true)...),
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			st, err := newTextStyle(c)
			if err != nil {
				return err
			}
			open, close := "[", "]"
			color := false
			if c.Bool("json") {
				open, close = "", ""
			} else if st.Color {
				open, close, color = markOpen, markClose, true
			}
			hits, err := checkpoints.Search(c.Context, m, strings.Join(c.Args().Slice(), " "), c.Int("n"), open, close)
			if err != nil {
				return err
			}
			if err := emitBuilt(c, func() ([]json.RawMessage, error) { return output.SearchHits(hits) }, func(w io.Writer) {
				for i, h := range hits {
					st.entry(w, i, h.Entry, snippetLine(h.Snippet, color))
				}
			}); err != nil {
				return err
			}
			if len(hits) == 0 {
				fmt.Fprintln(c.App.ErrWriter, "git-ctx: no matches")
				return silent(fault.Failed) // like grep: nothing found
			}
			w := 0
			for _, h := range hits {
				w = max(w, h.Window)
			}
			if w > 0 {
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: more than %d checkpoints match: ranked the %d the cache indexed last (ctx.searchWindow; add words to narrow the search)\n", w, w)
			}
			return nil
		}),
	}
}

func cmdSimilar() *cli.Command {
	return &cli.Command{
		Name: "similar",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "compare with checkpoint `HASH` (a prefix)"},
			&cli.StringFlag{Name: "emb-file", Usage: "compare with the embedding in `FILE` (JSON array or float32 little-endian)"},
			&cli.IntFlag{Name: "k", Value: 5, Usage: "at most `N` results"},
			&cli.BoolFlag{Name: "include-unauthenticated", Usage: "also use embeddings their record's hash does not cover (ghyll's rule)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("to") == c.IsSet("emb-file") {
				return fault.New(fault.Usage, "similar takes exactly one of --to HASH and --emb-file FILE")
			}
			var vec []float32
			if f := c.String("emb-file"); f != "" {
				v, err := readEmbedding(f)
				if err != nil {
					return err
				}
				vec = v
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			matches, err := checkpoints.Similar(c.Context, m, c.String("to"), vec, c.Int("k"), c.Bool("include-unauthenticated"))
			if err != nil {
				return err
			}
			return emitBuilt(c, func() ([]json.RawMessage, error) { return output.SimilarMatches(matches) }, func(w io.Writer) {
				for _, mt := range matches {
					fmt.Fprintf(w, "%.4f ", mt.Score)
					printEntryLine(w, mt.Entry, "")
				}
			})
		},
	}
}

func cmdReindex() *cli.Command {
	return &cli.Command{
		Name: "reindex", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			start := time.Now()
			if err := m.Reindex(c.Context); err != nil {
				return err
			}
			st, err := checkpoints.ReadStatus(c.Context, m)
			if err != nil {
				return err
			}
			took := time.Since(start).Seconds()
			return emit(c, output.Reindex{Checkpoints: st.Checkpoints, Devices: st.Devices, Seconds: took}, func(w io.Writer) {
				fmt.Fprintf(w, "Reindexed %d checkpoints of this repository (%d devices) in %.2fs\n", st.Checkpoints, st.Devices, took)
			})
		}),
	}
}

// Highlight markers of colored search snippets: invalid UTF-8, which no
// record's text holds (records are JSON, their strings valid UTF-8), so
// they cannot be forged by a summary; snippetLine turns them into bold.
const (
	markOpen  = "\xff\x01"
	markClose = "\xff\x02"
)

// snippetLine makes a search snippet one safe line: newlines become
// spaces, everything a terminal would act on is escaped, and with color
// the highlight markers become bold on and off.
func snippetLine(s string, color bool) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if !color {
		return termtext.Line(s)
	}
	var b strings.Builder
	for i, part := range strings.Split(s, markOpen) {
		if i > 0 {
			b.WriteString("\x1b[1m")
		}
		word, rest, closed := strings.Cut(part, markClose)
		b.WriteString(termtext.Line(word))
		if closed {
			b.WriteString("\x1b[0m")
			b.WriteString(termtext.Line(rest))
		}
	}
	return b.String()
}
