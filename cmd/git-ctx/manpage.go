//go:build !urfave_cli_no_docs

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// The man page generator: urfave/cli's roff renderer pulls in go-md2man and
// blackfriday, whose package initialisation every command would pay at
// start. Shipped builds (Makefile, install.sh) use the tag
// urfave_cli_no_docs and leave it out (manpage_nodocs.go); docs/git-ctx.1
// is the generated page, kept identical by TestManPageUpToDate, and
// install.sh installs it.

func cmdMan() *cli.Command {
	return &cli.Command{
		Name: "man", Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := manPage(c.App)
			if err != nil {
				return err
			}
			_, err = io.WriteString(c.App.Writer, page)
			return err
		},
	}
}

// manPage renders the man page: urfave/cli's roff, with git's naming (the
// page is git-ctx(1), which `git help ctx` and `git ctx --help` open).
func manPage(app *cli.App) (string, error) {
	app.Setup() // adds the help flag and command, as running the app does
	name := app.Name
	app.Name = "git-ctx"
	defer func() { app.Name = name }()
	page, err := app.ToManWithSection(1)
	if err != nil {
		return "", err
	}
	extra := `
.SH OUTPUT
On a terminal, the text of log, search, review, explain, session list, snapshot list and pkg list goes
through a pager, as git's log does: $GIT_PAGER, else git config core.pager, else $PAGER, else
less; an empty value or cat means none. The pager runs through sh -c with LESS=FRX and LV=-c
when they are unset; standard error is never paged; quitting the pager early does not change the
exit status. --json output is not paged. Global options before the command: -P/--no-pager never
pages, -p/--paginate pages any command. git config pager.ctx false pages nothing, true pages
every command, any other value is the pager to use.
.PP
log, search and review take --oneline and --format=FMT, and log and search --date=MODE
(relative, local, iso, iso-strict, rfc, short, unix, default; iso-strict when not given). Times
are shown in the local zone ($TZ); --json keeps UTC RFC 3339. FMT is oneline, short, full, or a
string of placeholders modelled on git's pretty formats, each checkpoint ended by a newline
("format:FMT" separates them instead): %H hash, %h short hash, %d device, %an (or %ae) author,
%ad date per --date, %ar %at %ai %aI %as the date as relative, unix, iso, iso-strict, short,
%s the summary's first line, %b the rest, %B all of it, %S session, %T turn, %m model,
%v verification status, %n newline, %% a percent sign, %Cred %Cgreen %Cblue %Creset and
%C(NAME ...) (bold, dim, ul, black, red, green, yellow, blue, magenta, cyan, white, reset)
colours, written only when colour is on, %C(auto) the hash yellow and the status green or red.
An unknown placeholder is a usage error (exit 2).
.PP
Colour (short hashes yellow, verification green or red, search matches bold): --color[=WHEN]
and --no-color, else NO_COLOR (any non-empty value: none), else git config color.ctx, else
color.ui (always; never or false; auto or true), else auto: on a terminal, or in a pager unless
color.pager is false, never with TERM=dumb. Never in --json.
.SH EXIT STATUS
` + exitStatus() + `
.SH ENVIRONMENT
.TP
.B GIT_CTX_HOME
where device identities live (default $XDG_DATA_HOME/git-ctx, else ~/.local/share/git-ctx)
.TP
.B GIT_CTX_SESSION, GIT_CTX_MODEL, GIT_CTX_TOOLS
defaults for recorded checkpoints
.TP
.B GIT_CTX_TRACE
when set, every git command git-ctx runs is logged on standard error
.TP
.B GIT_CTX_HOOK_SYNC
when set, the hooks record before they return (and print errors) instead of spooling for a background drain
.TP
.B GIT_CTX_HOOK_DEFER
when set, the post-commit hook spools the commit without starting the background drain: the next git ctx command records it
.TP
.B GIT_CTX_DISCOVERY
set to "git" to have git itself find the repository and read its configuration (by default the common layouts are read in process and everything else is asked of git)
.TP
.B GIT_CTX_PASSPHRASE_FD, REINSTATE_PASSPHRASE_FD
number of an open file descriptor git ctx session reads the passphrase from (else --passphrase-file, else a prompt on /dev/tty)
.TP
.B CLAUDE_CONFIG_DIR, CODEX_HOME
where Claude Code and Codex keep their sessions (default ~/.claude and ~/.codex)
.TP
.B NO_COLOR
any non-empty value: no colour (only --color=always overrides it)
.TP
.B GIT_PAGER, PAGER
the pager, as git chooses it (see OUTPUT); LESS defaults to FRX and LV to -c in the pager's environment
.TP
.B TZ
the zone times are shown in (text output; --json is UTC)
.SH FILES
.TP
.B refs/heads/ghyll/memory
the memory branch
.TP
.B <git-common-dir>/ctx/cache.db
the local SQLite cache (derived; git ctx reindex rebuilds it)
.TP
.B <git-common-dir>/ctx/sessions/
git ctx session's local state (state/), backups of replaced session files (backups/) and temporary export files (tmp/)
.TP
.B <git-common-dir>/ctx/spool/
commits and agent turns the hooks handed over and git-ctx has not recorded yet (git ctx status counts them)
.SH SEE ALSO
git(1), githooks(5); docs/FORMAT.md, docs/SECURITY.md and docs/PERFORMANCE.md in the source tree.
`
	return page + extra, nil
}

// exitStatus is the man page's EXIT STATUS line, from internal/fault's
// table of kinds and exit codes (the single source).
func exitStatus() string {
	parts := []string{"0 ok"}
	for _, k := range fault.Kinds() {
		parts = append(parts, fmt.Sprintf("%d %s", fault.ExitCode(k), k.Describe()))
	}
	return strings.Join(parts, "; ") + "."
}
