package main

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/hooks"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/recall"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "post-commit", Usage: "the post-commit hook (and post-merge, for merge commits): one checkpoint per commit"},
		&cli.BoolFlag{Name: "pre-push", Usage: "the pre-push hook: push ghyll/memory alongside your pushes"},
		&cli.StringSliceFlag{Name: "agent", Usage: "agent hooks: `claude` (Stop and SessionStart hooks in .claude/settings.local.json) or codex (notify in ~/.codex/config.toml)"},
		&cli.BoolFlag{Name: "mcp", Usage: "with --agent: register the MCP server 'git ctx mcp' (claude: the project's .mcp.json; codex: [mcp_servers.git-ctx] in ~/.codex/config.toml)"},
		&cli.BoolFlag{Name: "force", Usage: "replace an edited git-ctx stub, write despite a hook manager or into a hooks directory inside the work tree, or replace Codex's notify"},
		&cli.BoolFlag{Name: "global", Usage: "allow writing where every repository of yours looks (Codex's ~/.codex/config.toml, a core.hooksPath set in your global git config); uninstall: remove such an entry even if other repositories use it"},
	}
}

func selection(c *cli.Context) (hooks.Selection, error) {
	sel := hooks.Selection{PostCommit: c.Bool("post-commit"), PrePush: c.Bool("pre-push"), MCP: c.Bool("mcp")}
	for _, a := range c.StringSlice("agent") {
		switch strings.ToLower(a) {
		case "claude":
			sel.Claude = true
		case "codex":
			sel.Codex = true
		default:
			return sel, fault.New(fault.Usage, "--agent takes claude or codex, not %q", a)
		}
	}
	if sel.MCP && !sel.Claude && !sel.Codex {
		return sel, fault.New(fault.Usage, "--mcp registers the MCP server with an agent: add --agent claude or --agent codex")
	}
	return sel, nil
}

func hookOptions(c *cli.Context) hooks.Options {
	return hooks.Options{Force: c.Bool("force"), Global: c.Bool("global")}
}

func cmdHooks() *cli.Command {
	return &cli.Command{
		Name: "hooks",
		Subcommands: []*cli.Command{
			{Name: "install", Flags: append(selectionFlags(), jsonFlag), Action: hooksInstall},
			{Name: "uninstall", Flags: append(selectionFlags(), jsonFlag), Action: hooksUninstall},
			{Name: "status", Flags: []cli.Flag{jsonFlag}, Action: hooksStatus},
		},
	}
}

func hooksInstall(c *cli.Context) error {
	sel, err := selection(c)
	if err != nil {
		return err
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	var res output.HooksInstall
	if tip, err := m.Store.Tip(); err == nil && tip.IsZero() {
		_, adopted, err := initBranch(c.Context, m, "")
		if err != nil {
			return err
		}
		res.Initialized = true
		if adopted != nil && !c.Bool("json") {
			// What the verified merge rejected is quarantined and listed by
			// 'git ctx log --unverified'; the hooks are installed anyway.
			printPull(c.App.Writer, adopted)
		}
		if aerr := adoptedErr(adopted); aerr != nil {
			// Exit 0 (the hooks are the command's work), but never silently:
			// with --json too, standard error says records were refused.
			fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: %s\n", termtext.Line(aerr.Error()))
		}
	}
	lines, err := hooks.Install(c.Context, m.Repo, sel, hookOptions(c))
	_, lerr := exec.LookPath("git-ctx")
	res.Messages, res.OnPath = append([]string{}, lines...), lerr == nil
	switch {
	case c.Bool("json") && err == nil:
		if werr := output.Write(c.App.Writer, res); werr != nil {
			return werr
		}
	case c.Bool("json"):
		printLines(c.App.ErrWriter, lines) // nothing on standard output when it fails
	default:
		if res.Initialized {
			fmt.Fprintln(c.App.Writer, "Initialised the memory branch ghyll/memory")
		}
		printLines(c.App.Writer, lines)
	}
	if errors.Is(err, hooks.ErrManaged) || errors.Is(err, hooks.ErrShared) {
		return fault.Wrap(fault.Refused, err)
	}
	if errors.Is(err, hooks.ErrModified) {
		return fault.Wrap(fault.Conflict, err)
	}
	if !res.OnPath && err == nil {
		fmt.Fprintln(c.App.ErrWriter, "git-ctx: warning: git-ctx is not on PATH, so the hooks will only print how to fix that; run ./install.sh")
	}
	return err
}

// printLines prints each line as it is (hooks' messages, already made
// safe by the hooks package).
func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

func hooksUninstall(c *cli.Context) error {
	sel, err := selection(c)
	if err != nil {
		return err
	}
	r, err := gitrepo.Open(c.Context, ".")
	if err != nil {
		return err
	}
	lines, err := hooks.Uninstall(c.Context, r, sel, hookOptions(c))
	switch {
	case c.Bool("json") && err == nil:
		return output.Write(c.App.Writer, output.HooksUninstall{Messages: append([]string{}, lines...)})
	case c.Bool("json"):
		printLines(c.App.ErrWriter, lines)
	default:
		printLines(c.App.Writer, lines)
	}
	if errors.Is(err, hooks.ErrModified) {
		return fault.Wrap(fault.Conflict, err)
	}
	return err
}

func hooksStatus(c *cli.Context) error {
	r, err := gitrepo.Open(c.Context, ".")
	if err != nil {
		return err
	}
	st, err := hooks.GetStatus(c.Context, r, exec.LookPath)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return output.Write(c.App.Writer, output.NewHooksStatus(st))
	}
	w := c.App.Writer
	for _, h := range st.Hooks {
		fmt.Fprintf(w, "%-12s %s\n", h.Hook, hookState(h))
	}
	fmt.Fprintf(w, "%-12s %v\n", "claude", map[bool]string{true: "installed", false: "not installed"}[st.Claude])
	fmt.Fprintf(w, "%-12s %v\n", "codex", map[bool]string{true: "installed", false: "not installed"}[st.Codex])
	claudeMCP := output.MCPRegistration(st.ClaudeMCP)
	if claudeMCP == "other" {
		claudeMCP = "another server is registered as git-ctx (hooks install --agent claude --mcp --force replaces it)"
	}
	fmt.Fprintf(w, "%-12s %s\n", "claude mcp", claudeMCP)
	fmt.Fprintf(w, "%-12s %v\n", "codex mcp", map[bool]string{true: "registered", false: "not registered"}[st.CodexMCP])
	if len(st.Managers) > 0 {
		fmt.Fprintf(w, "hook managers: %s\n", strings.Join(st.Managers, ", "))
	}
	if st.BinaryPath == "" {
		fmt.Fprintln(w, "git-ctx is not on PATH: hooks cannot run it (run ./install.sh)")
	}
	if st.LastRun != "" {
		fmt.Fprintf(w, "last hook run: %s\n", termtext.Line(st.LastRun))
	}
	return nil
}

// hookState describes how one hook is wired, for hooks status's text.
func hookState(h hooks.HookState) string {
	state := "not installed"
	switch {
	case h.Installed && h.Modified:
		state = "installed (stub edited by hand)"
	case h.Installed && h.OldForm:
		state = "installed (stub, old form that starts git-ctx on every commit: run 'git ctx hooks install' to update it)"
	case h.Installed:
		state = "installed (" + h.Via + ")"
	case h.Foreign:
		state = "not installed (another hook is there: install chains to it)"
	}
	if h.Chained {
		state += ", runs the previous hook first"
	}
	if h.Shared {
		state += ", in a hooks directory every repository shares"
	}
	return state
}

// cmdHook is what the installed hooks run. It never fails the git command
// or agent that called it: problems are one warning line on stderr, and the
// exit status is 0.
func cmdHook() *cli.Command {
	return &cli.Command{
		Name: "hook", ArgsUsage: "<name> [args...]", Hidden: true,
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			args := c.Args().Tail()
			start := time.Now()
			var out hooks.Outcome
			var err error
			switch name {
			case hooks.PostCommit, hooks.PostMerge:
				out, err = hooks.RecordCommit(c.Context, ".", name)
			case "drain":
				// Started detached by the hooks: low priority, nothing printed.
				// Each entry's outcome goes to hooks.log under its hook's name.
				_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
				if r, rerr := gitrepo.Open(c.Context, "."); rerr != nil || !hooks.HasSpool(r) {
					return nil
				}
				if m, oerr := workspace.Open(c.Context, "."); oerr == nil {
					_, _ = hooks.DrainDetached(c.Context, m)
				}
				return nil
			case hooks.PrePush:
				if len(args) == 0 {
					return nil
				}
				out, err = hooks.PushAlongside(c.Context, ".", args[0])
			case "claude-stop":
				out, err = hooks.RecordClaudeTurn(c.Context, c.App.Reader)
			case "session-start":
				// Claude Code's SessionStart hook: the briefing is the one thing
				// a hook prints on standard output (Claude Code adds it to the
				// session's context).
				err = recall.SessionStart(c.Context, c.App.Reader, c.App.Writer)
			case "codex-notify":
				if len(args) == 0 {
					return nil
				}
				out, err = hooks.RecordCodexTurn(c.Context, args[len(args)-1])
			default:
				return fault.New(fault.Usage, "unknown hook %q", name)
			}
			if r, rerr := gitrepo.Open(c.Context, "."); rerr == nil && !out.Spooled {
				hooks.Log(r, name, time.Since(start), err)
			}
			switch {
			case errors.Is(err, gitstore.ErrNotInitialized):
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: %s hook: memory not initialised: run 'git ctx init'\n", name)
			case err != nil:
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: %s hook: %s\n", name, termtext.Line(strings.ReplaceAll(err.Error(), "\n", " ")))
			case out.Message != "":
				fmt.Fprintf(c.App.ErrWriter, "git-ctx: %s\n", termtext.Line(out.Message))
			}
			return nil
		},
	}
}
