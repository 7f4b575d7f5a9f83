package main

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/fileverify"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func cmdVerify() *cli.Command {
	return &cli.Command{
		Name: "verify", ArgsUsage: "[FILE...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "public key `PUB.pem` for offline verification"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return verifyFiles(c)
			}
			if c.IsSet("key") {
				return fault.New(fault.Usage, "--key applies to verifying files")
			}
			return withMemory(verifyBranch)(c)
		},
	}
}

func verifyBranch(c *cli.Context, m *workspace.Workspace) error {
	rep, err := checkpoints.Verify(c.Context, m)
	if err != nil {
		return err
	}
	err = emit(c, output.NewVerify(rep), func(w io.Writer) {
		line := termtext.Line
		for _, ch := range rep.Chains {
			if ch.Failure != nil {
				fmt.Fprintf(w, "FAIL %s\n", line(ch.Failure.Error()))
				continue
			}
			fmt.Fprintf(w, "OK   device %s: %d checkpoints%s\n", line(ch.Device), ch.Verified, line(rulesNote(ch.Rules)))
		}
		for _, tl := range rep.Timelines {
			if tl.Failure != nil {
				fmt.Fprintf(w, "FAIL device %s: snapshot timeline %s\n", line(tl.Device), line(tl.Failure.Error()))
				continue
			}
			note := ""
			if tl.Unsigned > 0 {
				note = fmt.Sprintf(" (%d on unsigned legacy timeline lines)", tl.Unsigned)
			}
			fmt.Fprintf(w, "OK   device %s: %d snapshots%s\n", line(tl.Device), tl.Verified, note)
		}
		for _, pk := range rep.Packages {
			if pk.Reason != "" {
				fmt.Fprintf(w, "FAIL package %s@%s (%s): %s: %s\n", line(pk.Name), line(pk.Version), line(pk.Path), line(pk.Reason), line(pk.Detail))
				continue
			}
			fmt.Fprintf(w, "OK   package %s@%s\n", line(pk.Name), line(pk.Version))
		}
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "FAIL %s: %s\n", line(p.Path), line(p.Reason))
		}
		if rep.OK {
			fmt.Fprintf(w, "verified %d checkpoints in %d chains at %s\n", rep.Verified(), len(rep.Chains), rep.Commit[:12])
		}
	})
	if err == nil && !rep.OK {
		fmt.Fprintln(c.App.ErrWriter, "git-ctx: verification failed: see the FAIL lines; 'git ctx show HASH' prints a record")
		return silent(fault.Failed)
	}
	return err
}

func rulesNote(rules map[checkpoint.Rule]int) string {
	if len(rules) <= 1 {
		for r := range rules {
			if r != checkpoint.RuleSeedV1 {
				return " (rule " + string(r) + ")"
			}
		}
		return ""
	}
	keys := make([]checkpoint.Rule, 0, len(rules))
	for r := range rules {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	s := " ("
	for i, r := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d", r, rules[r])
	}
	return s + ")"
}

func verifyFiles(c *cli.Context) error {
	var keys fileverify.KeySource
	if p := c.String("key"); p != "" {
		k, err := fileverify.FixedKey(p)
		if err != nil {
			return fault.Wrap(fault.Usage, err)
		}
		keys = k
	} else if m, err := openMemory(c); err == nil {
		keys = fileverify.BranchKeys(m.Store)
	} else if !errors.Is(err, gitrepo.ErrNotARepo) {
		return err
	}
	results := make([]fileverify.Result, 0, c.NArg())
	allValid, refused := true, false
	for _, f := range c.Args().Slice() {
		r := fileverify.Verify(f, keys)
		results = append(results, r)
		allValid = allValid && r.Valid
		refused = refused || r.Refused
	}
	err := emit(c, output.NewVerifiedFiles(results), func(w io.Writer) {
		for _, r := range results {
			if r.Valid {
				fmt.Fprintf(w, "%s: OK %s %s (rule %s, key from %s)\n", termtext.Line(r.File), r.Format, termtext.Line(r.ID), r.Rule, termtext.Line(r.KeySource))
			} else {
				fmt.Fprintf(w, "%s: FAIL %s: %s\n", termtext.Line(r.File), r.Format, termtext.Line(r.Error))
			}
		}
	})
	if err == nil && refused {
		return silent(fault.Refused)
	}
	return failedIf(err, !allValid)
}
