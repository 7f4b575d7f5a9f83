package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// i18startOwnInitBudget bounds what git-ctx's own packages allocate while
// the binary starts (GODEBUG=inittrace=1), summed: today about 15 KiB,
// mostly redact's scanner tables. A regexp compiled at package level costs
// 2–10 KiB; internal/archcheck's TestNoCompileAtInit names the line.
const i18startOwnInitBudget = 20 << 10

// i18startNotLinked are heavy packages the binary does not link today;
// linking one puts its init into every command's start. blackfriday (1–2 ms
// of init, 200 KiB) came with urfave/cli's man-page renderer: the shipped
// build (tag urfave_cli_no_docs, as the harness builds it) leaves it out.
// The MCP server (its Go SDK and jsonschema-go) and the S3 session store
// (the AWS SDK v2), with the net/http, crypto/tls and crypto/x509 they
// bring, added 5–8 ms of init to every start: the shipped git-ctx leaves
// them to git-ctx-full (tag ctx_lean; docs/ARCHITECTURE.md, "Two
// executables"), and the harness's binPath is that lean build.
var i18startNotLinked = []string{"html/template",
	"github.com/russross/blackfriday/v2", "github.com/cpuguy83/go-md2man/v2/md2man",
	"net/http", "crypto/tls", "crypto/x509",
	"github.com/aws/aws-sdk-go-v2/service/s3", "github.com/aws/aws-sdk-go-v2/config",
	"github.com/modelcontextprotocol/go-sdk/mcp", "github.com/google/jsonschema-go/jsonschema"}

// i18startInit is one line of the Go runtime's init trace.
type i18startInit struct {
	pkg   string
	bytes int
}

// i18startTrace runs `git-ctx version` with GODEBUG=inittrace=1 in dir with
// env and returns stdout and the packages initialised.
func i18startTrace(t *testing.T, dir string, env []string) (string, []i18startInit) {
	t.Helper()
	cmd := exec.Command(binPath, "version")
	cmd.Dir = dir
	cmd.Env = append(env, "GODEBUG=inittrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git-ctx version: %v\n%s", err, stderr.String())
	}
	var inits []i18startInit
	trace := stderr.String()
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		// init <pkg> @<t> ms, <c> ms clock, <b> bytes, <n> allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		inits = append(inits, i18startInit{pkg: f[1], bytes: b})
	}
	if len(inits) < 20 {
		t.Fatalf("init trace has %d packages; stderr:\n%s", len(inits), trace)
	}
	return stdout.String(), inits
}

// TestVersionStartsLight (issue 18, "Fast start"): `git ctx version` runs
// outside any repository with no git on PATH and no identity home, touches
// nothing (no cache, no identity, no git), and what starting the binary
// initialises stays light: git-ctx's own packages allocate at most
// i18startOwnInitBudget at init, and no package of i18startNotLinked is
// linked in.
func TestVersionStartsLight(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	ctxHome := filepath.Join(dir, "ctxhome")
	work := filepath.Join(dir, "work")
	emptyBin := filepath.Join(dir, "bin")
	for _, d := range []string{home, work, emptyBin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + emptyBin, "GIT_CTX_HOME=" + ctxHome, "XDG_DATA_HOME=" + filepath.Join(home, "xdg")}
	out, inits := i18startTrace(t, work, env)
	if !strings.HasPrefix(out, "git-ctx version ") {
		t.Errorf("version printed %q", out)
	}
	for _, p := range []string{ctxHome, filepath.Join(home, "xdg")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("version created %s (stat: %v)", p, err)
		}
	}
	for _, d := range []string{work, home} {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("version wrote into %s: %v %v", d, entries, err)
		}
	}

	own, linked := 0, map[string]bool{}
	var heavy []string
	for _, in := range inits {
		linked[in.pkg] = true
		if strings.HasPrefix(in.pkg, "github.com/git-ctx/git-ctx/") {
			own += in.bytes
			if in.bytes > 4<<10 {
				heavy = append(heavy, in.pkg+" "+strconv.Itoa(in.bytes)+" B")
			}
		}
	}
	if own > i18startOwnInitBudget {
		t.Errorf("git-ctx's packages allocate %d bytes at init (budget %d); largest: %v", own, i18startOwnInitBudget, heavy)
	}
	for _, p := range i18startNotLinked {
		if linked[p] {
			t.Errorf("%s is initialised at start: something on every command's path now imports it", p)
		}
	}
}
