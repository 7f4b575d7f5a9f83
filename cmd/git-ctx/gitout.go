package main

// Git-like output: the pager (internal/pager) around every command, and
// for the log-like commands (log, search, review) --oneline, --format,
// --date and colour (internal/pretty).

import (
	"context"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/pager"
	"github.com/git-ctx/git-ctx/internal/pretty"
	"github.com/git-ctx/git-ctx/internal/termtext"
)

// globalFlags are git's paging options, given before the command
// (`git ctx --no-pager log`).
var globalFlags = []cli.Flag{
	&cli.BoolFlag{Name: "paginate", Aliases: []string{"p"}, Usage: "page the output of any command (on a terminal), as git -p"},
	&cli.BoolFlag{Name: "no-pager", Aliases: []string{"P"}, Usage: "do not page the output"},
}

// pagedCommands page by default (their text output, on a terminal).
var pagedCommands = map[string]bool{
	"log": true, "search": true, "review": true, "explain": true, "session list": true, "snapshot list": true, "pkg list": true,
}

// gitoutArgs prepares the command line for urfave/cli: the global flags
// stay in front of the command, the command's own flags are permuted
// (permuteArgs), and a bare --color (before "--") is git's --color=always.
func gitoutArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i := 1
	for ; i < len(args); i++ {
		switch args[i] {
		case "-p", "--paginate", "-P", "--no-pager":
			continue
		}
		break
	}
	global := args[1:i]
	cmd := append([]string{args[0]}, args[i:]...)
	for j := 1; j < len(cmd) && cmd[j] != "--"; j++ {
		if cmd[j] == "--color" { // before permuting: --color takes no separate value
			cmd[j] = "--color=always"
		}
	}
	rest := permuteArgs(app, cmd)
	return append(append([]string{args[0]}, global...), rest[1:]...)
}

// pageCommands wraps the action of every visible command so that its
// standard output goes through the pager when pagerOptions says so.
func pageCommands(cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		path := trimPath(parent + " " + cmd.Name)
		pageCommands(cmd.Subcommands, path)
		if cmd.Action == nil || cmd.Hidden {
			continue
		}
		action, pages := cmd.Action, pagedCommands[path]
		cmd.Action = func(c *cli.Context) error {
			return paged(c, pages, action)
		}
	}
}

func trimPath(p string) string {
	if len(p) > 0 && p[0] == ' ' {
		return p[1:]
	}
	return p
}

// paged runs action with c.App.Writer going to the pager (when one is
// chosen), and waits for the pager before returning. --json pages only
// with -p.
func paged(c *cli.Context, pages bool, action cli.ActionFunc) error {
	stdout := c.App.Writer
	w, done := pager.Wrap(stdout, pagerOptions(c, pages && !c.Bool("json")))
	if w == stdout {
		return action(c)
	}
	c.App.Writer = w
	defer func() {
		c.App.Writer = stdout
		done()
	}()
	return action(c)
}

// pagerOptions are the pager's inputs for this command.
func pagerOptions(c *cli.Context, pages bool) pager.Options {
	mode := pager.Default
	switch {
	case c.Bool("no-pager"):
		mode = pager.Never
	case c.Bool("paginate"):
		mode = pager.Always
	}
	return pager.Options{Mode: mode, Pages: pages, Getenv: os.LookupEnv, Config: gitConfig(c), Stderr: c.App.ErrWriter}
}

// gitConfig looks up git configuration the way the command sees it (the
// repository's, else the user's and the system's), read once per run on
// first use.
func gitConfig(c *cli.Context) func(key string) (string, bool) {
	const metaKey = "gitout.config"
	if f, ok := c.App.Metadata[metaKey].(func(string) (string, bool)); ok {
		return f
	}
	var values func(key string) []string
	f := func(key string) (string, bool) {
		if values == nil {
			values = readGitConfig(c.Context)
		}
		v := values(key)
		if len(v) == 0 {
			return "", false
		}
		return v[len(v)-1], true
	}
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[metaKey] = f
	return f
}

// readGitConfig reads the configuration: the repository's (in process
// when it can), else, outside a repository, `git config --list`'s.
func readGitConfig(ctx context.Context) func(key string) []string {
	if r, err := gitrepo.Open(ctx, "."); err == nil {
		return r.ConfigAll
	}
	out, _ := gitexec.Git(ctx, ".", "config", "-z", "--list")
	m := gitrepo.ParseConfigList(out)
	return func(key string) []string { return m[gitrepo.CanonicalKey(key)] }
}

// viewerClock is where times are shown: the zone of $TZ (read at each
// call, so an in-process test's environment decides it) and the present.
func viewerClock() pretty.Clock {
	tz, set := os.LookupEnv("TZ")
	return pretty.Clock{Loc: pretty.Location(tz, set), Now: time.Now()}
}

// prettyFlags are the output flags of the log-like commands; withDate
// adds --date.
func prettyFlags(withDate bool) []cli.Flag {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "oneline", Usage: "one line per checkpoint: the short hash and the summary's first line"},
		&cli.StringFlag{Name: "format", Aliases: []string{"pretty"}, Usage: "print each checkpoint as `FMT`: oneline, short, full, or a string of placeholders (%h %H %d %an %ad %s %b %S %T %m %v %n …, see the man page)"},
		&cli.StringFlag{Name: "color", Usage: "colour the text `WHEN`: always, never or auto (a bare --color is always)"},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour (as --color=never)"},
	}
	if withDate {
		flags = append(flags, &cli.StringFlag{Name: "date", Usage: "show times as `MODE`: relative, local, iso, iso-strict (the default), rfc, short, unix or default; in the local zone ($TZ)"})
	}
	return flags
}

// textStyle is how a log-like command prints its text: a --format (nil
// for the command's own lines) and the style (date mode, clock, colour).
type textStyle struct {
	format *pretty.Format
	pretty.Style
}

// newTextStyle reads --oneline, --format, --date and the colour flags. A
// bad value is a usage error; with --json colour is off.
func newTextStyle(c *cli.Context) (*textStyle, error) {
	st := &textStyle{Style: pretty.Style{Clock: viewerClock()}}
	var err error
	if st.Date, err = pretty.ParseDateMode(c.String("date")); err != nil {
		return nil, fault.New(fault.Usage, "--date: %v", err)
	}
	switch {
	case c.IsSet("format") && c.Bool("oneline"):
		return nil, fault.New(fault.Usage, "--oneline and --format exclude each other")
	case c.Bool("oneline"):
		st.format = pretty.Oneline()
	case c.IsSet("format"):
		if st.format, err = pretty.Parse(c.String("format")); err != nil {
			return nil, fault.New(fault.Usage, "--format: %v (see 'git ctx %s --help')", err, c.Command.Name)
		}
	}
	if c.Bool("json") {
		return st, nil
	}
	flag := pretty.ColorUnset
	switch {
	case c.Bool("no-color"):
		flag = pretty.ColorNever
	case c.IsSet("color"):
		if flag, err = pretty.ParseColorWhen(c.String("color")); err != nil {
			return nil, fault.New(fault.Usage, "--color: %v", err)
		}
	}
	w := c.App.Writer
	_, gitPaging := os.LookupEnv("GIT_PAGER_IN_USE")
	st.Color, err = pretty.UseColor(pretty.ColorInputs{Flag: flag, NoColor: os.Getenv("NO_COLOR"), Config: gitConfig(c),
		Terminal: pager.IsTerminal(w), Paging: pager.Paging(w) || gitPaging, Term: os.Getenv("TERM")})
	if err != nil {
		return nil, fault.New(fault.Config, "%v", err)
	}
	return st, nil
}

// plainStyle is the text style of commands without output flags: local
// times in iso-strict, no colour.
func plainStyle() *textStyle {
	return &textStyle{Style: pretty.Style{Date: pretty.DateISOStrict, Clock: viewerClock()}}
}

// entryRecord is what a format shows of a checkpoint.
func entryRecord(e *cache.Entry) pretty.Record {
	status := "verified"
	if !e.Verified {
		status = "unverified"
	}
	return pretty.Record{Hash: e.Hash, Device: e.DeviceID, Author: e.AuthorID, Session: e.SessionID, Turn: e.Turn,
		Model: e.ActiveModel, Summary: e.Summary, Time: tsTime(e.Timestamp), Status: status}
}

// entry prints checkpoint number i of a listing: in the --format, or as
// the command's line (tail, already safe, replacing the summary when not
// empty).
func (st *textStyle) entry(w io.Writer, i int, e *cache.Entry, tail string) {
	if st.format != nil {
		st.format.Print(w, i, entryRecord(e), st.Style)
		return
	}
	st.entryLine(w, e, tail)
}

// entryLine is the command's own line for a checkpoint: short hash
// (yellow), time, device, session/turn, UNVERIFIED (red) and the summary
// or tail.
func (st *textStyle) entryLine(w io.Writer, e *cache.Entry, tail string) {
	mark := ""
	if !e.Verified {
		mark = " " + pretty.Paint(st.Color, pretty.Red, "UNVERIFIED")
	}
	text := tail
	if text == "" {
		text = termtext.Line(firstLine(e.Summary))
	}
	io.WriteString(w, pretty.Paint(st.Color, pretty.Yellow, termtext.Line(shortHash(e.Hash)))+" "+
		pretty.FormatDate(tsTime(e.Timestamp), st.Date, st.Clock)+" "+termtext.Line(e.DeviceID)+" "+
		termtext.Line(orDash(e.SessionID))+"/"+strconv.Itoa(e.Turn)+mark+" "+text+"\n")
}
