package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/internal/fault"
)

// The man page and the shell completions are generated from the same
// command definitions as the help, so they cannot drift from the CLI.

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

// exitStatus is the man page's EXIT STATUS line, from internal/fault's
// table of kinds and exit codes (the single source).
func exitStatus() string {
	parts := []string{"0 ok"}
	for _, k := range fault.Kinds() {
		parts = append(parts, fmt.Sprintf("%d %s", fault.ExitCode(k), k.Describe()))
	}
	return strings.Join(parts, "; ") + "."
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

func cmdCompletion() *cli.Command {
	return &cli.Command{
		Name: "completion", ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				return writeBash(c.App.Writer, c.App)
			case "zsh":
				return writeZsh(c.App.Writer, c.App)
			case "fish":
				return writeFish(c.App.Writer, c.App)
			}
			return fault.New(fault.Usage, "completion takes bash, zsh or fish")
		},
	}
}

type cmdInfo struct {
	path  string // "hooks install"
	words []string
	flags []string
	usage string
}

// commandTree lists every visible command path with its flags.
func commandTree(app *cli.App) (top []string, all []cmdInfo) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(prefix + " " + c.Name)
			if prefix == "" {
				top = append(top, c.Name)
			}
			info := cmdInfo{path: p, usage: c.Usage}
			for _, s := range c.Subcommands {
				if !s.Hidden {
					info.words = append(info.words, s.Name)
				}
			}
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if len(n) == 1 {
						info.flags = append(info.flags, "-"+n)
					} else {
						info.flags = append(info.flags, "--"+n)
					}
				}
			}
			info.flags = append(info.flags, "--help")
			sort.Strings(info.flags)
			all = append(all, info)
			walk(p, c.Subcommands)
		}
	}
	walk("", app.Commands)
	sort.Strings(top)
	return top, all
}

func writeBash(w io.Writer, app *cli.App) error {
	top, all := commandTree(app)
	_, err := fmt.Fprintf(w, `# bash completion for git-ctx (generated by 'git-ctx completion bash').
# Defines _git_ctx, which git's completion calls for "git ctx <TAB>", and
# completes the git-ctx command itself.

__git_ctx_words() {
	# $1: index of the first word after "ctx" / "git-ctx"; prints the
	# command path typed so far and sets __git_ctx_cur.
	local i path="" w
	for ((i = $1; i < cword; i++)); do
		w=${words[i]}
		case "$w" in
		-*) ;;
		*) if __git_ctx_is_path "${path:+$path }$w"; then path="${path:+$path }$w"; fi ;;
		esac
	done
	printf '%%s' "$path"
}

__git_ctx_is_path() {
	case "$1" in
%s	esac
	return 1
}

__git_ctx_opts() {
	local opts=""
	case "$1" in
%s		"") opts=%q ;;
	esac
	printf '%%s' "$opts"
}

_git_ctx() {
	# Called by git's completion with cur, words and cword set.
	local start=2
	[[ ${words[0]} == git-ctx ]] && start=1
	local path
	path=$(__git_ctx_words $start)
	local opts
	opts=$(__git_ctx_opts "$path")
	if declare -F __gitcomp >/dev/null 2>&1; then
		__gitcomp "$opts"
	else
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	fi
}

__git_ctx_main() {
	local cur=${COMP_WORDS[COMP_CWORD]} words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	local path
	path=$(__git_ctx_words 1)
	COMPREPLY=($(compgen -W "$(__git_ctx_opts "$path")" -- "$cur"))
}
complete -o default -F __git_ctx_main git-ctx
`, shellCases(all, "\t%[1]q) return 0 ;;\n"), shellCases(all, "\t\t%[1]q) opts=%[2]q ;;\n"), strings.Join(top, " "))
	return err
}

// shellCases is a line of format for each command path; format takes
// the path as argument 1 and, if it wants, the words that may follow it
// (subcommands, then flags) as argument 2.
func shellCases(all []cmdInfo, format string) string {
	var b strings.Builder
	for _, c := range all {
		fmt.Fprintf(&b, format, c.path, strings.Join(append(append([]string{}, c.words...), c.flags...), " "))
	}
	return b.String()
}

func writeZsh(w io.Writer, app *cli.App) error {
	top, all := commandTree(app)
	_, err := fmt.Fprintf(w, `#compdef git-ctx
# zsh completion for git-ctx (generated by 'git-ctx completion zsh'). Also
# completes "git ctx" through zsh's git completion (user-commands).
zstyle ':completion:*:*:git:*' user-commands ctx:'keep coding agents'"'"' memory in git'
_git-ctx() {
  local -a opts words_typed
  local path="" w
  for w in ${words[2,CURRENT-1]}; do
    [[ $w == -* || $w == ctx ]] && continue
    case "${path:+$path }$w" in
%s      *) continue ;;
    esac
    path="${path:+$path }$w"
  done
  case "$path" in
%s    "") opts=(%s) ;;
  esac
  compadd -- $opts
}
_git-ctx "$@"
`, shellCases(all, "      %[1]q) ;;\n"), shellCases(all, "    %[1]q) opts=(%[2]s) ;;\n"), strings.Join(top, " "))
	return err
}

func writeFish(w io.Writer, app *cli.App) error {
	top, all := commandTree(app)
	fmt.Fprintln(w, "# fish completion for git-ctx (generated by 'git-ctx completion fish').")
	fmt.Fprintln(w, "complete -c git-ctx -f")
	for _, c := range all {
		if !strings.Contains(c.path, " ") {
			fmt.Fprintf(w, "complete -c git-ctx -n '__fish_use_subcommand' -a %s -d %q\n", c.path, c.usage)
			fmt.Fprintf(w, "complete -c git -n '__fish_git_using_command ctx; and not __fish_seen_subcommand_from %s' -a %s -d %q\n", strings.Join(top, " "), c.path, c.usage)
		}
		last := c.path[strings.LastIndex(c.path, " ")+1:]
		for _, f := range c.flags {
			if strings.HasPrefix(f, "--") {
				fmt.Fprintf(w, "complete -c git-ctx -n '__fish_seen_subcommand_from %s' -l %s\n", last, f[2:])
			}
		}
		for _, s := range c.words {
			fmt.Fprintf(w, "complete -c git-ctx -n '__fish_seen_subcommand_from %s' -a %s\n", last, s)
		}
	}
	return nil
}
