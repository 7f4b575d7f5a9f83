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
no colour in output
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
