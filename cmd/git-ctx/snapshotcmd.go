package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/snapshots"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

func short7(p *string) string {
	if p == nil || *p == "" {
		return "-------"
	}
	if len(*p) > 7 {
		return (*p)[:7]
	}
	return *p
}

func derefOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", fault.New(fault.Usage, "snapshot %s takes one %s (see 'git ctx snapshot %s --help')", c.Command.Name, what, c.Command.Name)
	}
	return c.Args().First(), nil
}

func cmdSnapshot() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "context snapshots (lean-ctx Context Snapshot v1) on the memory branch",
		Description: "Snapshots record the state an agent works in (git anchor, project, session slice) as\n" +
			"lean-ctx Context Snapshot v1 files under repos/<repo-id>/snapshots/ on the memory branch, each\n" +
			"appended to this device's timeline (ctx-v1 layout only). IDs resolve by unique prefix.\n\n" +
			"Examples:\n  git ctx snapshot create --sign\n  git ctx snapshot list\n  git ctx snapshot verify 3f2a9c\n" +
			"  git ctx snapshot publish 3f2a9c --out ctx.json\n  git ctx snapshot import 3f2a9c4d1e0b.ctxsnapshot.json\n" +
			"  git ctx snapshot restore 3f2a9c --git",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownSubcommand(c, "snapshot")
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "build a snapshot of this repository and append it to this device's timeline",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sign", Usage: "sign with this device's key (implied: the memory branch holds only signed snapshots)"},
					&cli.StringFlag{Name: "from", Usage: "snapshot `FILE` supplying roi, lineage, ledger, session or project"},
					jsonFlag,
				},
				Action: snapshotCreate,
			},
			{
				Name: "list", Aliases: []string{"ls"}, Usage: "list this repository's snapshots, newest first",
				Flags:  []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "mine", Usage: "only this device's timeline"}},
				Action: snapshotList,
			},
			{
				Name: "show", Usage: "show one snapshot", ArgsUsage: "<id-prefix>", Flags: []cli.Flag{jsonFlag},
				Action: snapshotShow,
			},
			{
				Name: "verify", Usage: "check a stored snapshot's integrity and signature", ArgsUsage: "<id-prefix>",
				Flags: []cli.Flag{jsonFlag}, Action: snapshotVerify,
			},
			{
				Name: "restore", Usage: "print a snapshot's session slice for the agent to resume", ArgsUsage: "<id-prefix>",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "git", Usage: "check out the snapshot's commit (only on a clean tree)"},
					&cli.StringFlag{Name: "out", Usage: "write the session slice as JSON to `FILE`"},
					forceFlag, jsonFlag,
				},
				Action: snapshotRestore,
			},
			{
				Name: "publish", Usage: "write a signed, pretty snapshot file to share", ArgsUsage: "<id-prefix>",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "out", Usage: "output `FILE` (default ./<id12>.ctxsnapshot.json)"}, forceFlag, jsonFlag},
				Action: snapshotPublish,
			},
			{
				Name: "import", Usage: "check a snapshot file and append it to this device's timeline", ArgsUsage: "<file>",
				Flags: []cli.Flag{jsonFlag}, Action: snapshotImport,
			},
		},
	}
}

func snapshotCreate(c *cli.Context) error {
	if c.NArg() != 0 {
		return fault.New(fault.Usage, "snapshot create takes no arguments")
	}
	var from *snapshot.Snapshot
	if f := c.String("from"); f != "" {
		data, err := readLimited(f, snapshot.MaxFileSize)
		if err != nil {
			return err
		}
		if from, err = snapshot.ParseFile(data); err != nil {
			return fault.Wrap(fault.Refused, fmt.Errorf("--from %s: %w", f, err))
		}
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	// Always signed: pull accepts only timeline entries signed by a
	// device key, so an unsigned snapshot would never sync.
	res, err := snapshots.Create(c.Context, m, snapshots.CreateOptions{Sign: true, From: from, Producer: version})
	if err != nil {
		return err
	}
	id, _ := m.Identity()
	if c.Bool("json") {
		return output.Write(c.App.Writer, output.NewSnapshot(id.DeviceID, res.Snapshot.TimelineEntry(), true))
	}
	signed := ""
	if res.Snapshot.Signature != nil {
		signed = " [signed]"
	}
	fmt.Fprintf(c.App.Writer, "snapshot %s created%s\n  %s\n", snapshot.ShortID(res.Snapshot.SnapshotID), signed, res.Path)
	return nil
}

func snapshotList(c *cli.Context) error {
	if c.NArg() != 0 {
		return fault.New(fault.Usage, "snapshot list takes no arguments")
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	list, err := snapshots.List(c.Context, m, c.Bool("mine"))
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		return output.Write(w, output.NewSnapshotList(list))
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "No snapshots yet. Create one with: git ctx snapshot create")
		return nil
	}
	fmt.Fprintf(w, "%d snapshot(s):\n", len(list))
	for _, e := range list {
		signed := ""
		if e.Signed {
			signed = " [signed]"
		}
		if !e.LineSigned {
			signed += " [unsigned timeline line]"
		}
		line := termtext.Line
		fmt.Fprintf(w, "  %s  %s  %s %s  saved %d tok  %s%s\n", line(snapshot.ShortID(e.SnapshotID)), line(e.CreatedAt),
			line(short7(e.GitCommit)), line(derefOr(e.GitBranch, "-")), e.TokensSaved, line(e.Device), signed)
	}
	return nil
}

func snapshotShow(c *cli.Context) error {
	prefix, m, err := argAndMemory(c, "snapshot id")
	if err != nil {
		return err
	}
	sh, err := snapshots.Show(c.Context, m, prefix)
	if err != nil {
		return err
	}
	w, s := c.App.Writer, sh.Snapshot
	if c.Bool("json") {
		return output.WriteStored(w, sh.Raw)
	}
	line := termtext.Line
	fmt.Fprintf(w, "snapshot %s\n", line(s.SnapshotID))
	fmt.Fprintf(w, "Parent:   %s\nCreated:  %s\nVersion:  %s\n", line(derefOr(s.ParentID, "-")), line(s.CreatedAt), line(s.LeanCtxVersion))
	fmt.Fprintf(w, "Git:      %s %s (dirty: %t)\n", line(derefOr(s.Git.Commit, "-")), line(derefOr(s.Git.Branch, "-")), s.Git.Dirty)
	fmt.Fprintf(w, "Project:  root %s, identity %s\n", line(derefOr(s.Project.RootHash, "-")), line(derefOr(s.Project.IdentityHash, "-")))
	fmt.Fprintf(w, "ROI:      %d in, %d out, %d saved\n", s.ROI.InputTokens, s.ROI.OutputTokens, s.ROI.TokensSaved)
	fmt.Fprintf(w, "Lineage:  %d item(s) (%d recorded)\nLedger:   %d item(s)\n", len(s.Lineage.Items), s.Lineage.ItemsRecorded, len(s.Ledger.Items))
	if s.Signature != nil {
		fmt.Fprintf(w, "Signed:   %s %s\n", line(s.Signature.Algorithm), line(s.Signature.PublicKey))
	} else {
		fmt.Fprintln(w, "Signed:   no")
	}
	fmt.Fprintf(w, "Devices:  %s\n", line(fmt.Sprint(sh.Devices)))
	if len(sh.Unsigned) > 0 {
		fmt.Fprintf(w, "Unsigned: %s (listed on an unsigned legacy timeline line: not vouched for by that device)\n", line(fmt.Sprint(sh.Unsigned)))
	}
	printSession(c, s.Session)
	return nil
}

func snapshotVerify(c *cli.Context) error {
	prefix, m, err := argAndMemory(c, "snapshot id")
	if err != nil {
		return err
	}
	s, outcome, err := snapshots.Verify(c.Context, m, prefix)
	if errors.Is(err, workspace.ErrNotFound) || errors.Is(err, workspace.ErrAmbiguous) || errors.Is(err, snapshot.ErrParse) ||
		err != nil && s != nil {
		fmt.Fprintf(c.App.ErrWriter, "ERROR: %s\n", termtext.Line(err.Error()))
		return silent(fault.Failed)
	}
	if err != nil {
		return err
	}
	id := snapshot.ShortID(s.SnapshotID)
	if c.Bool("json") {
		if err := output.Write(c.App.Writer, output.SnapshotVerify{SnapshotID: s.SnapshotID, OK: outcome == snapshots.OK,
			Outcome: outcome}); err != nil {
			return err
		}
	} else {
		switch outcome {
		case snapshots.OK:
			fmt.Fprintf(c.App.Writer, "OK: %s verified (signature + integrity)\n", id)
		case snapshots.Unsigned:
			fmt.Fprintf(c.App.Writer, "UNSIGNED: %s has no signature\n", id)
		default:
			fmt.Fprintf(c.App.Writer, "FAILED: %s signature or integrity check did not pass\n", id)
		}
	}
	if outcome != snapshots.OK {
		return silent(fault.Failed)
	}
	return nil
}

func snapshotRestore(c *cli.Context) error {
	prefix, m, err := argAndMemory(c, "snapshot id")
	if err != nil {
		return err
	}
	res, err := snapshots.Restore(c.Context, m, prefix, c.Bool("git"), c.String("out"), c.Bool("force"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := output.Write(c.App.Writer, output.NewSnapshotRestore(res, c.String("out"))); err != nil {
			return err
		}
	} else {
		printRestore(c, res)
	}
	commit := res.Commit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	switch res.Git {
	case snapshots.RestoreDirty:
		return fault.Wrap(fault.Failed, errors.New("working tree has uncommitted changes (commit or stash first): nothing was checked out"))
	case snapshots.RestoreFailed:
		return fault.Wrap(fault.Failed, fmt.Errorf("checkout of %s failed: %s", commit, res.Detail))
	}
	return nil
}

// printRestore prints what snapshot restore did, as text.
func printRestore(c *cli.Context, res *snapshots.RestoreResult) {
	w, rs := c.App.Writer, res.Session
	fmt.Fprintf(w, "restored from snapshot %s\n", snapshot.ShortID(rs.SnapshotID))
	if !rs.HasSession {
		fmt.Fprintln(w, "  session  (snapshot carried no session slice)")
	} else {
		if rs.Task != nil {
			if rs.ProgressPct != nil {
				fmt.Fprintf(w, "  session  task: %s (%d%%)\n", termtext.Line(*rs.Task), *rs.ProgressPct)
			} else {
				fmt.Fprintf(w, "  session  task: %s\n", termtext.Line(*rs.Task))
			}
		}
		fmt.Fprintf(w, "  session  +%d decision(s), +%d file(s) resumed\n", len(rs.Decisions), len(rs.FilesTouched))
		for _, d := range rs.Decisions {
			fmt.Fprintf(w, "  decision %s\n", termtext.Line(d))
		}
		for _, f := range rs.FilesTouched {
			fmt.Fprintf(w, "  file     %s\n", termtext.Line(f))
		}
	}
	if out := c.String("out"); out != "" {
		fmt.Fprintf(w, "  wrote    %s\n", out)
	}
	commit := res.Commit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	switch res.Git {
	case snapshots.RestoreNotTouched:
		if commit != "" {
			fmt.Fprintf(w, "  git      not touched — rerun with --git to check out %s\n", commit)
		} else {
			fmt.Fprintln(w, "  git      not touched")
		}
	case snapshots.RestoreNoAnchor:
		fmt.Fprintln(w, "  git      no commit anchor to check out")
	case snapshots.RestoreDirty:
		fmt.Fprintln(w, "  git      SKIPPED — working tree has uncommitted changes (commit or stash first)")
	case snapshots.RestoreCheckedOut:
		fmt.Fprintf(w, "  git      checked out %s\n", commit)
	case snapshots.RestoreFailed:
		fmt.Fprintf(w, "  git      checkout failed: %s\n", termtext.Line(res.Detail))
	}
}

func snapshotPublish(c *cli.Context) error {
	prefix, m, err := argAndMemory(c, "snapshot id")
	if err != nil {
		return err
	}
	path, s, err := snapshots.Publish(c.Context, m, prefix, c.String("out"), c.Bool("force"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return output.Write(c.App.Writer, output.SnapshotPublish{SnapshotID: s.SnapshotID, Path: path, PublicKey: s.Signature.PublicKey})
	}
	fmt.Fprintf(c.App.Writer, "published %s → %s (signed, key %s)\n", snapshot.ShortID(s.SnapshotID), path, s.Signature.PublicKey)
	return nil
}

func snapshotImport(c *cli.Context) error {
	file, m, err := argAndMemory(c, "file")
	if err != nil {
		return err
	}
	res, err := snapshots.Import(c.Context, m, file)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return output.Write(c.App.Writer, output.NewSnapshotImport(res))
	}
	w, id := c.App.Writer, snapshot.ShortID(res.Snapshot.SnapshotID)
	if res.Existed {
		fmt.Fprintf(w, "snapshot %s already imported (%s)\n", id, res.Path)
	} else {
		fmt.Fprintf(w, "imported snapshot %s → %s\n", id, res.Path)
	}
	if res.Unsigned {
		fmt.Fprintln(w, "provenance unsigned — no provenance")
		fmt.Fprintln(w, "signed with this device's key for the memory branch (the id is unchanged)")
	} else {
		fmt.Fprintf(w, "provenance signed by %s (signature verified)\n", res.Snapshot.Signature.PublicKey)
	}
	return nil
}

func printSession(c *cli.Context, s *snapshot.Session) {
	w := c.App.Writer
	if s == nil {
		fmt.Fprintln(w, "Session:  none")
		return
	}
	fmt.Fprintf(w, "Session:  %s\nTask:     %s\n", termtext.Line(derefOr(s.SessionID, "-")), termtext.Line(derefOr(s.Task, "-")))
	for _, d := range s.Decisions {
		fmt.Fprintf(w, "  decision %s\n", termtext.Line(d))
	}
	for _, f := range s.FilesTouched {
		fmt.Fprintf(w, "  file     %s\n", termtext.Line(f))
	}
}

func readLimited(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fault.New(fault.Refused, "%s is %d bytes (limit %d)", path, fi.Size(), max)
	}
	return os.ReadFile(path)
}

// argAndMemory takes the one argument a verb needs and opens the memory.
func argAndMemory(c *cli.Context, what string) (string, *workspace.Workspace, error) {
	arg, err := oneArg(c, what)
	if err != nil {
		return "", nil, err
	}
	m, err := openMemory(c)
	return arg, m, err
}
