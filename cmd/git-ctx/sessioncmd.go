package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/git-ctx/git-ctx/formats/session"
	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/sessions"
	ctxsync "github.com/git-ctx/git-ctx/sync"
)

var (
	sessStoreFlag = &cli.StringFlag{Name: "store", Usage: "session store `URL`: file:///abs/path, git, git:REMOTE or s3://BUCKET[/PREFIX] (default: git config ctx.sessionStore, else the git store on the memory remote)"}
	sessProfFlag  = &cli.StringFlag{Name: "profile", Usage: "store profile `UUID` (default: git config ctx.sessionProfile, else the store's only profile)"}
	sessPassFlag  = &cli.StringFlag{Name: "passphrase-file", Usage: "read the passphrase from `FILE` (else the descriptor in GIT_CTX_PASSPHRASE_FD, else a terminal prompt)"}
	sessQuiet     = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress display on the terminal"}
)

func sessionFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{sessStoreFlag, sessProfFlag, sessPassFlag, sessQuiet}, extra...)
}

func cmdSession() *cli.Command {
	pullCmd := func(name string) *cli.Command {
		return &cli.Command{
			Name: name,
			Flags: sessionFlags(
				&cli.StringFlag{Name: "session", Usage: "restore only session `ID`"},
				&cli.StringSliceFlag{Name: "project", Usage: "map project `ID=/abs/path` (repeatable; this repository's id maps to this work tree without it)"},
				&cli.BoolFlag{Name: "keep-both", Usage: "on a local copy with unpushed changes, restore the remote copy beside it under a fork id"},
				jsonFlag,
			),
			Action: withSessions(false, true, sessionPull),
		}
	}
	return &cli.Command{
		Name: "session", Action: groupAction(nil),
		Subcommands: []*cli.Command{
			{
				Name: "push",
				Flags: sessionFlags(
					&cli.StringFlag{Name: "agent", Usage: "only sessions of `AGENT` (claude or codex)"},
					&cli.StringFlag{Name: "session", Usage: "push session `ID` instead of the most recent"},
					&cli.IntFlag{Name: "work-factor", Usage: "scrypt work factor `N` (log2; default 18, at most 22; lower values make the passphrase cheaper to guess)"},
					jsonFlag,
				),
				Action: sessionPush,
			},
			pullCmd("pull"), pullCmd("restore"),
			{
				Name: "list", Aliases: []string{"ls"}, Flags: sessionFlags(jsonFlag), Action: withSessions(false, true, sessionList),
			},
			{
				Name: "status", Flags: sessionFlags(jsonFlag), Action: withSessions(false, false, sessionStatus),
			},
		},
	}
}

// sessionSetup is what every session verb needs.
type sessionSetup struct {
	client *sessions.Client
	setup  *sessions.Setup
}

// openSessions opens the repository, the store and the profile. create:
// a push may make a new profile. needPass: read the passphrase.
func openSessions(c *cli.Context, create, needPass bool) (*sessionSetup, error) {
	setup, err := sessions.Open(c.Context, ".", sessions.SetupOptions{
		Store: c.String("store"), Profile: c.String("profile"), Create: create,
		LocalOnly: c.Command.Name == "list" || c.Command.Name == "status",
		Remote:    func(r *gitrepo.Repo) (string, error) { return ctxsync.ResolveRemote(r, "") },
		Warn:      func(s string) { fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: %s\n", termtext.Line(s)) },
	})
	if err != nil {
		return nil, err
	}
	cl := setup.Client
	for _, m := range c.StringSlice("project") {
		id, p, ok := strings.Cut(m, "=")
		if !ok || id == "" || !filepath.IsAbs(p) {
			return nil, fault.New(fault.Usage, "--project wants ID=/absolute/path, got %q", m)
		}
		cl.Mappings = append(cl.Mappings, sessions.Mapping{ID: id, Root: filepath.Clean(p)})
	}
	if needPass && setup.HasProfile() {
		if cl.Passphrase, err = readPassphrase(c, setup.Created); err != nil {
			return nil, err
		}
	}
	cl.Progress = sessionProgress(c)
	return &sessionSetup{client: cl, setup: setup}, nil
}

// withSessions is the action of a session verb: run gets what
// openSessions(create, needPass) opened.
func withSessions(create, needPass bool, run func(c *cli.Context, s *sessionSetup) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		s, err := openSessions(c, create, needPass)
		if err != nil {
			return err
		}
		return run(c, s)
	}
}

// rememberProfile stores the profile in the local config when none was
// configured (first push, or a machine that found the store's only one).
func (s *sessionSetup) rememberProfile(c *cli.Context) error {
	return s.setup.RememberProfile(c.Context)
}

func sessionPush(c *cli.Context) error {
	if a := c.String("agent"); a != "" && a != session.AgentClaude && a != session.AgentCodex {
		return fault.New(fault.Usage, "--agent takes claude or codex, not %q", a)
	}
	s, err := openSessions(c, true, true)
	if err != nil {
		return err
	}
	cl := s.client
	if wf := c.Int("work-factor"); c.IsSet("work-factor") {
		if wf < 1 || wf > session.MaxWorkFactor {
			return fault.New(fault.Usage, "--work-factor must be between 1 and %d", session.MaxWorkFactor)
		}
		cl.WorkFactor = wf
		if wf < session.DefaultWorkFactor {
			cl.AllowWeak = true
			fmt.Fprintf(c.App.ErrWriter, "git-ctx: warning: scrypt work factor %d is below the default %d: the passphrase is cheaper to guess\n", wf, session.DefaultWorkFactor)
		}
	}
	res, err := cl.Push(c.Context, c.String("agent"), c.String("session"))
	if err != nil {
		return err
	}
	if err := s.rememberProfile(c); err != nil {
		return err
	}
	return emit(c, output.NewSessionPush(res, cl.Store.Describe(), cl.Profile), func(w io.Writer) {
		if res.UpToDate {
			fmt.Fprintf(w, "%s session %s is up to date (snapshot %s)\n", res.Session.Agent, res.Session.ID, res.SnapshotID)
			return
		}
		fmt.Fprintf(w, "pushed %s session %s as snapshot %s (%d bytes) to %s, profile %s\n",
			res.Session.Agent, res.Session.ID, res.SnapshotID, res.Size, cl.Store.Describe(), cl.Profile)
	})
}

func sessionPull(c *cli.Context, s *sessionSetup) error {
	results, err := s.client.Pull(c.Context, sessions.PullOptions{SessionID: c.String("session"), KeepBoth: c.Bool("keep-both")})
	w := c.App.Writer
	if c.Bool("json") {
		if err != nil {
			return err
		}
		if err := s.rememberProfile(c); err != nil {
			return err
		}
		return output.Write(w, output.NewSessionPull(s.client.Profile, results))
	}
	line := termtext.Line
	for _, r := range results {
		switch {
		case r.LocalNewer:
			fmt.Fprintf(w, "%s session %s has local changes newer than the head (snapshot %s): push them with 'git ctx session push --session %s'\n",
				line(string(r.Agent)), line(r.SessionID), line(r.SnapshotID), line(r.SessionID))
		case r.UpToDate:
			fmt.Fprintf(w, "%s session %s is up to date (snapshot %s): %s\n", line(string(r.Agent)), line(r.SessionID), line(r.SnapshotID), line(r.Path))
		case r.ForkID != "":
			fmt.Fprintf(w, "restored %s session %s (snapshot %s) beside the local copy as session %s: %s\n",
				line(string(r.Agent)), line(r.SessionID), line(r.SnapshotID), line(r.ForkID), line(r.Path))
		default:
			fmt.Fprintf(w, "restored %s session %s (snapshot %s) to %s\n", line(string(r.Agent)), line(r.SessionID), line(r.SnapshotID), line(r.Path))
		}
		if r.Backup != "" {
			fmt.Fprintf(w, "  previous copy saved to %s\n", line(r.Backup))
		}
	}
	if err != nil {
		return err
	}
	if len(results) == 0 {
		fmt.Fprintf(w, "no session of this project in profile %s (pull another with --session ID and --project ID=PATH)\n", s.client.Profile)
	}
	return s.rememberProfile(c)
}

func sessionList(c *cli.Context, s *sessionSetup) error {
	list, err := s.client.List(c.Context)
	if err != nil {
		return err
	}
	return emit(c, output.NewSessionList(list), func(w io.Writer) { printSessionList(w, list) })
}

// printSessionList prints session list's text.
func printSessionList(w io.Writer, list []sessions.ListEntry) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No sessions, local or remote. Push this project's latest with: git ctx session push")
		return
	}
	for _, e := range list {
		head := e.Head
		if head == "" {
			head = "-"
		}
		where := e.LocalPath
		if where == "" {
			where = "(not here)"
			if !e.Mapped {
				where = "(project " + e.ProjectID + " not mapped here)"
			}
		}
		newer := ""
		if e.Newer != "" && e.State != sessions.StateLocalOnly && e.State != sessions.StateRemoteOnly {
			newer = " (" + e.Newer + " is newer)"
		}
		line := termtext.Line
		fmt.Fprintf(w, "%-6s %s  %s%s\n       head %s  %s\n", line(string(e.Agent)), line(e.SessionID), line(string(e.State)), line(newer), line(head), line(where))
	}
}

func sessionStatus(c *cli.Context, s *sessionSetup) error {
	st, err := s.client.Status(c.Context)
	if err != nil {
		return err
	}
	return emit(c, output.NewSessionStatus(st), func(w io.Writer) { printSessionStatus(w, st) })
}

// printSessionStatus prints session status's text.
func printSessionStatus(w io.Writer, st *sessions.Status) {
	prof := st.Profile
	if prof == "" {
		prof = "(none yet: the first push creates one)"
	}
	fmt.Fprintf(w, "Store:     %s\nProfile:   %s\nProject:   %s\nWork tree: %s\nState:     %s\n", st.Store, prof, st.ProjectID, st.WorkTree, st.StateDir)
	fmt.Fprintf(w, "Remote:    %d snapshot(s), manifest %s\n", st.Snapshots, map[bool]string{true: "present", false: "absent"}[st.Manifest])
	fmt.Fprintf(w, "Local:     %d session(s) of this project, %d synced here", st.Local, st.Synced)
	if st.Latest != "" {
		fmt.Fprintf(w, "; latest %s", termtext.Line(st.Latest))
	}
	fmt.Fprintln(w)
}

// ---- passphrase ----

// readPassphrase reads the passphrase from --passphrase-file, the
// descriptor in GIT_CTX_PASSPHRASE_FD or REINSTATE_PASSPHRASE_FD, or the
// terminal (echo off; asked twice when confirm). Trailing CR/LF are
// trimmed. It never comes from argv or a plain variable, and never appears
// in a message.
func readPassphrase(c *cli.Context, confirm bool) ([]byte, error) {
	if f := c.String("passphrase-file"); f != "" {
		fh, err := os.Open(f)
		if err != nil {
			return nil, fault.New(fault.Config, "--passphrase-file: %w", err)
		}
		defer fh.Close()
		return readPassphraseBytes(fh, "--passphrase-file "+f)
	}
	for _, v := range []string{"GIT_CTX_PASSPHRASE_FD", "REINSTATE_PASSPHRASE_FD"} {
		s := os.Getenv(v)
		if s == "" {
			continue
		}
		fd, err := strconv.Atoi(s)
		if err != nil || fd < 0 {
			return nil, fault.New(fault.Config, "%s=%q is not a file descriptor number: set it to an open descriptor", v, s)
		}
		f := os.NewFile(uintptr(fd), v)
		if f == nil {
			return nil, fault.New(fault.Config, "%s=%d is not an open descriptor", v, fd)
		}
		defer f.Close()
		return readPassphraseBytes(f, v)
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fault.New(fault.Config, "no passphrase: no terminal to prompt on; pass it through the descriptor named by GIT_CTX_PASSPHRASE_FD or --passphrase-file FILE")
	}
	defer tty.Close()
	p, err := promptSecret(tty, "Session passphrase: ")
	if err != nil || !confirm {
		return p, err
	}
	again, err := promptSecret(tty, "Repeat the passphrase (new profile): ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(p, again) {
		return nil, fault.New(fault.Config, "the passphrases differ: run the command again")
	}
	return p, nil
}

func readPassphraseBytes(r io.Reader, from string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, session.MaxPassphraseLen+1))
	if err != nil {
		return nil, fault.New(fault.Config, "read the passphrase from %s: %w", from, err)
	}
	if len(data) > session.MaxPassphraseLen {
		return nil, fault.New(fault.Config, "the passphrase from %s exceeds %d bytes", from, session.MaxPassphraseLen)
	}
	data = bytes.TrimRight(data, "\r\n")
	if len(data) == 0 {
		return nil, fault.New(fault.Config, "the passphrase from %s is empty", from)
	}
	return data, nil
}

// promptSecret prompts on the terminal with echo off. Echo goes off before
// the prompt is shown, so nothing typed after the prompt appears is echoed.
func promptSecret(tty *os.File, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fault.New(fault.Config, "no passphrase: /dev/tty is not a terminal; use GIT_CTX_PASSPHRASE_FD or --passphrase-file FILE")
	}
	noEcho := *old
	noEcho.Lflag &^= unix.ECHO
	noEcho.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &noEcho); err != nil {
		return nil, fault.New(fault.Config, "turn off terminal echo: %w", err)
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	fmt.Fprint(tty, prompt)
	defer fmt.Fprintln(tty)
	var line []byte
	var b [1]byte
	for len(line) <= session.MaxPassphraseLen {
		n, err := tty.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
			continue
		}
		if err != nil {
			break
		}
	}
	return readPassphraseBytes(bytes.NewReader(line), "the terminal")
}
