package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/hooks"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/explain"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/pretty"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

func openMemory(c *cli.Context) (*workspace.Workspace, error) {
	m, err := workspace.Open(c.Context, ".")
	if err != nil {
		return nil, err
	}
	drainSpool(c, m)
	if quiet(c) {
		return m, nil
	}
	m.Notice = func(s string) { fmt.Fprintf(c.App.ErrWriter, "git-ctx: %s\n", termtext.Line(s)) }
	if f, ok := c.App.ErrWriter.(*os.File); ok && isTerminal(f) {
		start, shown := time.Now(), false
		m.Progress = func(done int) {
			switch {
			case done < 0 && shown:
				fmt.Fprint(c.App.ErrWriter, "\r\x1b[K")
				shown = false
			case done >= 0 && time.Since(start) > time.Second:
				fmt.Fprintf(c.App.ErrWriter, "\rgit-ctx: indexed %d checkpoints…", done)
				shown = true
			}
		}
	}
	return m, nil
}

// drainSpool records what the hooks spooled before a command reads or
// writes the memory (so push sends it and log shows it); status and doctor
// only report it. A failed drain is a warning: the entries stay spooled.
func drainSpool(c *cli.Context, m *workspace.Workspace) {
	switch c.Command.Name {
	case "status", "doctor":
		return
	}
	if !hooks.HasSpool(m.Repo) {
		return
	}
	if _, err := hooks.Drain(c.Context, m); err != nil && !errors.Is(err, gitstore.ErrNotInitialized) {
		fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: spooled hook entries not recorded yet: %s\n", termtext.Line(strings.ReplaceAll(err.Error(), "\n", " ")))
	}
}

// withMemory is the action of a command that works on this repository's
// memory: run gets the opened workspace.
func withMemory(run func(c *cli.Context, m *workspace.Workspace) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		m, err := openMemory(c)
		if err != nil {
			return err
		}
		return run(c, m)
	}
}

// quiet: -q/--quiet on the command, or GIT_CTX_QUIET set (for hooks and
// scripts): no notices and no progress, only errors.
func quiet(c *cli.Context) bool {
	return os.Getenv("GIT_CTX_QUIET") != "" || c.Bool("quiet")
}

func cmdInit() *cli.Command {
	return &cli.Command{
		Name: "init",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "layout", Usage: "layout of a new branch: ctx-v1 or ghyll-v1", Value: ""},
			&cli.StringFlag{Name: "remote", Usage: "remote to exchange memory with (sets git config ctx.remote)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			var layout gitstore.Layout
			if s := c.String("layout"); s != "" {
				l, err := gitstore.ParseLayout(s)
				if err != nil {
					return fault.New(fault.Usage, "%v", err)
				}
				layout = l
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			if r := c.String("remote"); r != "" {
				if m.Repo.Config("remote."+r+".url") == "" {
					return fault.New(fault.Config, "no remote named %q: add it with 'git remote add %s URL'", r, r)
				}
				if err := setConfig(c, m, "ctx.remote", r); err != nil {
					return err
				}
			}
			id, err := m.Identity()
			if err != nil {
				return err
			}
			res, adopted, err := initBranch(c.Context, m, layout)
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				out := output.Init{Device: id.DeviceID, Fingerprint: checkpoint.Fingerprint(id.Public),
					IdentityCreated: id.Created, Created: res.Created || adopted != nil, Layout: string(res.Layout), Tip: res.Tip.String(),
					Published: res.Published, Remote: c.String("remote"), RepoID: res.RepoID, Notes: res.Notes}
				if adopted != nil {
					p := output.NewPull(adopted)
					out.FromRemote = &p
				}
				if err := output.Write(w, out); err != nil {
					return err
				}
				return adoptedErr(adopted)
			}
			if id.Created {
				fmt.Fprintf(w, "Created device identity %s (key %s) in %s\n", id.DeviceID, checkpoint.Fingerprint(id.Public), id.KeyPath)
			}
			switch {
			case adopted != nil:
				printPull(w, adopted)
				fmt.Fprintf(w, "Initialised memory branch ghyll/memory from %s (layout %s) at %s\n", termtext.Line(adopted.Remote), res.Layout, res.Tip.String()[:12])
			case res.Created:
				fmt.Fprintf(w, "Initialised memory branch ghyll/memory (layout %s) at %s\n", res.Layout, res.Tip.String()[:12])
			default:
				fmt.Fprintf(w, "Memory branch ghyll/memory already initialised (layout %s)\n", res.Layout)
			}
			if res.Published {
				fmt.Fprintf(w, "Published key of device %s\n", id.DeviceID)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(w, "Note: %s\n", n)
			}
			return adoptedErr(adopted)
		},
	}
}

// initBranch initialises the memory branch. A clone without one whose
// memory remote's branch was fetched starts from it through the pull's
// verified merge (sync.AdoptFetched; adopted is that merge's result, nil
// when there was nothing to adopt), never from its unverified tip; then
// Init publishes this device's key.
func initBranch(ctx context.Context, m *workspace.Workspace, layout gitstore.Layout) (res workspace.InitReport, adopted *ctxsync.PullResult, err error) {
	if remote := m.Repo.MemoryRemote(); remote != "" {
		if err := fetchedLayoutMismatch(m, remote, layout); err != nil {
			return res, nil, err
		}
		if adopted, err = ctxsync.AdoptFetched(ctx, m, remote); err != nil {
			return res, nil, err
		}
	}
	res, err = m.Init(ctx, layout)
	return res, adopted, err
}

// fetchedLayoutMismatch refuses `init --layout L` in a clone without a
// memory branch whose fetched branch uses another layout, before anything
// is adopted: the branch would be the remote's, not L, and init would have
// made it only to report the mismatch (workspace.ErrLayoutMismatch, exit
// 2). A fetched branch that cannot be read is left to AdoptFetched.
func fetchedLayoutMismatch(m *workspace.Workspace, remote string, layout gitstore.Layout) error {
	if layout == "" {
		return nil
	}
	if tip, err := m.Store.Tip(); err != nil || !tip.IsZero() {
		return nil // an existing branch: Init reports a mismatch
	}
	tipR, err := m.Store.ResolveRef(ctxsync.TrackingRef(remote))
	if err != nil || tipR.IsZero() {
		return nil
	}
	v, err := m.Store.ViewAt(tipR)
	if err != nil || v.Layout == layout {
		return nil
	}
	return fmt.Errorf("%w: the memory branch fetched from %s uses layout %s; --layout %s applies only to a new branch (run 'git ctx init' without it)", workspace.ErrLayoutMismatch, termtext.Line(remote), v.Layout, layout)
}

// adoptedErr is the exit status of an init that adopted a fetched branch:
// a pull's (records rejected, a fork), once the branch is initialised.
func adoptedErr(adopted *ctxsync.PullResult) error {
	if adopted == nil {
		return nil
	}
	return adopted.Err()
}

func cmdStatus() *cli.Command {
	return &cli.Command{
		Name: "status", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			id, err := m.Identity()
			if err != nil {
				return err
			}
			st, err := checkpoints.ReadStatus(c.Context, m)
			if err != nil {
				return err
			}
			out := output.NewStatus(st, id.DeviceID, checkpoint.Fingerprint(id.Public), m.Repo.MemoryRemote())
			sp := hooks.Pending(m.Repo)
			out.PendingHookEntries, out.SpoolError = sp.Pending, sp.Failed
			return emit(c, out, func(w io.Writer) { printStatus(w, st, id.DeviceID, out) })
		}),
	}
}

// printStatus prints status's text.
func printStatus(w io.Writer, st *checkpoints.Status, device string, out output.Status) {
	if !st.Initialized {
		fmt.Fprintf(w, "Memory branch: not initialised (run 'git ctx init')\n")
	} else {
		fmt.Fprintf(w, "Memory branch: ghyll/memory at %s (layout %s)\n", st.Tip[:12], st.Layout)
	}
	pub := "published"
	if !st.KeyPublished {
		pub = "not yet published"
	}
	fmt.Fprintf(w, "Device:        %s (key %s, %s)\n", device, out.Fingerprint, pub)
	remote := out.Remote
	if remote == "" {
		remote = "no remote"
	}
	fmt.Fprintf(w, "Repository:    %s (%s)\n", cut(st.RepoID, 12), remote)
	if st.RepoIDOverride != "" {
		fmt.Fprintf(w, "Note:          git config ctx.repoId (%s) differs from the id fixed on the branch, which is used\n", termtext.Line(st.RepoIDOverride))
	}
	for _, a := range st.Adopted {
		fmt.Fprintf(w, "Adopted:       %s\n", termtext.Line(a))
	}
	fmt.Fprintf(w, "Checkpoints:   %d in this repository, %d by this device, %d devices\n",
		st.Checkpoints, st.DeviceCheckpoints, st.Devices)
	for _, o := range st.OtherRepos {
		fmt.Fprintf(w, "Other id:      %s holds %d checkpoints not counted here (take them with 'git ctx adopt %s')\n", termtext.Line(cut(o.ID, 12)), o.Checkpoints, termtext.Line(o.ID))
	}
	if st.Quarantined > 0 {
		fmt.Fprintf(w, "Unverified:    %d records failed verification (see 'git ctx log --unverified')\n", st.Quarantined)
	}
	if out.PendingHookEntries > 0 {
		fmt.Fprintf(w, "Pending:       %d hook entries spooled, not recorded yet (the next git-ctx command records them)\n", out.PendingHookEntries)
	}
	if out.SpoolError != "" {
		fmt.Fprintf(w, "Spool error:   %s\n", termtext.Line(out.SpoolError))
	}
}

func cmdCheckpoint() *cli.Command {
	return &cli.Command{
		Name: "checkpoint", ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the summary `TEXT`"},
			&cli.StringFlag{Name: "from-commit", Usage: "take summary and files from commit `REV`"},
			&cli.BoolFlag{Name: "stdin", Usage: "read one JSON object of flags from standard input"},
			&cli.StringFlag{Name: "session", Usage: "session `ID`"},
			&cli.IntFlag{Name: "turn", Usage: "turn number `N` (default: next in the session)"},
			&cli.StringFlag{Name: "model", Usage: "model `NAME`"},
			&cli.StringSliceFlag{Name: "file", Usage: "a file `PATH` touched (repeatable)"},
			&cli.StringSliceFlag{Name: "tool", Usage: "a tool `NAME` used (repeatable)"},
			&cli.StringSliceFlag{Name: "injection", Usage: "a prompt-injection category `NAME` detected (repeatable)"},
			&cli.StringFlag{Name: "emb-file", Usage: "embedding `FILE`: a JSON array of numbers or raw float32 little-endian"},
			&cli.BoolFlag{Name: "no-redact", Usage: "store secret-shaped text (tokens, keys, credentialed URLs) as it is instead of replacing it with [REDACTED:kind]"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			in := checkpoints.RecordInput{NoRedact: c.Bool("no-redact"),
				Summary: c.String("message"), FromCommit: c.String("from-commit"),
				Session: c.String("session"), Turn: c.Int("turn"), Model: c.String("model"),
				Files: c.StringSlice("file"), Tools: c.StringSlice("tool"), Injections: c.StringSlice("injection"),
			}
			embFile := c.String("emb-file")
			if c.Bool("stdin") {
				if err := readStdinInput(c.App.Reader, &in, &embFile); err != nil {
					return err
				}
			}
			if embFile != "" {
				emb, err := readEmbedding(embFile)
				if err != nil {
					return err
				}
				in.Embedding = emb
			}
			if strings.TrimSpace(in.Summary) == "" && in.FromCommit == "" {
				return fault.New(fault.Usage, "a checkpoint needs a summary: -m TEXT, --from-commit REV, or \"message\" in the --stdin object")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			cp, err := checkpoints.Record(c.Context, m, in)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				b, err := cp.MarshalCompact()
				if err != nil {
					return err
				}
				return output.WriteCompact(c.App.Writer, b)
			}
			fmt.Fprintf(c.App.Writer, "checkpoint %s (device %s, session %q, turn %d)\n", cp.Hash, cp.DeviceID, cp.SessionID, cp.Turn)
			return nil
		},
	}
}

// maxStdin bounds --stdin input; it is checked before reading everything.
const maxStdin = 2 << 20

func readStdinInput(r io.Reader, in *checkpoints.RecordInput, embFile *string) error {
	data, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return fault.New(fault.Failed, "read standard input: %w", err)
	}
	if len(data) > maxStdin {
		return fault.New(fault.Refused, "standard input exceeds %d bytes", maxStdin)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
			return fault.New(fault.Refused, "--stdin: %v (JSON nesting is limited)", err) // a size limit
		}
		return fault.New(fault.Usage, "--stdin wants one JSON object: %v", err)
	}
	if dec.More() {
		return fault.New(fault.Usage, "--stdin wants exactly one JSON object")
	}
	for key, val := range raw {
		var err error
		switch key {
		case "message", "m", "summary":
			err = json.Unmarshal(val, &in.Summary)
		case "from-commit":
			err = json.Unmarshal(val, &in.FromCommit)
		case "session":
			err = json.Unmarshal(val, &in.Session)
		case "turn":
			err = json.Unmarshal(val, &in.Turn)
		case "model":
			err = json.Unmarshal(val, &in.Model)
		case "file", "files":
			err = json.Unmarshal(val, &in.Files)
		case "tool", "tools":
			err = json.Unmarshal(val, &in.Tools)
		case "injection", "injections":
			err = json.Unmarshal(val, &in.Injections)
		case "emb-file":
			err = json.Unmarshal(val, embFile)
		case "emb":
			in.Embedding, err = parseJSONEmbedding(val)
		case "no-redact":
			var no bool
			if err = json.Unmarshal(val, &no); no {
				in.NoRedact = true
			}
		default:
			return fault.New(fault.Usage, "--stdin: unknown key %q (use the flags' names: message, session, turn, model, file, tool, injection, emb-file, emb, no-redact)", key)
		}
		if err != nil {
			return fault.New(fault.Usage, "--stdin: key %q: %v", key, err)
		}
	}
	return nil
}

// readEmbedding reads a JSON array of numbers or raw float32 little-endian.
func readEmbedding(path string) ([]float32, error) {
	limit := int64(checkpoints.MaxEmbedding * 32)
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.New(fault.Refused, "--emb-file: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, fault.New(fault.Refused, "--emb-file %s: %d bytes is over the %d-byte limit", path, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fault.New(fault.Refused, "--emb-file %s: %v", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fault.New(fault.Refused, "--emb-file %s: over the %d-byte limit", path, limit)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		return parseJSONEmbedding(t)
	}
	if len(data)%4 != 0 {
		return nil, fault.New(fault.Refused, "--emb-file %s: %d bytes is not a whole number of float32 values", path, len(data))
	}
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if f := float64(out[i]); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fault.New(fault.Refused, "--emb-file %s: value %d is NaN or infinite", path, i)
		}
	}
	return out, nil
}

func parseJSONEmbedding(data []byte) ([]float32, error) {
	var vals []float64
	if err := json.Unmarshal(data, &vals); err != nil {
		return nil, fault.New(fault.Refused, "embedding: %v", err)
	}
	out := make([]float32, len(vals))
	for i, v := range vals {
		if math.Abs(v) > math.MaxFloat32 {
			return nil, fault.New(fault.Refused, "embedding value %d does not fit a float32", i)
		}
		out[i] = float32(v)
	}
	return out, nil
}

func cmdShow() *cli.Command {
	return &cli.Command{
		Name: "show", ArgsUsage: "<hash-prefix|commit>", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			cp, raw, err := checkpoints.Show(c.Context, m, c.Args().First())
			if errors.Is(err, workspace.ErrNotFound) || errors.Is(err, workspace.ErrInput) {
				// Not a record hash: a code commit shows its linked records.
				if commit, rerr := explain.ResolveCommit(c.Context, m, c.Args().First()); rerr == nil && commit != "" {
					return showCommit(c, m, commit)
				}
			}
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				shown, err := checkpoints.ShownFile(cp, raw)
				if err != nil {
					return err
				}
				return output.WriteStored(w, shown)
			}
			if !cp.Verified {
				fmt.Fprintf(w, "UNVERIFIED: this checkpoint failed verification; see 'git ctx log --unverified'\n")
				if cp.DeviceID == m.OwnDeviceID() {
					fmt.Fprintf(w, "UNVERIFIED: %s\n", workspace.NewChainHint())
				}
			}
			line := termtext.Line
			fmt.Fprintf(w, "checkpoint %s\n", line(cp.Hash))
			fmt.Fprintf(w, "Parent:   %s\n", line(cp.ParentHash))
			fmt.Fprintf(w, "Device:   %s\nAuthor:   %s\nDate:     %s\n", line(cp.DeviceID), line(cp.AuthorID), formatTS(cp.Timestamp))
			fmt.Fprintf(w, "Session:  %s (turn %d)\nModel:    %s\n", line(orDash(cp.SessionID)), cp.Turn, line(orDash(cp.ActiveModel)))
			fmt.Fprintf(w, "Repo:     %s\nBranch:   %s\n", line(orDash(cp.RepoRemote)), line(orDash(cp.Branch)))
			if len(cp.FilesTouched) > 0 {
				fmt.Fprintf(w, "Files:    %s\n", lineList(cp.FilesTouched))
			}
			if len(cp.ToolsUsed) > 0 {
				fmt.Fprintf(w, "Tools:    %s\n", lineList(cp.ToolsUsed))
			}
			if len(cp.InjectionSig) > 0 {
				fmt.Fprintf(w, "Injections: %s\n", lineList(cp.InjectionSig))
			}
			if len(cp.Embedding) > 0 {
				fmt.Fprintf(w, "Embedding: %d dimensions%s\n", len(cp.Embedding), unauthNote(cp))
			}
			fmt.Fprintf(w, "\n%s\n", indent(cp.Summary))
			return nil
		}),
	}
}

func cmdVersion() *cli.Command {
	return &cli.Command{
		Name: "version", Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return emit(c, output.Version{Go: runtime.Version(), Version: version}, func(w io.Writer) {
				fmt.Fprintf(w, "git-ctx version %s (%s)\n", version, runtime.Version())
			})
		},
	}
}

// formatTS shows a record's time in the local zone ($TZ), as git's
// --date=iso-strict.
func formatTS(ts int64) string {
	return pretty.FormatDate(tsTime(ts), pretty.DateISOStrict, viewerClock())
}

// tsTime is a record's timestamp as a time: ghyll treats values below
// 1e12 as seconds, the rest as nanoseconds.
func tsTime(ts int64) time.Time {
	if ts < 1e12 {
		return time.Unix(ts, 0)
	}
	return time.Unix(0, ts)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// indent prints s as a block indented by four spaces, every line of it
// safe for the terminal: no line of a summary can pass for a header line.
func indent(s string) string {
	return termtext.Block(strings.TrimRight(s, "\n"), "    ")
}

// lineList joins items with ", " on one line, each made safe for the
// terminal.
func lineList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = termtext.Line(s)
	}
	return strings.Join(out, ", ")
}

// setConfig writes one local git config value.
func setConfig(c *cli.Context, m *workspace.Workspace, key, value string) error {
	return m.SetConfig(c.Context, key, value)
}
