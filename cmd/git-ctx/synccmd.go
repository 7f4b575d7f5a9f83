package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
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

// openRemote opens the memory and resolves the [REMOTE] argument.
func openRemote(c *cli.Context) (*workspace.Workspace, string, error) {
	if c.NArg() > 1 {
		return nil, "", fault.New(fault.Usage, "%s takes at most one remote", c.Command.Name)
	}
	m, err := openMemory(c)
	if err != nil {
		return nil, "", err
	}
	remote, err := ctxsync.ResolveRemote(m.Repo, c.Args().First())
	return m, remote, err
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

// cut12 is the first 12 characters of a commit id or hash ("" stays "").
func cut12(h string) string {
	if len(h) > 12 {
		return h[:12]
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
		Name:      "pull",
		Usage:     "fetch a remote's memory branch, verify everything new, merge what verified",
		ArgsUsage: "[REMOTE]",
		Description: "Fetches into refs/remotes/REMOTE/ghyll/memory, then checks every new record: its file name, hash\n" +
			"and chain entry agree, its signature verifies under the device's pinned key, its chain extends\n" +
			"what this branch holds, and nothing lies outside the layout. What verified is merged; the rest is\n" +
			"quarantined (git ctx log --unverified) and the exit code says so: 1 rejected records, 6 a fork or\n" +
			"a package conflict (a rewritten package, or one of yours withdrawn for the remote's copy).\n" +
			"REMOTE defaults to git config ctx.remote, the current branch's upstream, then origin.\n\n" +
			"Examples:\n  git ctx pull\n  git ctx pull upstream --json",
		Flags: []cli.Flag{jsonFlag, quietFlag},
		Action: func(c *cli.Context) error {
			m, remote, err := openRemote(c)
			if err != nil {
				return err
			}
			res, err := ctxsync.Pull(c.Context, m, remote, netOptions(c))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := output.Write(c.App.Writer, output.NewPull(res)); err != nil {
					return err
				}
			} else if !c.Bool("quiet") {
				printPull(c.App.Writer, res)
			}
			return res.Err()
		},
	}
}

func cmdPush() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "push the memory branch; when the remote moved, pull, merge and retry (never force)",
		ArgsUsage: "[REMOTE]",
		Description: "Refuses to create ghyll/memory as the only branch of an empty remote (hosts would make it the\n" +
			"default branch) unless --force-first-push.\n\nExamples:\n  git ctx push\n  git ctx push origin",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force-first-push", Usage: "allow creating ghyll/memory on a remote with no branches"},
			jsonFlag, quietFlag,
		},
		Action: func(c *cli.Context) error {
			m, remote, err := openRemote(c)
			if err != nil {
				return err
			}
			res, err := ctxsync.Push(c.Context, m, remote, ctxsync.PushOptions{Options: netOptions(c), ForceFirstPush: c.Bool("force-first-push")})
			if err != nil {
				return err
			}
			return reportPush(c, res)
		},
	}
}

func reportPush(c *cli.Context, res *ctxsync.PushResult) error {
	// The most serious outcome decides the exit code: a fork outranks a
	// rejection.
	pullErr := res.Err()
	if c.Bool("json") {
		if err := output.Write(c.App.Writer, output.NewPush(res)); err != nil {
			return err
		}
	} else if !c.Bool("quiet") {
		for _, p := range res.Pulls {
			printPull(c.App.Writer, p)
		}
		fmt.Fprintf(c.App.Writer, "Pushed ghyll/memory to %s at %s\n", termtext.Line(res.Remote), res.Pushed[:12])
	}
	return pullErr
}

func cmdSync() *cli.Command {
	return &cli.Command{
		Name:        "sync",
		Usage:       "pull, then push",
		ArgsUsage:   "[REMOTE]",
		Description: "Example:\n  git ctx sync",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force-first-push", Usage: "allow creating ghyll/memory on a remote with no branches"},
			jsonFlag, quietFlag,
		},
		Action: func(c *cli.Context) error {
			m, remote, err := openRemote(c)
			if err != nil {
				return err
			}
			opt := netOptions(c)
			pr, err := ctxsync.Pull(c.Context, m, remote, opt)
			if err != nil {
				return err
			}
			if !c.Bool("json") && !c.Bool("quiet") {
				printPull(c.App.Writer, pr)
			}
			res, err := ctxsync.Push(c.Context, m, remote, ctxsync.PushOptions{Options: opt, ForceFirstPush: c.Bool("force-first-push")})
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
		},
	}
}

func cmdDevices() *cli.Command {
	trust := func(name string, trusted bool, usage string) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "ID",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "trust an id this clone has not seen yet (no key on a memory branch, nothing rejected)"}, jsonFlag},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fault.New(fault.Usage, "devices %s takes one device id", name)
				}
				m, err := openMemory(c)
				if err != nil {
					return err
				}
				if err := ctxsync.SetTrust(c.Context, m, c.Args().First(), trusted, c.Bool("force")); err != nil {
					return err
				}
				state := map[bool]string{true: "trusted", false: "untrusted"}[trusted]
				key := map[bool]string{true: "trustedDevice", false: "untrustedDevice"}[trusted]
				if c.Bool("json") {
					return output.Write(c.App.Writer, output.Trust{Device: c.Args().First(), Trust: state, Config: "ctx." + key})
				}
				fmt.Fprintf(c.App.Writer, "Device %s is now %s (git config ctx.%s)\n", termtext.Line(c.Args().First()), state, key)
				return nil
			},
		}
	}
	return &cli.Command{
		Name:  "devices",
		Usage: "list devices and their trust; trust or untrust one",
		Description: "Trust is pinned on first use (a device's key on the local branch never changes), or, with\n" +
			"git config ctx.trust allowlist, only devices named in ctx.trustedDevice are merged.\n\n" +
			"Examples:\n  git ctx devices\n  git ctx devices trust bob-laptop-3f2a9c1d\n  git ctx devices --json",
		Flags: []cli.Flag{jsonFlag},
		Subcommands: []*cli.Command{
			trust("trust", true, "accept a device's records (adds it to ctx.trustedDevice)"),
			trust("untrust", false, "never merge a device's records (adds it to ctx.untrustedDevice)"),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownSubcommand(c, "devices")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			list, err := ctxsync.Devices(c.Context, m)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.NewDevices(list))
			}
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
				fmt.Fprintf(c.App.Writer, "%-32s %-25s %-10s %6d checkpoints%s, last %s%s%s\n", termtext.Line(d.ID), termtext.Line(orDash(d.Fingerprint)),
					termtext.Line(d.Trust), d.Checkpoints, unv, last, me, same)
			}
			return nil
		},
	}
}

func cmdReview() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "show what each memory-branch commit adds, by which device, verified or not",
		ArgsUsage: "[RANGE]",
		Description: "RANGE defaults to what a push would send (REMOTE/ghyll/memory..ghyll/memory), else what the\n" +
			"last pull brought, else the whole branch. A single commit shows just that commit.\n\n" +
			"Examples:\n  git ctx review\n  git ctx review origin/ghyll/memory..ghyll/memory --json",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return fault.New(fault.Usage, "review takes at most one range")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			rng := c.Args().First()
			if rng == "" {
				if rng, err = ctxsync.DefaultReviewRange(c.Context, m); err != nil {
					return err
				}
			}
			commits, err := ctxsync.Review(c.Context, m, rng)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.NewReview(commits))
			}
			printReview(c.App.Writer, rng, commits)
			return nil
		},
	}
}

// printReview prints commits as review's text. A checkpoint file that
// does not parse, or names no hash, is shown by its path: the branch, not
// git-ctx, decides what a file holds.
func printReview(w io.Writer, rng string, commits []ctxsync.ReviewCommit) {
	line := termtext.Line
	if len(commits) == 0 {
		fmt.Fprintf(w, "Nothing to review in %s\n", line(rng))
	}
	for _, rc := range commits {
		fmt.Fprintf(w, "commit %s %s\n", line(cut12(rc.Commit)), line(rc.Subject))
		for _, r := range rc.Records {
			switch {
			case r.Kind == "checkpoint" && r.Hash != "":
				fmt.Fprintf(w, "  + checkpoint %s by %s (%s/%d) %s: %s\n", line(cut12(r.Hash)), line(orDash(r.Device)),
					line(orDash(r.Session)), r.Turn, line(r.Status), line(r.Summary))
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
