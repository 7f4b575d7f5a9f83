package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/internal/output"
	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Helpers of the team-sync tests (sync_*_test.go): real remotes (a bare
// repository over a path, git daemon, git http-backend behind basic auth)
// and simulated devices (one clone and one GIT_CTX_HOME each).

// syncDevice is one simulated machine: a checkout and its own GIT_CTX_HOME.
// Its methods are testrepo.Device's, run with the built binary.
type syncDevice struct {
	name string // the sandbox device name (GIT_CTX_HOME suffix)
	dir  string
	env  []string
	s    *sandbox
}

func newSyncDevice(s *sandbox, name, dir string) *syncDevice {
	return &syncDevice{name: name, dir: dir, env: s.env(name), s: s}
}

// dev is d as a testrepo.Device (made anew each call, so a test that
// changed d.env or d.dir is heard).
func (d *syncDevice) dev() *testrepo.Device {
	return &testrepo.Device{CLI: binCLI, Sandbox: d.s.tr, Name: d.name, Dir: d.dir, Env: d.env}
}

// id is the device id git-ctx created for this device.
func (d *syncDevice) id(t *testing.T) string { t.Helper(); return d.dev().ID(t) }

func (d *syncDevice) ctx(t *testing.T, args ...string) result {
	t.Helper()
	return fromRepo(d.dev().Ctx(t, args...))
}

func (d *syncDevice) must(t *testing.T, args ...string) string {
	t.Helper()
	return d.dev().Must(t, args...)
}

func (d *syncDevice) cp(t *testing.T, summary string) record {
	t.Helper()
	return d.dev().Checkpoint(t, summary)
}

func (d *syncDevice) git(t *testing.T, args ...string) string {
	t.Helper()
	return d.dev().Git(t, args...)
}

// tip is the device's memory branch tip ("" when there is none).
func (d *syncDevice) tip(t *testing.T) string { t.Helper(); return d.dev().Tip(t) }

// hashes is the set of checkpoint hashes `git ctx log --json` lists.
func (d *syncDevice) hashes(t *testing.T) map[string]bool { t.Helper(); return d.dev().Hashes(t) }

// wantVerifies fails unless `git ctx verify --json` passes on the device.
func (d *syncDevice) wantVerifies(t *testing.T) verifyReport {
	t.Helper()
	return d.dev().WantVerifies(t)
}

// syncNewBare creates an empty bare repository at path (receive-pack over
// HTTP enabled, so the same repository can be served by every transport).
func syncNewBare(t *testing.T, s *sandbox, path string) string {
	t.Helper()
	env := s.env("setup")
	mustRun(t, s.root, env, "git", "init", "-q", "--bare", "-b", "main", path)
	mustRun(t, path, env, "git", "config", "http.receivepack", "true")
	return path
}

// syncBareTip is the remote's ghyll/memory ("" when absent).
func syncBareTip(t *testing.T, s *sandbox, bare string) string {
	t.Helper()
	return testrepo.Tip(t, bare, s.env("setup"))
}

// syncCopy copies a directory tree with cp -a (modes kept, so GIT_CTX_HOMEs
// stay private).
func syncCopy(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
}

// syncFreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func syncFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// syncStartDaemon serves base over git:// with receive-pack enabled and
// returns the URL prefix ("git://127.0.0.1:PORT").
func syncStartDaemon(t *testing.T, s *sandbox, base string) string {
	t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		port := syncFreePort(t)
		cmd := exec.Command(gitPath, "daemon", "--export-all", "--enable=receive-pack", "--base-path="+base,
			"--reuseaddr", "--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--informative-errors", base)
		cmd.Env = s.env("daemon")
		cmd.Dir = s.root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start git daemon: %v", err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		pid := cmd.Process.Pid
		stop := func() {
			// The daemon's process group: the daemon and its per-connection children.
			syscall.Kill(-pid, syscall.SIGKILL)
			<-done
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				deadline = time.Time{} // exited: try another port
				continue
			default:
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
			if err == nil {
				c.Close()
				t.Cleanup(stop)
				return "git://127.0.0.1:" + strconv.Itoa(port)
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		t.Logf("git daemon on port %d did not come up: %s", port, stderr.String())
	}
	t.Fatal("could not start git daemon")
	return ""
}

// syncHTTPServer is git http-backend behind HTTP basic auth.
type syncHTTPServer struct {
	url          string // http://127.0.0.1:PORT
	unauthorized atomic.Int64
	authorized   atomic.Int64
}

// syncStartHTTP serves root with git http-backend (through net/http/cgi),
// answering 401 + WWW-Authenticate: Basic unless the request carries
// user:pass.
func syncStartHTTP(t *testing.T, s *sandbox, root, user, pass string) *syncHTTPServer {
	t.Helper()
	srv := &syncHTTPServer{}
	backend := filepath.Join(strings.TrimSpace(mustRun(t, s.root, s.env("setup"), "git", "--exec-path")), "git-http-backend")
	env := s.env("http")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			srv.unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="git-ctx test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		srv.authorized.Add(1)
		h := &cgi.Handler{
			Path: backend,
			Dir:  root,
			Env: append(append([]string(nil), env...),
				"GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER="+u),
		}
		h.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	})
	srv.url = "http://" + l.Addr().String()
	return srv
}

// syncCredentialHelper adds a credential helper answering user/pass to the
// sandbox's global git config.
func syncCredentialHelper(t *testing.T, s *sandbox, user, pass string) {
	t.Helper()
	path := filepath.Join(s.root, "gitconfig")
	mustRun(t, s.root, s.env("setup"), "git", "config", "--file", path, "credential.helper",
		fmt.Sprintf("!f() { echo username=%s; echo password=%s; }; f", user, pass))
}

// syncQuarantine is one entry of `git ctx log --unverified --json`.
type syncQuarantine = output.Quarantined

func syncUnverified(t *testing.T, d *syncDevice) []syncQuarantine {
	t.Helper()
	out := d.must(t, "log", "--unverified", "--json")
	var v struct {
		Quarantine  []syncQuarantine  `json:"quarantine"`
		Checkpoints []json.RawMessage `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("decode log --unverified --json: %v\n%s", err, out)
	}
	if v.Quarantine == nil || v.Checkpoints == nil {
		t.Fatalf("log --unverified --json lacks quarantine or checkpoints:\n%s", out)
	}
	return v.Quarantine
}

// syncStatusQuarantined is the "quarantined" count of `git ctx status --json`.
func syncStatusQuarantined(t *testing.T, d *syncDevice) int {
	t.Helper()
	out := d.must(t, "status", "--json")
	var v struct {
		Quarantined *int `json:"quarantined"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Quarantined == nil {
		t.Fatalf("status --json has no quarantined count (%v):\n%s", err, out)
	}
	return *v.Quarantined
}

// syncPulled matches the per-device line a pull prints for verified news.
func syncPulled(device string, n int) string {
	return testrepo.Pulled(device, n)
}

// syncWantLine fails unless out holds a line equal to want.
func syncWantLine(t *testing.T, what, out, want string) {
	t.Helper()
	testrepo.WantLine(t, what, out, want)
}

var syncPushedRE = regexp.MustCompile(`(?m)^Pushed ghyll/memory to (\S+) at ([0-9a-f]{12})$`)

// syncWantPushed fails unless out reports a push to remote of tip.
func syncWantPushed(t *testing.T, what, out, remote, tip string) {
	t.Helper()
	m := syncPushedRE.FindStringSubmatch(out)
	if m == nil || m[1] != remote || !strings.HasPrefix(tip, m[2]) {
		t.Fatalf("%s: want %q, got output:\n%s", what, "Pushed ghyll/memory to "+remote+" at "+tip[:12], out)
	}
}

func syncSorted(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

// syncWantHashes fails unless got equals want (as sets).
func syncWantHashes(t *testing.T, what string, got map[string]bool, want ...string) {
	t.Helper()
	testrepo.WantHashes(t, what, got, want...)
}

func syncHashesOf(cps ...record) []string {
	return testrepo.HashesOf(cps...)
}

// syncRunNoTTY runs argv in its own session (no controlling terminal, so
// a prompt cannot reach one), bounded by limit. stdin nil is /dev/null,
// anything else a pipe. It returns the result and whether the limit was hit.
func syncRunNoTTY(t *testing.T, dir string, env []string, stdin []byte, limit time.Duration, argv ...string) (result, bool) {
	t.Helper()
	prog := argv[0]
	if prog == "git" {
		prog = gitPath
	}
	c, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(c, prog, argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	if c.Err() != nil {
		return res, true
	}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	return res, false
}

// syncExec runs argv like execute does, but never calls t: it is safe in
// goroutines. A command that outlives cmdTimeout is an error.
func syncExec(dir string, env []string, argv ...string) (result, error) {
	return syncExecWithin(cmdTimeout, dir, env, argv...)
}

// syncExecWithin is syncExec with its own time limit.
func syncExecWithin(limit time.Duration, dir string, env []string, argv ...string) (result, error) {
	return inpExec(limit, dir, env, nil, argv...)
}

// syncWithout returns env without the variables named.
func syncWithout(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
