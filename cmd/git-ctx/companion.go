package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-ctx/git-ctx/gitrepo"
	"github.com/git-ctx/git-ctx/internal/fault"
)

// Two executables (docs/ARCHITECTURE.md): the shipped git-ctx is built with
// the tag ctx_lean and links neither the MCP Go SDK nor the AWS SDK, whose
// package init every command would pay at start; git-ctx-full is the same
// main package without the tag. The lean binary hands `git ctx mcp` and
// any session command whose store is s3:// to git-ctx-full by exec (the
// same argv, environment and standard input and output), before it reads
// or prompts for anything.

// companionName is the executable with everything (the build without
// ctx_lean), installed beside git-ctx.
const companionName = "git-ctx-full"

// handoffEnv is set, to the lean binary's version, in the environment of
// an exec'd companion: a lean binary that finds it set was itself started
// as the companion (a wrong install), and reports that instead of exec'ing
// in a loop; a companion of another version refuses to run (checkHandoff),
// since the two would write the cache in different schemas.
const handoffEnv = "GIT_CTX_HANDOFF"

// companionCommand reports which command of args (os.Args without the
// program name) only git-ctx-full can run: "git ctx mcp", "git ctx session
// … --store s3://…" (the flag, else git config ctx.sessionStore of the
// repository at dir), or "" for any other. It reads git config only for a
// session command without --store.
func companionCommand(ctx context.Context, args []string, dir string) string {
	i := 0
	for i < len(args) && isGlobalFlag(args[i]) {
		i++
	}
	if i == len(args) {
		return ""
	}
	switch args[i] {
	case "mcp":
		return "git ctx mcp"
	case "session":
	default:
		return ""
	}
	rest := args[i+1:]
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return "" // the group's help or a usage error: the lean binary has both
	}
	spec, given := storeFlag(rest)
	if !given || spec == "" {
		// An empty --store is no store: the session commands then read
		// ctx.sessionStore (sessions.Open), and so does this.
		repo, err := gitrepo.Open(ctx, dir)
		if err != nil {
			return "" // the session command reports it
		}
		spec = repo.Config("ctx.sessionStore")
	}
	if strings.HasPrefix(spec, "s3://") {
		return "git ctx session " + rest[0] + " with an s3:// store"
	}
	return ""
}

// isGlobalFlag: git's paging options, the only flags before the command
// (gitoutArgs).
func isGlobalFlag(a string) bool {
	switch a {
	case "-p", "--paginate", "-P", "--no-pager":
		return true
	}
	return false
}

// storeFlag finds the session commands' --store value in args (urfave/cli
// takes -store and --store, with "=" or as the next argument; the last
// wins), up to "--".
func storeFlag(args []string) (spec string, given bool) {
	for j := 0; j < len(args) && args[j] != "--"; j++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[j], "-"), "=")
		if !strings.HasPrefix(args[j], "-") || name != "store" {
			continue
		}
		if !hasValue {
			if j+1 == len(args) {
				return spec, given // a usage error the CLI reports
			}
			j++
			value = args[j]
		}
		spec, given = value, true
	}
	return spec, given
}

// findCompanion is git-ctx-full beside this executable (os.Executable,
// symlinks resolved), else on PATH. Not found is a one-line Config error
// (exit 3) that says how to install it.
func findCompanion(what string) (string, error) {
	self, err := os.Executable()
	if err == nil {
		if p := filepath.Join(filepath.Dir(self), companionName); isExecutableFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(companionName); err == nil {
		return p, nil
	}
	where := "this git-ctx"
	if self != "" {
		where = self
	}
	if p := nonExecutableCompanion(self); p != "" {
		return "", fault.New(fault.Config, "%s needs %s: %s is there but not executable: reinstall both with ./install.sh or make install (or chmod +x it)", what, companionName, p)
	}
	return "", fault.New(fault.Config, "%s needs %s (the build with the MCP server and the S3 session store), found neither beside %s nor on PATH: install both with ./install.sh or make install from git-ctx's source", what, companionName, where)
}

// nonExecutableCompanion is a git-ctx-full that findCompanion passed
// over because it is a regular file without execute permission, beside
// self or in a PATH directory ("" for none): a broken install to name.
func nonExecutableCompanion(self string) string {
	dirs := filepath.SplitList(os.Getenv("PATH"))
	if self != "" {
		dirs = append([]string{filepath.Dir(self)}, dirs...)
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, companionName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 == 0 {
			return p
		}
	}
	return ""
}

func isExecutableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// handOff replaces this process with git-ctx-full running the same
// command line (os.Args) in the same environment, so standard input and
// output (the MCP protocol, a passphrase prompt or GIT_CTX_PASSPHRASE_FD)
// reach it unchanged. It returns only on failure.
func handOff(what string) error {
	if os.Getenv(handoffEnv) != "" {
		return fault.New(fault.Config, "%s: this git-ctx was started as %s but is the lean build without it: reinstall both with ./install.sh or make install", what, companionName)
	}
	path, err := findCompanion(what)
	if err != nil {
		return err
	}
	env := append(os.Environ(), handoffEnv+"="+version)
	if err := syscall.Exec(path, os.Args, env); err != nil {
		return fault.Wrap(fault.Config, fmt.Errorf("%s: start %s: %w", what, path, err))
	}
	return nil
}
