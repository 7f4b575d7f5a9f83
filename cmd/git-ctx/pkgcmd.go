package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
		Name:  "pkg",
		Usage: "context packages (.ctxpkg v1, lean-ctx compatible): build, verify, publish, fetch, wrap",
		Description: "A context package bundles knowledge, graph, session, patterns and gotchas layers in one\n" +
			"verifiable file (integrity over the content, optional ed25519 signature). Published packages\n" +
			"live at repos/<repo-id>/packages/<name>/<version>.ctxpkg on the memory branch, immutable per\n" +
			"name and version, and travel with push and pull (verified on arrival).\n\n" +
			"Examples:\n  git ctx pkg build --name auth-notes --version 1.0.0 --sign -o auth.ctxpkg\n" +
			"  git ctx pkg verify auth.ctxpkg\n  git ctx pkg publish auth.ctxpkg\n  git ctx pkg list\n" +
			"  git ctx pkg get auth-notes -o auth.ctxpkg\n  git ctx pkg wrap auth.ctxpkg --secret-file key.txt\n" +
			"  git ctx pkg unwrap auth.ctxpkg.envelope.json --secret-fd 3 3<key.txt",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownSubcommand(c, "pkg")
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: []*cli.Command{pkgBuild(), pkgVerify(), pkgInspect(), pkgPublish(), pkgList(), pkgGet(), pkgWrap(), pkgUnwrap()},
	}
}

func pkgArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", fault.New(fault.Usage, "pkg %s takes one %s (see 'git ctx pkg %s --help')", c.Command.Name, what, c.Command.Name)
	}
	return c.Args().First(), nil
}

func pkgBuild() *cli.Command {
	return &cli.Command{
		Name: "build", Usage: "build a package: the session layer from this device's checkpoints, other layers from --from",
		Description: "The session layer comes from the checkpoints of one session of this device in this repository\n" +
			"(--session, default the latest): task = the first checkpoint's first summary line, one finding\n" +
			"per checkpoint, decisions from summary lines \"Decision: …\" (rationale \"Because: …\" on the next\n" +
			"line), next steps from \"Next: …\" / \"TODO: …\" lines, files touched = the union of their files.\n" +
			"Knowledge, graph, patterns and gotchas come from --from (a .ctxpkg or a JSON object of content\n" +
			"members). Without --layers: session plus every layer --from supplies.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "package `NAME` ([a-zA-Z0-9._@/-], at most 128 characters)", Required: true},
			&cli.StringFlag{Name: "version", Usage: "package `VERSION` ([a-zA-Z0-9._+-], at most 64 characters)", Required: true},
			&cli.StringFlag{Name: "layers", Usage: "comma-separated `LIST` of knowledge,graph,session,patterns,gotchas"},
			&cli.StringFlag{Name: "session", Usage: "checkpoint session `ID` of the session layer"},
			&cli.StringFlag{Name: "from", Usage: "`FILE` supplying the other layers (a .ctxpkg or a content JSON object)"},
			&cli.StringFlag{Name: "description", Usage: "manifest description `TEXT`"},
			&cli.BoolFlag{Name: "sign", Usage: "sign with this device's key (ctxpkg-sign-v1)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (default <name>-<version>.ctxpkg, '/' in the name as '_')"},
			forceFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return fault.New(fault.Usage, "pkg build takes no arguments")
			}
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
			out := c.String("output")
			if out == "" {
				out = strings.ReplaceAll(p.Manifest.Name, "/", "_") + "-" + p.Manifest.Version + ctxpkg.Extension
			}
			if err := writeOutput(c, out, data); err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.PackageFile{Name: p.Manifest.Name, Version: p.Manifest.Version, File: out,
					Bytes: len(data), SHA256: p.Manifest.Integrity.SHA256, Signed: p.Manifest.Signature != nil})
			}
			signed := ""
			if p.Manifest.Signature != nil {
				signed = " [signed]"
			}
			fmt.Fprintf(c.App.Writer, "built %s@%s%s: %s (%d bytes)\n  sha256 %s\n", termtext.Line(p.Manifest.Name), termtext.Line(p.Manifest.Version), signed, termtext.Line(out), len(data), p.Manifest.Integrity.SHA256)
			return nil
		},
	}
}

func pkgVerify() *cli.Command {
	return &cli.Command{
		Name: "verify", Usage: "verify package files offline, listing every failure",
		ArgsUsage: "FILE...",
		Description: "Checks, in lean-ctx's `pack verify` order: size (10,485,760 bytes), parse, manifest rules,\n" +
			"kind coherence, content_hash, byte_size, sha256 (over the file's own content bytes), and the\n" +
			"signature when present. Exit 1 when any file fails, 7 when one is over the size limit.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return fault.New(fault.Usage, "pkg verify takes one or more FILEs")
			}
			var checks []ctxpackages.Check
			failed, refused := false, false
			for _, f := range c.Args().Slice() {
				pc := ctxpackages.CheckFile(f)
				checks = append(checks, pc)
				failed = failed || !pc.Valid
				refused = refused || pc.Refused
			}
			w := c.App.Writer
			if c.Bool("json") {
				if err := output.Write(w, output.NewPackageChecks(checks)); err != nil {
					return err
				}
			} else {
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

func pkgInspect() *cli.Command {
	return &cli.Command{
		Name: "inspect", Usage: "print a package file's manifest and a summary of its layers",
		ArgsUsage: "FILE",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			file, err := pkgArg(c, "FILE")
			if err != nil {
				return err
			}
			pc := ctxpackages.CheckFile(file)
			if pc.Package == nil {
				if pc.Refused {
					return fault.Wrap(fault.Refused, errors.New(strings.Join(pc.Failures, "; ")))
				}
				return fault.New(fault.Failed, "%s: %s", file, strings.Join(pc.Failures, "; "))
			}
			m := &pc.Package.Manifest
			w := c.App.Writer
			if c.Bool("json") {
				out, err := output.NewPackageInspect(file, &pc)
				if err != nil {
					return err
				}
				return output.Write(w, out)
			}
			line := termtext.Line
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
				return nil
			}
			for _, f := range pc.Failures {
				fmt.Fprintf(w, "verify    FAIL %s\n", line(f))
			}
			fmt.Fprintln(c.App.ErrWriter, "git-ctx: the package does not verify: see the FAIL lines")
			return silent(fault.Failed)
		},
	}
}

func pkgPublish() *cli.Command {
	return &cli.Command{
		Name: "publish", Usage: "publish a verified package file on the memory branch (immutable per name@version)",
		ArgsUsage: "FILE",
		Description: "Stores the file byte for byte at repos/<repo-id>/packages/<name>/<version>.ctxpkg in one\n" +
			"commit. Publishing the identical file again does nothing (exit 0); a different file under an\n" +
			"existing name and version is refused (exit 6): publish it under a new version.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			file, m, err := pkgArgAndMemory(c)
			if err != nil {
				return err
			}
			res, err := ctxpackages.Publish(c.Context, m, file)
			if err != nil {
				return err
			}
			mf := &res.Package.Manifest
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.PackagePublish{Name: mf.Name, Version: mf.Version, SHA256: mf.Integrity.SHA256,
					Path: res.Path, Existed: res.Existed})
			}
			if res.Existed {
				fmt.Fprintf(c.App.Writer, "%s@%s is already published, identical: nothing to do\n  %s\n", termtext.Line(mf.Name), termtext.Line(mf.Version), termtext.Line(res.Path))
				return nil
			}
			fmt.Fprintf(c.App.Writer, "published %s@%s (sha256 %s)\n  %s\n  share it with: git ctx push\n", termtext.Line(mf.Name), termtext.Line(mf.Version), mf.Integrity.SHA256[:12], termtext.Line(res.Path))
			return nil
		},
	}
}

func pkgArgAndMemory(c *cli.Context) (string, *workspace.Workspace, error) {
	arg, err := pkgArg(c, "FILE")
	if err != nil {
		return "", nil, err
	}
	m, err := openMemory(c)
	return arg, m, err
}

func pkgList() *cli.Command {
	return &cli.Command{
		Name: "list", Aliases: []string{"ls"}, Usage: "list this repository's published packages (read from the memory branch, each verified)",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return fault.New(fault.Usage, "pkg list takes no arguments")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			list, err := ctxpackages.List(c.Context, m)
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				return output.Write(w, output.NewPackageList(list))
			}
			if len(list) == 0 {
				fmt.Fprintln(w, "No packages published. Publish one with: git ctx pkg publish FILE")
				return nil
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
				sha := p.SHA256
				if len(sha) > 12 {
					sha = sha[:12]
				}
				fmt.Fprintf(w, "%s@%s  %s  %s  %s  %s\n", termtext.Line(p.Name), termtext.Line(p.Version), termtext.Line(orDash(sha)),
					termtext.Line(strings.Join(p.Layers, ",")), termtext.Line(signer), termtext.Line(state))
			}
			return nil
		},
	}
}

// forceFlag lets a command replace its output file.
var forceFlag = &cli.BoolFlag{Name: "force", Usage: "replace the output file if it exists (without it an existing file is refused, exit 7)"}

// writeOutput writes a file the user named (or its default name) atomically:
// an existing path is refused unless --force.
func writeOutput(c *cli.Context, path string, data []byte) error {
	err := workspace.WriteOutput(path, data, c.Bool("force"))
	if err != nil && !errors.Is(err, workspace.ErrOutputExists) {
		err = fmt.Errorf("write %s: %w", path, err)
	}
	return err
}

func pkgGet() *cli.Command {
	return &cli.Command{
		Name: "get", Usage: "write a published package to a file (default: the highest version that verifies)",
		ArgsUsage: "NAME[@VERSION]",
		Description: "Without @VERSION the highest version is taken: a leading 'v' is ignored, dot-separated fields\n" +
			"compare numerically when numeric, a pre-release (\"1.0.0-rc.1\") is lower than its release, and\n" +
			"build metadata (\"+build\") only breaks ties.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (default <name>-<version>.ctxpkg, '/' as '_'; '-' for standard output)"},
			forceFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			spec, err := pkgArg(c, "NAME[@VERSION]")
			if err != nil {
				return err
			}
			if c.Bool("json") && c.String("output") == "-" {
				return fault.New(fault.Usage, "pkg get: --json and -o - both print on standard output: give -o FILE")
			}
			m, err := openMemory(c)
			if err != nil {
				return err
			}
			info, data, err := ctxpackages.Get(c.Context, m, spec)
			if err != nil {
				return err
			}
			out := c.String("output")
			if out == "-" {
				_, err := c.App.Writer.Write(data)
				return err
			}
			if out == "" {
				out = strings.ReplaceAll(info.Name, "/", "_") + "-" + info.Version + ctxpkg.Extension
			}
			if err := writeOutput(c, out, data); err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.PackageFile{Name: info.Name, Version: info.Version, File: out, Bytes: len(data),
					SHA256: info.SHA256, Signed: info.Signed})
			}
			fmt.Fprintf(c.App.Writer, "%s@%s -> %s (%d bytes, verified)\n", termtext.Line(info.Name), termtext.Line(info.Version), termtext.Line(out), len(data))
			return nil
		},
	}
}

func pkgWrap() *cli.Command {
	return &cli.Command{
		Name: "wrap", Usage: "wrap a verified package in a transport envelope signed with a shared HMAC secret",
		ArgsUsage: "FILE",
		Description: "Writes lean-ctx's TransportEnvelopeV1 (content_type context_package, payload = the file text)\n" +
			"with lean-ctx's HMAC-SHA256. The secret comes from --secret-file, --secret-fd or the descriptor\n" +
			secretFDEnv + " names; never from the command line. Envelopes are limited to 2,000,000 bytes.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "recipient `AGENT` id"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (default FILE.envelope.json)"},
			forceFlag, jsonFlag,
		}, secretFlags...),
		Action: func(c *cli.Context) error {
			file, err := pkgArg(c, "FILE")
			if err != nil {
				return err
			}
			secret, err := readSecret(c)
			if err != nil {
				return err
			}
			pc := ctxpackages.CheckFile(file)
			if pc.Refused {
				return fault.Wrap(fault.Refused, errors.New(strings.Join(pc.Failures, "; ")))
			}
			if pc.Raw == nil {
				return fault.New(fault.Failed, "%s: %s", file, strings.Join(pc.Failures, "; "))
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
			out := c.String("output")
			if out == "" {
				out = file + ".envelope.json"
			}
			if err := writeOutput(c, out, env); err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.PackageWrap{Name: pc.Name, Version: pc.Version, File: out, Bytes: len(env)})
			}
			fmt.Fprintf(c.App.Writer, "wrapped %s@%s -> %s (%d bytes, HMAC-SHA256)\n", termtext.Line(pc.Name), termtext.Line(pc.Version), termtext.Line(out), len(env))
			return nil
		},
	}
}

func pkgUnwrap() *cli.Command {
	return &cli.Command{
		Name: "unwrap", Usage: "check a transport envelope's HMAC and write the package it carries",
		ArgsUsage: "FILE",
		Description: "Accepts lean-ctx's HMAC and the specification's simple form (the output says which), in\n" +
			"constant time; then verifies the payload package. Exit 1 on a wrong secret or a bad package,\n" +
			"7 when the envelope is over 2,000,000 bytes or carries something other than a package.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the package to `FILE` (default <name>-<version>.ctxpkg, '/' as '_')"},
			forceFlag, jsonFlag,
		}, secretFlags...),
		Action: func(c *cli.Context) error {
			file, err := pkgArg(c, "FILE")
			if err != nil {
				return err
			}
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
			out := c.String("output")
			if out == "" {
				out = filepath.Base(strings.ReplaceAll(pc.Name, "/", "_") + "-" + pc.Version + ctxpkg.Extension)
			}
			if err := writeOutput(c, out, []byte(ef.Envelope.PayloadJSON)); err != nil {
				return err
			}
			if c.Bool("json") {
				return output.Write(c.App.Writer, output.PackageUnwrap{Form: ef.Form.String(), Name: pc.Name, Version: pc.Version, File: out})
			}
			fmt.Fprintf(c.App.Writer, "HMAC ok (%s form); package %s@%s verified -> %s\n", ef.Form, termtext.Line(pc.Name), termtext.Line(pc.Version), termtext.Line(out))
			return nil
		},
	}
}
