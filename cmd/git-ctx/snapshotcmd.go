package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/formats/snapshot"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/memory"
)

// snapshotJSON is a timeline entry as `snapshot list --json` prints it: the
// reference's TimelineEntry keys plus the device whose timeline holds it and
// whether that device vouches for the entry with a timeline line signature.
type snapshotJSON struct {
	SnapshotID  string  `json:"snapshot_id"`
	ParentID    *string `json:"parent_id"`
	CreatedAt   string  `json:"created_at"`
	GitCommit   *string `json:"git_commit"`
	GitBranch   *string `json:"git_branch"`
	TokensSaved uint64  `json:"tokens_saved"`
	Signed      bool    `json:"signed"`
	Device      string  `json:"device"`
	LineSigned  bool    `json:"line_signed"`
}

func toSnapshotJSON(device string, e snapshot.TimelineEntry, lineSigned bool) snapshotJSON {
	return snapshotJSON{e.SnapshotID, e.ParentID, e.CreatedAt, e.GitCommit, e.GitBranch, e.TokensSaved, e.Signed, device, lineSigned}
}

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
				Action: func(c *cli.Context) error {
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
							return fault.New(fault.Refused, "--from %s: %w", f, err)
						}
					}
					m, err := openMemory(c)
					if err != nil {
						return err
					}
					memory.SnapshotProducer = version
					// Always signed: pull accepts only timeline entries signed by a
					// device key, so an unsigned snapshot would never sync.
					res, err := m.CreateSnapshot(c.Context, true, from)
					if err != nil {
						return err
					}
					id, _ := m.Identity()
					if c.Bool("json") {
						return printJSON(c.App.Writer, toSnapshotJSON(id.DeviceID, res.Snapshot.TimelineEntry(), true))
					}
					signed := ""
					if res.Snapshot.Signature != nil {
						signed = " [signed]"
					}
					fmt.Fprintf(c.App.Writer, "snapshot %s created%s\n  %s\n", snapshot.ShortID(res.Snapshot.SnapshotID), signed, res.Path)
					return nil
				},
			},
			{
				Name: "list", Aliases: []string{"ls"}, Usage: "list this repository's snapshots, newest first",
				Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "mine", Usage: "only this device's timeline"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 0 {
						return fault.New(fault.Usage, "snapshot list takes no arguments")
					}
					m, err := openMemory(c)
					if err != nil {
						return err
					}
					list, err := m.ListSnapshots(c.Context, c.Bool("mine"))
					if err != nil {
						return err
					}
					w := c.App.Writer
					if c.Bool("json") {
						out := make([]snapshotJSON, 0, len(list))
						for _, e := range list {
							out = append(out, toSnapshotJSON(e.Device, e.TimelineEntry, e.LineSigned))
						}
						return printJSON(w, out)
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
				},
			},
			{
				Name: "show", Usage: "show one snapshot", ArgsUsage: "<id-prefix>", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					prefix, m, err := argAndMemory(c, "snapshot id")
					if err != nil {
						return err
					}
					sh, err := m.ShowSnapshot(c.Context, prefix)
					if err != nil {
						return err
					}
					w, s := c.App.Writer, sh.Snapshot
					if c.Bool("json") {
						fmt.Fprintf(w, "%s\n", sh.Raw)
						return nil
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
				},
			},
			{
				Name: "verify", Usage: "check a stored snapshot's integrity and signature", ArgsUsage: "<id-prefix>",
				Action: func(c *cli.Context) error {
					prefix, m, err := argAndMemory(c, "snapshot id")
					if err != nil {
						return err
					}
					s, outcome, err := m.VerifySnapshot(c.Context, prefix)
					if errors.Is(err, memory.ErrNotFound) || errors.Is(err, memory.ErrAmbiguous) || errors.Is(err, snapshot.ErrParse) ||
						err != nil && s != nil {
						fmt.Fprintf(c.App.ErrWriter, "ERROR: %s\n", termtext.Line(err.Error()))
						return silent(fault.Failed)
					}
					if err != nil {
						return err
					}
					id := snapshot.ShortID(s.SnapshotID)
					switch outcome {
					case memory.SnapshotOK:
						fmt.Fprintf(c.App.Writer, "OK: %s verified (signature + integrity)\n", id)
						return nil
					case memory.SnapshotUnsigned:
						fmt.Fprintf(c.App.Writer, "UNSIGNED: %s has no signature\n", id)
					default:
						fmt.Fprintf(c.App.Writer, "FAILED: %s signature or integrity check did not pass\n", id)
					}
					return silent(fault.Failed)
				},
			},
			{
				Name: "restore", Usage: "print a snapshot's session slice for the agent to resume", ArgsUsage: "<id-prefix>",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "git", Usage: "check out the snapshot's commit (only on a clean tree)"},
					&cli.StringFlag{Name: "out", Usage: "write the session slice as JSON to `FILE`"},
					forceFlag,
				},
				Action: func(c *cli.Context) error {
					prefix, m, err := argAndMemory(c, "snapshot id")
					if err != nil {
						return err
					}
					res, err := m.RestoreSnapshot(c.Context, prefix, c.Bool("git"), c.String("out"), c.Bool("force"))
					if err != nil {
						return err
					}
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
					case memory.RestoreNotTouched:
						if commit != "" {
							fmt.Fprintf(w, "  git      not touched — rerun with --git to check out %s\n", commit)
						} else {
							fmt.Fprintln(w, "  git      not touched")
						}
					case memory.RestoreNoAnchor:
						fmt.Fprintln(w, "  git      no commit anchor to check out")
					case memory.RestoreDirty:
						fmt.Fprintln(w, "  git      SKIPPED — working tree has uncommitted changes (commit or stash first)")
						return fault.New(fault.Failed, "working tree has uncommitted changes (commit or stash first): nothing was checked out")
					case memory.RestoreCheckedOut:
						fmt.Fprintf(w, "  git      checked out %s\n", commit)
					case memory.RestoreFailed:
						fmt.Fprintf(w, "  git      checkout failed: %s\n", termtext.Line(res.Detail))
						return fault.New(fault.Failed, "checkout of %s failed: %s", commit, res.Detail)
					}
					return nil
				},
			},
			{
				Name: "publish", Usage: "write a signed, pretty snapshot file to share", ArgsUsage: "<id-prefix>",
				Flags: []cli.Flag{&cli.StringFlag{Name: "out", Usage: "output `FILE` (default ./<id12>.ctxsnapshot.json)"}, forceFlag},
				Action: func(c *cli.Context) error {
					prefix, m, err := argAndMemory(c, "snapshot id")
					if err != nil {
						return err
					}
					path, s, err := m.PublishSnapshot(c.Context, prefix, c.String("out"), c.Bool("force"))
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "published %s → %s (signed, key %s)\n", snapshot.ShortID(s.SnapshotID), path, s.Signature.PublicKey)
					return nil
				},
			},
			{
				Name: "import", Usage: "check a snapshot file and append it to this device's timeline", ArgsUsage: "<file>",
				Action: func(c *cli.Context) error {
					file, m, err := argAndMemory(c, "file")
					if err != nil {
						return err
					}
					res, err := m.ImportSnapshot(c.Context, file)
					if err != nil {
						// A file that cannot be read or that the snapshot format
						// rejects is a verification failure (exit 1).
						return fault.Default(fault.Failed, err)
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
				},
			},
		},
	}
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
func argAndMemory(c *cli.Context, what string) (string, *memory.Memory, error) {
	arg, err := oneArg(c, what)
	if err != nil {
		return "", nil, err
	}
	m, err := openMemory(c)
	return arg, m, err
}
