package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/git-ctx/git-ctx/internal/explain"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/pretty"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

// isTerminal asks the terminal driver (a character device such as
// /dev/null is not a terminal).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// netOptions: prompts only with a terminal on stdin; git's progress on
// stderr only when stderr is a terminal and not --quiet.
func netOptions(c *cli.Context) ctxsync.Options {
	opt := ctxsync.Options{Interactive: isTerminal(os.Stdin)}
	if !c.Bool("quiet") && isTerminal(os.Stderr) {
		opt.Progress = c.App.ErrWriter
	}
	return opt
}

var quietFlag = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"}

// pushFlags are the flags of the commands that push.
var pushFlags = []cli.Flag{
	&cli.BoolFlag{Name: "force-first-push", Usage: "allow creating ghyll/memory on a remote with no branches"},
	jsonFlag, quietFlag,
}

// withRemote is the action of a command that talks to a remote: run gets
// the opened memory and the remote its [REMOTE] argument resolves to.
func withRemote(run func(c *cli.Context, m *workspace.Workspace, remote string) error) cli.ActionFunc {
	return withMemory(func(c *cli.Context, m *workspace.Workspace) error {
		remote, err := ctxsync.ResolveRemote(m.Repo, c.Args().First())
		if err != nil {
			return err
		}
		return run(c, m, remote)
	})
}

// pushOptions are the options of a push from the command line.
func pushOptions(c *cli.Context, opt ctxsync.Options) ctxsync.PushOptions {
	return ctxsync.PushOptions{Options: opt, ForceFirstPush: c.Bool("force-first-push")}
}

func printPull(w io.Writer, r *ctxsync.PullResult) {
	switch {
	case r.Fetched == "":
		fmt.Fprintf(w, "%s has no memory branch yet\n", termtext.Line(r.Remote))
		return
	case r.UpToDate:
		fmt.Fprintf(w, "Memory is up to date with %s\n", termtext.Line(r.Remote))
		return
	}
	for _, l := range r.Summary() {
		fmt.Fprintln(w, termtext.Line(l))
	}
	fmt.Fprintf(w, "Merged %d checkpoints from %s into ghyll/memory (%s)\n", r.Added, termtext.Line(r.Remote), shortRange(r.Before, r.After))
}

// cut is the first n characters of a commit id or hash, the whole of a
// shorter one ("" stays "").
func cut(h string, n int) string {
	if len(h) > n {
		return h[:n]
	}
	return h
}

func shortRange(a, b string) string {
	s := func(h string) string {
		if h == "" {
			return "new"
		}
		return h[:12]
	}
	return s(a) + ".." + s(b)
}

func cmdPull() *cli.Command {
	return &cli.Command{
		Name: "pull", ArgsUsage: "[REMOTE]",
		Flags: []cli.Flag{jsonFlag, quietFlag},
		Action: withRemote(func(c *cli.Context, m *workspace.Workspace, remote string) error {
			res, err := ctxsync.Pull(c.Context, m, remote, netOptions(c))
			if err != nil {
				return err
			}
			if err := emit(c, output.NewPull(res), func(w io.Writer) {
				if !c.Bool("quiet") {
					printPull(w, res)
				}
			}); err != nil {
				return err
			}
			return res.Err()
		}),
	}
}

func cmdPush() *cli.Command {
	return &cli.Command{
		Name: "push", ArgsUsage: "[REMOTE]", Flags: pushFlags,
		Action: withRemote(func(c *cli.Context, m *workspace.Workspace, remote string) error {
			res, err := ctxsync.Push(c.Context, m, remote, pushOptions(c, netOptions(c)))
			if err != nil {
				return err
			}
			return reportPush(c, res)
		}),
	}
}

func reportPush(c *cli.Context, res *ctxsync.PushResult) error {
	// The most serious outcome decides the exit code: a fork outranks a
	// rejection.
	err := emit(c, output.NewPush(res), func(w io.Writer) {
		if c.Bool("quiet") {
			return
		}
		for _, p := range res.Pulls {
			printPull(w, p)
		}
		fmt.Fprintf(w, "Pushed ghyll/memory to %s at %s\n", termtext.Line(res.Remote), res.Pushed[:12])
	})
	if err != nil {
		return err
	}
	return res.Err()
}

func cmdSync() *cli.Command {
	return &cli.Command{
		Name: "sync", ArgsUsage: "[REMOTE]", Flags: pushFlags,
		Action: withRemote(func(c *cli.Context, m *workspace.Workspace, remote string) error {
			opt := netOptions(c)
			pr, err := ctxsync.Pull(c.Context, m, remote, opt)
			if err != nil {
				return err
			}
			if !c.Bool("json") && !c.Bool("quiet") {
				printPull(c.App.Writer, pr)
			}
			res, err := ctxsync.Push(c.Context, m, remote, pushOptions(c, opt))
			if err != nil {
				return err
			}
			res.Pulls = append([]*ctxsync.PullResult{pr}, res.Pulls...)
			if c.Bool("json") {
				return reportPush(c, res)
			}
			pulls := res.Pulls
			res.Pulls = res.Pulls[1:]
			err = reportPush(c, res)
			if e := pr.Err(); e != nil && (err == nil || errors.Is(e, ctxsync.ErrFork)) {
				err = e
			}
			res.Pulls = pulls
			return err
		}),
	}
}

func cmdDevices() *cli.Command {
	trust := func(name string, trusted bool) *cli.Command {
		return &cli.Command{
			Name: name, ArgsUsage: "ID",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "trust an id this clone has not seen yet (no key on a memory branch, nothing rejected)"}, jsonFlag},
			Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
				if err := ctxsync.SetTrust(c.Context, m, c.Args().First(), trusted, c.Bool("force")); err != nil {
					return err
				}
				state := map[bool]string{true: "trusted", false: "untrusted"}[trusted]
				key := map[bool]string{true: "trustedDevice", false: "untrustedDevice"}[trusted]
				return emit(c, output.Trust{Device: c.Args().First(), Trust: state, Config: "ctx." + key}, func(w io.Writer) {
					fmt.Fprintf(w, "Device %s is now %s (git config ctx.%s)\n", termtext.Line(c.Args().First()), state, key)
				})
			}),
		}
	}
	return &cli.Command{
		Name:  "devices",
		Flags: []cli.Flag{jsonFlag},
		Subcommands: []*cli.Command{
			trust("trust", true), trust("untrust", false),
		},
		Action: groupAction(withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			list, err := ctxsync.Devices(c.Context, m)
			if err != nil {
				return err
			}
			return emit(c, output.NewDevices(list), func(w io.Writer) { printDevices(w, list) })
		})),
	}
}

// printDevices prints devices' text.
func printDevices(w io.Writer, list []ctxsync.DeviceInfo) {
	for _, d := range list {
		me := ""
		if d.This {
			me = " (this device)"
		}
		last := "-"
		if d.LastSeen > 0 {
			last = formatTS(d.LastSeen)
		}
		unv := ""
		if d.Unverified > 0 {
			unv = fmt.Sprintf(", %d unverified", d.Unverified)
		}
		same := ""
		if len(d.SameKeyAs) > 0 {
			same = ", same key as " + termtext.Line(strings.Join(d.SameKeyAs, ", "))
		}
		fmt.Fprintf(w, "%-32s %-25s %-10s %6d checkpoints%s, last %s%s%s\n", termtext.Line(d.ID), termtext.Line(orDash(d.Fingerprint)),
			termtext.Line(d.Trust), d.Checkpoints, unv, last, me, same)
	}
}

func cmdReview() *cli.Command {
	return &cli.Command{
		Name: "review", ArgsUsage: "[RANGE]",
		Flags: append([]cli.Flag{jsonFlag}, prettyFlags(false)...),
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) (err error) {
			format, st, err := reviewStyle(c)
			if err != nil {
				return err
			}
			rng := c.Args().First()
			if rng != "" {
				// A code range is explained commit by commit; the memory
				// branch's own history is reviewed as records added.
				onMemory, err := explain.OnMemoryBranch(c.Context, m, rng)
				if err != nil {
					return err
				}
				if !onMemory {
					if format == "" && (c.Bool("oneline") || c.IsSet("format")) {
						return fault.New(fault.Usage, "a code range takes --format markdown (or text); --oneline and other formats review the memory branch")
					}
					return reviewCode(c, m, rng, format)
				}
			}
			if format == "markdown" {
				return fault.New(fault.Usage, "--format markdown reviews a code range (e.g. main..feature), not the memory branch")
			}
			if rng == "" {
				if rng, err = ctxsync.DefaultReviewRange(c.Context, m); err != nil {
					return err
				}
			}
			commits, err := ctxsync.Review(c.Context, m, rng)
			if err != nil {
				return err
			}
			return emit(c, output.NewReview(commits), func(w io.Writer) { printReviewStyled(w, rng, commits, st) })
		}),
	}
}

// printReview prints commits as review's text. A checkpoint file that
// does not parse, or names no hash, is shown by its path: the branch, not
// git-ctx, decides what a file holds.
func printReview(w io.Writer, rng string, commits []ctxsync.ReviewCommit) {
	printReviewStyled(w, rng, commits, plainStyle())
}

// printReviewStyled is printReview with the output flags: a checkpoint's
// line in the --format when one is given, colours when on.
func printReviewStyled(w io.Writer, rng string, commits []ctxsync.ReviewCommit, st *textStyle) {
	line := termtext.Line
	if len(commits) == 0 {
		fmt.Fprintf(w, "Nothing to review in %s\n", line(rng))
	}
	for _, rc := range commits {
		fmt.Fprintf(w, "commit %s %s\n", pretty.Paint(st.Color, pretty.Yellow, line(cut(rc.Commit, 12))), line(rc.Subject))
		for _, r := range rc.Records {
			switch {
			case r.Kind == "checkpoint" && r.Hash != "" && st.format != nil:
				rec := pretty.Record{Hash: r.Hash, Device: r.Device, Session: r.Session, Turn: r.Turn, Summary: r.Summary, Status: r.Status}
				fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(st.format.Render(rec, st.Style), "\n", "\n  "))
			case r.Kind == "checkpoint" && r.Hash != "":
				fmt.Fprintf(w, "  + checkpoint %s by %s (%s/%d) %s: %s\n", pretty.Paint(st.Color, pretty.Yellow, line(cut(r.Hash, 12))), line(orDash(r.Device)),
					line(orDash(r.Session)), r.Turn, pretty.Paint(st.Color, pretty.StatusColor(r.Status), line(r.Status)), line(r.Summary))
			case r.Kind == "device_key":
				fmt.Fprintf(w, "  + device key %s %s: %s\n", line(r.Device), line(r.Hash), line(r.Status))
			case r.Kind == "package":
				fmt.Fprintf(w, "  + package %s %s: %s\n", line(orDash(r.Summary)), line(r.Path), line(r.Status))
			default:
				fmt.Fprintf(w, "  ! %s: %s\n", line(r.Path), line(r.Status))
			}
		}
	}
}
