package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/termtext"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// secretFDEnv names the environment variable that may name a file
// descriptor holding the envelope secret (its value is a number, never the
// secret).
const secretFDEnv = "GIT_CTX_SECRET_FD"

// maxSecret bounds the secret read from a file or descriptor.
const maxSecret = 64 << 10

var secretFlags = []cli.Flag{
	&cli.StringFlag{Name: "secret-file", Usage: "read the HMAC secret from `FILE` (one trailing newline is dropped)"},
	&cli.IntFlag{Name: "secret-fd", Usage: "read the HMAC secret from file descriptor `N` (also: " + secretFDEnv + "=N)"},
}

// readSecret reads the envelope secret from --secret-file, --secret-fd or
// the descriptor GIT_CTX_SECRET_FD names; never from argv or an
// environment value. The secret is never printed.
func readSecret(c *cli.Context) ([]byte, error) {
	file, fdSet := c.String("secret-file"), c.IsSet("secret-fd")
	if file != "" && fdSet {
		return nil, fault.New(fault.Usage, "give the secret once: --secret-file or --secret-fd")
	}
	var r io.Reader
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, fault.New(fault.Usage, "--secret-file: %w", err)
		}
		defer f.Close()
		r = f
	default:
		fd := -1
		if fdSet {
			fd = c.Int("secret-fd")
		} else if v := os.Getenv(secretFDEnv); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fault.New(fault.Usage, "%s must name a file descriptor (a number)", secretFDEnv)
			}
			fd = n
		}
		if fd < 0 {
			return nil, fault.New(fault.Usage, "%s needs the HMAC secret: --secret-file FILE or --secret-fd N (never on the command line)", "pkg "+c.Command.Name)
		}
		if fd <= 2 && fd != 0 {
			return nil, fault.New(fault.Usage, "--secret-fd %d is an output descriptor", fd)
		}
		f := os.NewFile(uintptr(fd), "secret-fd")
		if f == nil {
			return nil, fault.New(fault.Usage, "--secret-fd %d is not an open descriptor", fd)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSecret+1))
	if err != nil {
		return nil, fault.New(fault.Usage, "read the secret: %w", err)
	}
	if len(data) > maxSecret {
		return nil, fault.New(fault.Refused, "the secret is over %d bytes", maxSecret)
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	data = bytes.TrimSuffix(data, []byte("\r"))
	if len(data) == 0 {
		return nil, fault.New(fault.Usage, "the HMAC secret is empty")
	}
	return data, nil
}

func cmdPkg() *cli.Command {
	return &cli.Command{
		Name: "pkg", Action: groupAction(nil),
		Subcommands: []*cli.Command{pkgBuild(), pkgVerify(), pkgInspect(), pkgPublish(), pkgList(), pkgGet(), pkgWrap(), pkgUnwrap()},
	}
}

func pkgBuild() *cli.Command {
	return &cli.Command{
		Name: "build",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "package `NAME` ([a-zA-Z0-9._@/-], at most 128 characters)", Required: true},
			&cli.StringFlag{Name: "version", Usage: "package `VERSION` ([a-zA-Z0-9._+-], at most 64 characters)", Required: true},
			&cli.StringFlag{Name: "layers", Usage: "comma-separated `LIST` of knowledge,graph,session,patterns,gotchas"},
			&cli.StringFlag{Name: "session", Usage: "checkpoint session `ID` of the session layer"},
			&cli.StringFlag{Name: "from", Usage: "`FILE` supplying the other layers (a .ctxpkg or a content JSON object)"},
			&cli.StringFlag{Name: "description", Usage: "manifest description `TEXT`"},
			&cli.BoolFlag{Name: "sign", Usage: "sign with this device's key (ctxpkg-sign-v1)"},
		}, outputFlags("write to `FILE` (default <name>-<version>.ctxpkg, '/' in the name as '_')", jsonFlag)...),
		Action: func(c *cli.Context) error {
			opt := ctxpackages.BuildOptions{Name: c.String("name"), Version: c.String("version"), Session: c.String("session"),
				Description: c.String("description"), Sign: c.Bool("sign"), Producer: version}
			if l := c.String("layers"); l != "" {
				layers, err := ctxpackages.ParseLayers(l)
				if err != nil {
					return fault.Wrap(fault.Usage, err)
				}
				opt.Layers = layers
			}
			if f := c.String("from"); f != "" {
				from, err := ctxpackages.ReadContentSource(f)
				if err != nil {
					return err
				}
				opt.From = from
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			p, data, err := ctxpackages.Build(c.Context, m, opt)
			if err != nil {
				return err
			}
			mf := &p.Manifest
			out, err := writeOutput(c, pkgFileName(mf.Name, mf.Version), data)
			if err != nil {
				return err
			}
			return emit(c, output.PackageFile{Name: mf.Name, Version: mf.Version, File: out,
				Bytes: len(data), SHA256: mf.Integrity.SHA256, Signed: mf.Signature != nil}, func(w io.Writer) {
				signed := ""
				if mf.Signature != nil {
					signed = " [signed]"
				}
				fmt.Fprintf(w, "built %s@%s%s: %s (%d bytes)\n  sha256 %s\n", termtext.Line(mf.Name), termtext.Line(mf.Version), signed, termtext.Line(out), len(data), mf.Integrity.SHA256)
			})
		},
	}
}

// pkgFileName is the default file name of package name@version ('/' in
// the name as '_').
func pkgFileName(name, version string) string {
	return strings.ReplaceAll(name, "/", "_") + "-" + version + ctxpkg.Extension
}

func pkgVerify() *cli.Command {
	return &cli.Command{
		Name: "verify", ArgsUsage: "FILE...", Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			var checks []ctxpackages.Check
			failed, refused := false, false
			for _, f := range c.Args().Slice() {
				pc := ctxpackages.CheckFile(f)
				checks = append(checks, pc)
				failed = failed || !pc.Valid
				refused = refused || pc.Refused
			}
			if err := emit(c, output.NewPackageChecks(checks), func(w io.Writer) { printPackageChecks(w, checks) }); err != nil {
				return err
			}
			switch {
			case refused:
				fmt.Fprintln(c.App.ErrWriter, "git-ctx: refused: a file is over the 10485760-byte package limit")
				return silent(fault.Refused)
			case failed:
				fmt.Fprintln(c.App.ErrWriter, "git-ctx: verification failed: see the listed failures; do not import or publish these files")
				return silent(fault.Failed)
			}
			return nil
		},
	}
}

// printPackageChecks prints pkg verify's text.
func printPackageChecks(w io.Writer, checks []ctxpackages.Check) {
	for _, pc := range checks {
		if pc.Valid {
			how := "unsigned"
			if pc.Signed {
				how = "signed by " + pc.Signer
			}
			fmt.Fprintf(w, "%s: OK %s@%s sha256 %s (%s)\n", termtext.Line(pc.File), termtext.Line(pc.Name), termtext.Line(pc.Version),
				termtext.Line(pc.SHA256), termtext.Line(how))
			continue
		}
		fmt.Fprintf(w, "%s: FAIL (%d)\n", termtext.Line(pc.File), len(pc.Failures))
		for _, f := range pc.Failures {
			fmt.Fprintf(w, "  - %s\n", termtext.Line(f))
		}
	}
}

func pkgInspect() *cli.Command {
	return &cli.Command{
		Name: "inspect", ArgsUsage: "FILE", Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			file := c.Args().First()
			pc := ctxpackages.CheckFile(file)
			if pc.Package == nil {
				return checkFailure(file, &pc)
			}
			err := emitBuilt(c, func() (output.PackageInspect, error) { return output.NewPackageInspect(file, &pc) }, func(w io.Writer) {
				printInspect(w, &pc)
			})
			if err != nil || pc.Valid || c.Bool("json") {
				return err // --json says whether it verifies, and exits 0
			}
			fmt.Fprintln(c.App.ErrWriter, "git-ctx: the package does not verify: see the FAIL lines")
			return silent(fault.Failed)
		},
	}
}

// checkFailure is the error of a package file that could not be read
// whole: refused (over a limit) or failed, with the check's failures.
func checkFailure(file string, pc *ctxpackages.Check) error {
	if pc.Refused {
		return fault.Wrap(fault.Refused, errors.New(strings.Join(pc.Failures, "; ")))
	}
	return fault.New(fault.Failed, "%s: %s", file, strings.Join(pc.Failures, "; "))
}

// printInspect prints pkg inspect's text.
func printInspect(w io.Writer, pc *ctxpackages.Check) {
	m, line := &pc.Package.Manifest, termtext.Line
	fmt.Fprintf(w, "package   %s@%s (schema %d, kind %s)\n", line(m.Name), line(m.Version), m.SchemaVersion, line(string(m.EffectiveKind())))
	fmt.Fprintf(w, "describe  %s\n", line(m.Description))
	fmt.Fprintf(w, "author    %s\n", line(derefOr(m.Author, "-")))
	fmt.Fprintf(w, "created   %s\n", m.CreatedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "tool      %s %s\n", line(m.Provenance.Tool), line(m.Provenance.ToolVersion))
	fmt.Fprintf(w, "sha256    %s\n", line(m.Integrity.SHA256))
	fmt.Fprintf(w, "content   %d bytes (content_hash %s)\n", m.Integrity.ByteSize, line(m.Integrity.ContentHash))
	if m.Signature != nil {
		fmt.Fprintf(w, "signature %s by %s\n", line(m.Signature.Algorithm), line(pc.Signer))
	} else {
		fmt.Fprintln(w, "signature none")
	}
	counts := output.LayerCounts(&pc.Package.Content)
	for _, l := range m.Layers {
		fmt.Fprintf(w, "layer     %-9s %d items\n", line(string(l)), counts[string(l)])
	}
	if pc.Valid {
		fmt.Fprintln(w, "verify    OK")
		return
	}
	for _, f := range pc.Failures {
		fmt.Fprintf(w, "verify    FAIL %s\n", line(f))
	}
}

func pkgPublish() *cli.Command {
	return &cli.Command{
		Name: "publish", ArgsUsage: "FILE", Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			res, err := ctxpackages.Publish(c.Context, m, c.Args().First())
			if err != nil {
				return err
			}
			mf := &res.Package.Manifest
			return emit(c, output.PackagePublish{Name: mf.Name, Version: mf.Version, SHA256: mf.Integrity.SHA256,
				Path: res.Path, Existed: res.Existed}, func(w io.Writer) {
				if res.Existed {
					fmt.Fprintf(w, "%s@%s is already published, identical: nothing to do\n  %s\n", termtext.Line(mf.Name), termtext.Line(mf.Version), termtext.Line(res.Path))
					return
				}
				fmt.Fprintf(w, "published %s@%s (sha256 %s)\n  %s\n  share it with: git ctx push\n", termtext.Line(mf.Name), termtext.Line(mf.Version), mf.Integrity.SHA256[:12], termtext.Line(res.Path))
			})
		}),
	}
}

func pkgList() *cli.Command {
	return &cli.Command{
		Name: "list", Aliases: []string{"ls"}, Flags: []cli.Flag{jsonFlag},
		Action: withMemory(func(c *cli.Context, m *workspace.Workspace) error {
			list, err := ctxpackages.List(c.Context, m)
			if err != nil {
				return err
			}
			return emit(c, output.NewPackageList(list), func(w io.Writer) { printPackageList(w, list) })
		}),
	}
}

// printPackageList prints pkg list's text.
func printPackageList(w io.Writer, list []ctxpackages.Info) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No packages published. Publish one with: git ctx pkg publish FILE")
		return
	}
	for _, p := range list {
		state := "ok"
		if !p.Verified {
			state = "FAILED: " + p.Error
		}
		signer := "unsigned"
		if p.Signed {
			signer = "signed " + p.Signer
			if p.SignerDevice != "" {
				signer += " (" + p.SignerDevice + ")"
			}
		}
		fmt.Fprintf(w, "%s@%s  %s  %s  %s  %s\n", termtext.Line(p.Name), termtext.Line(p.Version), termtext.Line(orDash(cut(p.SHA256, 12))),
			termtext.Line(strings.Join(p.Layers, ",")), termtext.Line(signer), termtext.Line(state))
	}
}

// writeOutput writes data to the file -o/--output names, else to def,
// atomically: an existing path is refused unless --force. It returns the
// path written.
func writeOutput(c *cli.Context, def string, data []byte) (string, error) {
	path := c.String("output")
	if path == "" {
		path = def
	}
	err := workspace.WriteOutput(path, data, c.Bool("force"))
	if err != nil && !errors.Is(err, workspace.ErrOutputExists) {
		err = fmt.Errorf("write %s: %w", path, err)
	}
	return path, err
}

func pkgGet() *cli.Command {
	return &cli.Command{
		Name: "get", ArgsUsage: "NAME[@VERSION]",
		Flags: outputFlags("write to `FILE` (default <name>-<version>.ctxpkg, '/' as '_'; '-' for standard output)", jsonFlag),
		Action: func(c *cli.Context) error {
			if c.Bool("json") && c.String("output") == "-" {
				return fault.New(fault.Usage, "pkg get: --json and -o - both print on standard output: give -o FILE")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			info, data, err := ctxpackages.Get(c.Context, m, c.Args().First())
			if err != nil {
				return err
			}
			if c.String("output") == "-" {
				_, err := c.App.Writer.Write(data)
				return err
			}
			out, err := writeOutput(c, pkgFileName(info.Name, info.Version), data)
			if err != nil {
				return err
			}
			return emit(c, output.PackageFile{Name: info.Name, Version: info.Version, File: out, Bytes: len(data),
				SHA256: info.SHA256, Signed: info.Signed}, func(w io.Writer) {
				fmt.Fprintf(w, "%s@%s -> %s (%d bytes, verified)\n", termtext.Line(info.Name), termtext.Line(info.Version), termtext.Line(out), len(data))
			})
		},
	}
}

func pkgWrap() *cli.Command {
	return &cli.Command{
		Name: "wrap", ArgsUsage: "FILE",
		Flags: slices.Concat([]cli.Flag{&cli.StringFlag{Name: "to", Usage: "recipient `AGENT` id"}},
			outputFlags("write to `FILE` (default FILE.envelope.json)", jsonFlag), secretFlags),
		Action: func(c *cli.Context) error {
			file := c.Args().First()
			secret, err := readSecret(c)
			if err != nil {
				return err
			}
			pc := ctxpackages.CheckFile(file)
			if pc.Refused || pc.Raw == nil {
				return checkFailure(file, &pc)
			}
			var to *string
			if c.IsSet("to") {
				v := c.String("to")
				to = &v
			}
			env, err := ctxpackages.Wrap(pc.Raw, file, to, secret, time.Now(), version)
			if err != nil {
				return err
			}
			out, err := writeOutput(c, file+".envelope.json", env)
			if err != nil {
				return err
			}
			return emit(c, output.PackageWrap{Name: pc.Name, Version: pc.Version, File: out, Bytes: len(env)}, func(w io.Writer) {
				fmt.Fprintf(w, "wrapped %s@%s -> %s (%d bytes, HMAC-SHA256)\n", termtext.Line(pc.Name), termtext.Line(pc.Version), termtext.Line(out), len(env))
			})
		},
	}
}

func pkgUnwrap() *cli.Command {
	return &cli.Command{
		Name: "unwrap", ArgsUsage: "FILE",
		Flags: slices.Concat(outputFlags("write the package to `FILE` (default <name>-<version>.ctxpkg, '/' as '_')", jsonFlag), secretFlags),
		Action: func(c *cli.Context) error {
			file := c.Args().First()
			secret, err := readSecret(c)
			if err != nil {
				return err
			}
			fi, err := os.Stat(file)
			if err != nil {
				return fault.Wrap(fault.Failed, err)
			}
			if fi.Size() > ctxpkg.MaxEnvelopeSize {
				return fault.New(fault.Refused, "envelope too large (%d bytes, max %d)", fi.Size(), ctxpkg.MaxEnvelopeSize)
			}
			data, err := readLimited(file, ctxpkg.MaxEnvelopeSize)
			if err != nil {
				return err
			}
			ef, err := ctxpackages.Unwrap(data, secret)
			if err != nil {
				return err
			}
			pc := ef.Check
			out, err := writeOutput(c, filepath.Base(pkgFileName(pc.Name, pc.Version)), []byte(ef.Envelope.PayloadJSON))
			if err != nil {
				return err
			}
			return emit(c, output.PackageUnwrap{Form: ef.Form.String(), Name: pc.Name, Version: pc.Version, File: out}, func(w io.Writer) {
				fmt.Fprintf(w, "HMAC ok (%s form); package %s@%s verified -> %s\n", ef.Form, termtext.Line(pc.Name), termtext.Line(pc.Version), termtext.Line(out))
			})
		},
	}
}
