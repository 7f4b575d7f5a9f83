package testrepo

import (
	"encoding/json"
	"strings"
	"testing"
)

// ---- running git-ctx: the helpers over one way of running it ----

// Exec runs one command line in dir with exactly env (stdin nil is no
// input): argv[0] "git" is the real git, `git ctx …` and `git-ctx …` are
// git-ctx, run the way the test package runs it. A command that could not
// run fails the test; every exit is a Result.
type Exec func(t testing.TB, dir string, env []string, stdin []byte, argv ...string) Result

// CLI is what every CLI test does with commands, over one way of running
// git-ctx: the built binary (integration) or run in process (cmd/git-ctx).
type CLI struct {
	Exec Exec
}

// Run runs argv with no input.
func (c CLI) Run(t testing.TB, dir string, env []string, argv ...string) Result {
	t.Helper()
	return c.Exec(t, dir, env, nil, argv...)
}

// MustRun runs argv, fails the test unless it exits 0, and returns stdout.
func (c CLI) MustRun(t testing.TB, dir string, env []string, argv ...string) string {
	t.Helper()
	r := c.Run(t, dir, env, argv...)
	if r.Code != 0 {
		t.Fatalf("%q in %s: %s", argv, dir, r)
	}
	return r.Stdout
}

// GitOut runs git and returns its trimmed stdout; it must succeed.
func (c CLI) GitOut(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(c.MustRun(t, dir, env, append([]string{"git"}, args...)...))
}

// Ctx runs `git ctx ARGS` through git's dispatch.
func (c CLI) Ctx(t testing.TB, dir string, env []string, args ...string) Result {
	t.Helper()
	return c.Run(t, dir, env, append([]string{"git", "ctx"}, args...)...)
}

// MustCtx runs `git ctx ARGS`, which must exit 0, and returns stdout.
func (c CLI) MustCtx(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	return c.MustRun(t, dir, env, append([]string{"git", "ctx"}, args...)...)
}

// CtxJSON runs `git ctx ARGS`, which must exit 0, and decodes its stdout
// into v.
func (c CLI) CtxJSON(t testing.TB, dir string, env []string, v any, args ...string) {
	t.Helper()
	out := c.MustCtx(t, dir, env, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode git ctx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Checkpoint runs `git ctx checkpoint --json ARGS` and returns the record.
func (c CLI) Checkpoint(t testing.TB, dir string, env []string, args ...string) Record {
	t.Helper()
	out := c.MustCtx(t, dir, env, append([]string{"checkpoint", "--json"}, args...)...)
	return DecodeRecord(t, []byte(out))
}

// Log runs `git ctx log --json ARGS`.
func (c CLI) Log(t testing.TB, dir string, env []string, args ...string) []Record {
	t.Helper()
	var list []Record
	c.CtxJSON(t, dir, env, &list, append([]string{"log", "--json"}, args...)...)
	return list
}

// Status runs `git ctx status --json`.
func (c CLI) Status(t testing.TB, dir string, env []string) StatusInfo {
	t.Helper()
	var st StatusInfo
	c.CtxJSON(t, dir, env, &st, "status", "--json")
	return st
}

// Verify runs `git ctx verify --json`, checks the exit code agrees with
// the report's ok, and returns the report.
func (c CLI) Verify(t testing.TB, dir string, env []string) VerifyReport {
	t.Helper()
	return DecodeVerify(t, c.Ctx(t, dir, env, "verify", "--json"))
}

// WantCode fails unless r exited with code.
func WantCode(t testing.TB, what string, r Result, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("%s: want exit %d, got %s", what, code, r)
	}
}

// ---- devices ----

// Device is one simulated machine of a sync test: a checkout and its own
// GIT_CTX_HOME (the sandbox's device Name), running git-ctx through CLI.
type Device struct {
	CLI     CLI
	Sandbox *Sandbox
	Name    string
	Dir     string
	Env     []string
}

// Device is the device name of s working in the checkout dir.
func (c CLI) Device(s *Sandbox, name, dir string) *Device {
	return &Device{CLI: c, Sandbox: s, Name: name, Dir: dir, Env: s.Env(name)}
}

// OriginDevice is a new device whose repository (NewOriginRepo) has
// origin url, with main pushed there by plain git.
func (c CLI) OriginDevice(t testing.TB, s *Sandbox, name, url string) *Device {
	t.Helper()
	return c.Device(s, name, NewOriginRepo(t, s, name, url))
}

// CloneDevice is a new device whose repository is a clone of url.
func (c CLI) CloneDevice(t testing.TB, s *Sandbox, name, url string) *Device {
	t.Helper()
	return c.Device(s, name, Clone(t, s, name, url))
}

// ID is the device id git-ctx created for this device.
func (d *Device) ID(t testing.TB) string { t.Helper(); return d.Sandbox.DeviceID(t, d.Name) }

// Ctx runs `git ctx ARGS` on the device.
func (d *Device) Ctx(t testing.TB, args ...string) Result {
	t.Helper()
	return d.CLI.Ctx(t, d.Dir, d.Env, args...)
}

// Must runs `git ctx ARGS` on the device, which must exit 0, and returns
// stdout.
func (d *Device) Must(t testing.TB, args ...string) string {
	t.Helper()
	return d.CLI.MustCtx(t, d.Dir, d.Env, args...)
}

// Checkpoint records a checkpoint with summary on the device.
func (d *Device) Checkpoint(t testing.TB, summary string) Record {
	t.Helper()
	return d.CLI.Checkpoint(t, d.Dir, d.Env, "-m", summary)
}

// Git runs git on the device's checkout and returns its trimmed stdout; it
// must succeed.
func (d *Device) Git(t testing.TB, args ...string) string {
	t.Helper()
	return d.CLI.GitOut(t, d.Dir, d.Env, args...)
}

// Tip is the device's memory branch tip ("" when there is none).
func (d *Device) Tip(t testing.TB) string { t.Helper(); return Tip(t, d.Dir, d.Env) }

// Hashes is the set of checkpoint hashes `git ctx log --json` lists.
func (d *Device) Hashes(t testing.TB) map[string]bool {
	t.Helper()
	return HashSet(t, d.Name, d.CLI.Log(t, d.Dir, d.Env))
}

// WantVerifies fails unless `git ctx verify --json` passes on the device.
func (d *Device) WantVerifies(t testing.TB) VerifyReport {
	t.Helper()
	rep := d.CLI.Verify(t, d.Dir, d.Env)
	if !rep.OK {
		t.Fatalf("device %s: verify fails:\n%s", d.Name, rep.Raw)
	}
	return rep
}
