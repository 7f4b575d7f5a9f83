package main

import (
	"errors"
	"fmt"
	"io"
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
	return cut(*p, 7)
}

func derefOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func cmdSnapshot() *cli.Command {
	return &cli.Command{
		Name: "snapshot", Action: groupAction(nil),
		Subcommands: []*cli.Command{
			{
				Name: "create",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sign", Usage: "sign with this device's key (implied: the memory branch holds only signed snapshots)"},
					&cli.StringFlag{Name: "from", Usage: "snapshot `FILE` supplying roi, lineage, ledger, session or project"},
					jsonFlag,
				},
				Action: snapshotCreate,
			},
			{
				Name: "list", Aliases: []string{"ls"},
				Flags:  []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "mine", Usage: "only this device's timeline"}},
				Action: withMemory(snapshotList),
			},
			{
				Name: "show", ArgsUsage: "<id-prefix>", Flags: []cli.Flag{jsonFlag}, Action: withMemory(snapshotShow),
			},
			{
				Name: "verify", ArgsUsage: "<id-prefix>", Flags: []cli.Flag{jsonFlag}, Action: withMemory(snapshotVerify),
			},
			{
				Name: "restore", ArgsUsage: "<id-prefix>",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "git", Usage: "check out the snapshot's commit (only on a clean tree)"},
					&cli.StringFlag{Name: "out", Usage: "write the session slice as JSON to `FILE`"},
					forceFlag, jsonFlag,
				},
				Action: withMemory(snapshotRestore),
			},
			{
				Name: "publish", ArgsUsage: "<id-prefix>",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "out", Usage: "output `FILE` (default ./<id12>.ctxsnapshot.json)"}, forceFlag, jsonFlag},
				Action: withMemory(snapshotPublish),
			},
			{
				Name: "import", ArgsUsage: "<file>", Flags: []cli.Flag{jsonFlag}, Action: withMemory(snapshotImport),
			},
		},
	}
}

func snapshotCreate(c *cli.Context) error {
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
	return emit(c, output.NewSnapshot(id.DeviceID, res.Snapshot.TimelineEntry(), true), func(w io.Writer) {
		signed := ""
		if res.Snapshot.Signature != nil {
			signed = " [signed]"
		}
		fmt.Fprintf(w, "snapshot %s created%s\n  %s\n", snapshot.ShortID(res.Snapshot.SnapshotID), signed, res.Path)
	})
}

func snapshotList(c *cli.Context, m *workspace.Workspace) error {
	list, err := snapshots.List(c.Context, m, c.Bool("mine"))
	if err != nil {
		return err
	}
	return emit(c, output.NewSnapshotList(list), func(w io.Writer) { printSnapshotList(w, list) })
}

// printSnapshotList prints snapshot list's text.
func printSnapshotList(w io.Writer, list []snapshots.ListEntry) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No snapshots yet. Create one with: git ctx snapshot create")
		return
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
}

func snapshotShow(c *cli.Context, m *workspace.Workspace) error {
	prefix := c.Args().First()
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
	printSession(w, s.Session)
	return nil
}

func snapshotVerify(c *cli.Context, m *workspace.Workspace) error {
	prefix := c.Args().First()
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
	err = emit(c, output.SnapshotVerify{SnapshotID: s.SnapshotID, OK: outcome == snapshots.OK, Outcome: outcome}, func(w io.Writer) {
		switch outcome {
		case snapshots.OK:
			fmt.Fprintf(w, "OK: %s verified (signature + integrity)\n", id)
		case snapshots.Unsigned:
			fmt.Fprintf(w, "UNSIGNED: %s has no signature\n", id)
		default:
			fmt.Fprintf(w, "FAILED: %s signature or integrity check did not pass\n", id)
		}
	})
	return failedIf(err, outcome != snapshots.OK)
}

func snapshotRestore(c *cli.Context, m *workspace.Workspace) error {
	prefix := c.Args().First()
	res, err := snapshots.Restore(c.Context, m, prefix, c.Bool("git"), c.String("out"), c.Bool("force"))
	if err != nil {
		return err
	}
	if err := emit(c, output.NewSnapshotRestore(res, c.String("out")), func(w io.Writer) { printRestore(w, c.String("out"), res) }); err != nil {
		return err
	}
	switch res.Git {
	case snapshots.RestoreDirty:
		return fault.Wrap(fault.Failed, errors.New("working tree has uncommitted changes (commit or stash first): nothing was checked out"))
	case snapshots.RestoreFailed:
		return fault.Wrap(fault.Failed, fmt.Errorf("checkout of %s failed: %s", cut(res.Commit, 7), res.Detail))
	}
	return nil
}

// printRestore prints what snapshot restore did, as text.
func printRestore(w io.Writer, out string, res *snapshots.RestoreResult) {
	rs := res.Session
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
	if out != "" {
		fmt.Fprintf(w, "  wrote    %s\n", out)
	}
	switch commit := cut(res.Commit, 7); res.Git {
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

func snapshotPublish(c *cli.Context, m *workspace.Workspace) error {
	prefix := c.Args().First()
	path, s, err := snapshots.Publish(c.Context, m, prefix, c.String("out"), c.Bool("force"))
	if err != nil {
		return err
	}
	return emit(c, output.SnapshotPublish{SnapshotID: s.SnapshotID, Path: path, PublicKey: s.Signature.PublicKey}, func(w io.Writer) {
		fmt.Fprintf(w, "published %s → %s (signed, key %s)\n", snapshot.ShortID(s.SnapshotID), path, s.Signature.PublicKey)
	})
}

func snapshotImport(c *cli.Context, m *workspace.Workspace) error {
	res, err := snapshots.Import(c.Context, m, c.Args().First())
	if err != nil {
		return err
	}
	return emit(c, output.NewSnapshotImport(res), func(w io.Writer) { printImported(w, res) })
}

// printImported prints snapshot import's text.
func printImported(w io.Writer, res *snapshots.Imported) {
	id := snapshot.ShortID(res.Snapshot.SnapshotID)
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
}

func printSession(w io.Writer, s *snapshot.Session) {
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
