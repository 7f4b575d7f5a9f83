package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/explain"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func cmdExplain() *cli.Command {
	return &cli.Command{
		Name: "explain", ArgsUsage: "<commit|range|path[:line]>", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			spec, err := explain.ParseSpec(c.Args().First())
			if err != nil {
				return err
			}
			rep, err := explain.Explain(c.Context, m, spec)
			if err != nil {
				return err
			}
			return emit(c, output.NewExplain(rep), func(w io.Writer) { printExplain(w, rep) })
		}),
	}
}

// reviewCode is `git ctx review` of a code range: every commit explained,
// as text, JSON or markdown.
func reviewCode(c *cli.Context, m *workspace.Workspace, rng, format string) error {
	spec, err := explain.ParseSpec(rng)
	if err != nil {
		return err
	}
	rep, err := explain.Explain(c.Context, m, spec)
	if err != nil {
		return err
	}
	if format == "markdown" {
		printExplainMarkdown(c.App.Writer, rep)
		return nil
	}
	return emit(c, output.NewExplain(rep), func(w io.Writer) { printExplain(w, rep) })
}

// reviewStyle reads review's output flags. --format markdown (or md) and
// text are review's own; any other --format, and --oneline, are log's
// placeholders for the memory branch's records (newTextStyle). format is
// "markdown", "text" or "" (log's style in st).
func reviewStyle(c *cli.Context) (format string, st *textStyle, err error) {
	switch strings.ToLower(strings.TrimSpace(c.String("format"))) {
	case "markdown", "md":
		if c.Bool("json") {
			return "", nil, fault.New(fault.Usage, "review takes --json or --format markdown, not both")
		}
		format = "markdown"
	case "text":
		format = "text"
	default:
		st, err = newTextStyle(c)
		return "", st, err
	}
	if c.Bool("oneline") {
		return "", nil, fault.New(fault.Usage, "--oneline and --format exclude each other")
	}
	return format, plainStyle(), nil
}

// recordMark is the text status of a record: empty when verified.
func recordMark(r explain.Record) string {
	switch r.Status {
	case explain.StatusVerified:
		return ""
	case explain.StatusQuarantined:
		return " QUARANTINED (" + termtext.Line(orDash(r.Reason)) + ": refused by a pull, not in this memory)"
	}
	return " UNVERIFIED (failed verification; see 'git ctx log --unverified')"
}

// printExplain prints a report as text: per commit a header, then each
// linked record (unverified ones marked), or a plain line saying there is
// no memory of it.
func printExplain(w io.Writer, rep *explain.Report) {
	line := termtext.Line
	if len(rep.Commits) == 0 {
		fmt.Fprintf(w, "No commits in %s\n", line(rep.Spec.Arg))
	}
	if rep.Spec.Line > 0 && len(rep.Commits) == 1 {
		fmt.Fprintf(w, "%s line %d was last changed by commit %s\n\n", line(rep.Spec.Path), rep.Spec.Line, line(cut(rep.Commits[0].Hash, 12)))
	}
	for i, cm := range rep.Commits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "commit %s %s\n", line(cut(cm.Hash, 12)), line(cm.Subject))
		fmt.Fprintf(w, "Author: %s\n", line(cm.Author))
		if len(cm.Records) == 0 {
			fmt.Fprintln(w, "  no memory: no checkpoint names this commit or leads to it")
			continue
		}
		for _, r := range cm.Records {
			fmt.Fprintf(w, "  %-6s %s %s %s %s/%d model %s%s\n", r.Kind, line(cut(r.Hash, 12)), formatTS(r.Timestamp), line(orDash(r.Device)),
				line(orDash(r.Session)), r.Turn, line(orDash(r.Model)), recordMark(r))
			if len(r.Files) > 0 {
				fmt.Fprintf(w, "         files: %s\n", lineList(r.Files))
			}
			if len(r.Tools) > 0 {
				fmt.Fprintf(w, "         tools: %s\n", lineList(r.Tools))
			}
			fmt.Fprintf(w, "%s\n", termtext.Block(strings.TrimRight(r.Summary, "\n"), "         | "))
		}
	}
	if rep.Truncated {
		fmt.Fprintf(w, "\n(only the first %d commits are explained)\n", explain.MaxCommits)
	}
}

// markdownSummaryLimit bounds a summary in a markdown report (runes).
const markdownSummaryLimit = 600

// printExplainMarkdown prints a report fit for a pull-request comment: a
// heading, a count line, and per commit a collapsible <details> section.
// Others' text is made safe for the terminal first (termtext.Line: no
// escapes ever), then escaped for markdown and HTML (md).
func printExplainMarkdown(w io.Writer, rep *explain.Report) {
	withMemory, unverified := 0, 0
	for _, cm := range rep.Commits {
		if len(cm.Records) > 0 {
			withMemory++
		}
		for _, r := range cm.Records {
			if !r.Verified {
				unverified++
			}
		}
	}
	fmt.Fprintf(w, "## git ctx review: %s\n\n", md(rep.Spec.Arg))
	fmt.Fprintf(w, "%d commit(s), %d with agent memory, %d without; %d unverified record(s).\n\n",
		len(rep.Commits), withMemory, len(rep.Commits)-withMemory, unverified)
	for _, cm := range rep.Commits {
		badge := "✅ verified memory"
		switch {
		case len(cm.Records) == 0:
			badge = "➖ no memory"
		case hasUnverified(cm.Records):
			badge = "⚠️ unverified memory"
		}
		fmt.Fprintf(w, "<details>\n<summary><code>%s</code> %s — %s (%d checkpoint(s))</summary>\n\n",
			md(cut(cm.Hash, 12)), md(cm.Subject), badge, len(cm.Records))
		fmt.Fprintf(w, "Author: %s\n\n", md(cm.Author))
		if len(cm.Records) == 0 {
			fmt.Fprint(w, "No memory: no checkpoint names this commit or leads to it.\n")
		}
		for _, r := range cm.Records {
			fmt.Fprintf(w, "- %s **%s** <code>%s</code> · device %s · session %s turn %d · model %s\n",
				markdownBadge(r), md(r.Kind), md(cut(r.Hash, 12)), md(orDash(r.Device)), md(orDash(r.Session)), r.Turn, md(orDash(r.Model)))
			if len(r.Files) > 0 {
				fmt.Fprintf(w, "  - Files: %s\n", mdList(r.Files))
			}
			if len(r.Tools) > 0 {
				fmt.Fprintf(w, "  - Tools: %s\n", mdList(r.Tools))
			}
			if text := strings.TrimSpace(strings.Replace(r.Summary, "\n\nCommit: "+cm.Hash, "", 1)); text != "" {
				fmt.Fprintf(w, "  - %s\n", md(oneLine(text, markdownSummaryLimit)))
			}
		}
		fmt.Fprint(w, "\n</details>\n\n")
	}
	if rep.Truncated {
		fmt.Fprintf(w, "Only the first %d commits are explained.\n", explain.MaxCommits)
	}
}

func hasUnverified(rs []explain.Record) bool {
	for _, r := range rs {
		if !r.Verified {
			return true
		}
	}
	return false
}

// markdownBadge is a record's verification as plain text and emoji.
func markdownBadge(r explain.Record) string {
	switch r.Status {
	case explain.StatusVerified:
		return "✅ verified"
	case explain.StatusQuarantined:
		return "⚠️ unverified (quarantined: " + md(orDash(r.Reason)) + ")"
	}
	return "⚠️ unverified"
}

// oneLine joins s's lines with " ⏎ " and cuts it at limit runes ("…").
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")), " ")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}

// mdEscaper escapes what markdown or HTML would read as syntax.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`,
	"#", `\#`, "|", `\|`, "~", `\~`, "!", `\!`, "{", `\{`, "}", `\}`, "+", `\+`, "-", `\-`, ".", `\.`,
	"@", "&#64;", ":", "&#58;",
)

// md is one line of others' text for markdown: safe for a terminal
// (termtext.Line), then every markdown and HTML character escaped, so it
// can neither format nor link nor mention, nor break the layout.
func md(s string) string { return mdEscaper.Replace(termtext.Line(s)) }

func mdList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = md(s)
	}
	return strings.Join(out, ", ")
}

// showCommit is `show COMMIT`: every record linked to the code commit, in
// full (--json: explain's object); a commit without memory is not found.
func showCommit(c *cli.Context, m *workspace.Workspace, commit string) error {
	rep, err := explain.Explain(c.Context, m, explain.Spec{Kind: explain.SpecCommit, Arg: c.Args().First(), Rev: commit})
	if err != nil {
		return err
	}
	if len(rep.Commits) == 1 && len(rep.Commits[0].Records) == 0 {
		return fmt.Errorf("%w: commit %s has no memory: no checkpoint names it or leads to it", workspace.ErrNotFound, cut(commit, 12))
	}
	return emit(c, output.NewExplain(rep), func(w io.Writer) {
		line := termtext.Line
		for _, cm := range rep.Commits {
			fmt.Fprintf(w, "commit %s %s\n", line(cm.Hash), line(cm.Subject))
			for _, r := range cm.Records {
				fmt.Fprintf(w, "\ncheckpoint %s (%s)%s\n", line(r.Hash), r.Kind, recordMark(r))
				fmt.Fprintf(w, "Device:   %s\nAuthor:   %s\nDate:     %s\n", line(r.Device), line(r.Author), formatTS(r.Timestamp))
				fmt.Fprintf(w, "Session:  %s (turn %d)\nModel:    %s\nBranch:   %s\n", line(orDash(r.Session)), r.Turn, line(orDash(r.Model)), line(orDash(r.Branch)))
				if len(r.Files) > 0 {
					fmt.Fprintf(w, "Files:    %s\n", lineList(r.Files))
				}
				if len(r.Tools) > 0 {
					fmt.Fprintf(w, "Tools:    %s\n", lineList(r.Tools))
				}
				fmt.Fprintf(w, "\n%s\n", indent(r.Summary))
			}
		}
	})
}
