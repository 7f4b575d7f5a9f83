package integration

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Limits: every size limit is enforced before the whole input is read, in
// bounded memory. Each case feeds the built binary (run directly, so that its
// own resource usage is measured) far more than its limit: through a pipe
// that the process must stop reading early, or as a sparse file it must
// refuse by its size. Limits and where they are checked: docs/SECURITY.md.

const (
	limitFeed   = 1 << 30   // bytes offered through a pipe
	limitMaxRSS = 200 << 20 // bytes of resident memory a refusal may use
	limitMaxEat = 64 << 20  // bytes a process may consume from the pipe
)

// limitRun runs git-ctx ARGS in dir with stdin fed from gen (nil: none),
// returning the result, how many bytes it took from the pipe and its max RSS.
func limitRun(t *testing.T, dir string, env []string, gen func(w io.Writer) error, args ...string) (result, int64, int64) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(c, binPath, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var fed int64
	done := make(chan struct{})
	if gen != nil {
		pw, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cw := &countWriter{w: pw}
		go func() {
			defer close(done)
			gen(cw) // stops at the first write error (EPIPE once the process is gone)
			pw.Close()
			fed = cw.n
		}()
	} else {
		close(done)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	<-done
	res, err := inpResult(&stdout, &stderr, err, c.Err())
	if err != nil {
		t.Fatalf("git-ctx %q: %v", args, err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rss := int64(0)
	if ru != nil {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return res, fed, rss
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// feed writes prefix, then fill repeated up to limitFeed bytes in all.
func feed(prefix string, fill byte) func(w io.Writer) error {
	return func(w io.Writer) error {
		if _, err := io.WriteString(w, prefix); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte{fill}, 1<<20)
		for n := len(prefix); n < limitFeed; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
}

// sparseFile makes a file of size bytes that takes no disk space.
func sparseFile(t *testing.T, path string, prefix string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(prefix); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestLimits(t *testing.T) {
	t.Parallel()
	s, repo, env := cltInitRepo(t, "dev")
	before := len(logJSON(t, repo, env))

	big := filepath.Join(s.root, "big.json")
	sparseFile(t, big, `{"v":1,"summary":"`, 2<<30)
	bigEmb := filepath.Join(s.root, "big.emb")
	sparseFile(t, bigEmb, `[`, 1<<30)

	cases := []struct {
		name  string
		gen   func(w io.Writer) error
		args  []string
		code  int
		inErr string // in stderr or stdout
		eat   bool   // the process reads stdin: it must stop early
	}{
		{"checkpoint --stdin: 1 GiB object", feed(`{"message":"`, 'a'), []string{"checkpoint", "--stdin"}, 7, "exceeds", true},
		{"checkpoint --stdin: 1 GiB without a newline or a token end", feed("", 'x'), []string{"checkpoint", "--stdin"}, 7, "exceeds", true},
		{"checkpoint --stdin: 100k nested arrays", func(w io.Writer) error {
			_, err := io.WriteString(w, `{"message":`+strings.Repeat("[", 100_000))
			return err
		}, []string{"checkpoint", "--stdin"}, 7, "stdin", true},
		{"checkpoint --stdin: 1.9 MiB of nested objects", func(w io.Writer) error {
			_, err := io.WriteString(w, strings.Repeat(`{"a":`, 390_000))
			return err
		}, []string{"checkpoint", "--stdin"}, 7, "stdin", true},
		{"checkpoint --emb-file: 1 GiB (sparse)", nil, []string{"checkpoint", "-m", "x", "--emb-file", bigEmb}, 7, "limit", false},
		{"verify FILE: 2 GiB (sparse)", nil, []string{"verify", big}, 7, "limit", false},
		{"hook claude-stop: 1 GiB of hook input", feed(`{"session_id":"`, 's'), []string{"hook", "claude-stop"}, 0, "warning", true},
	}
	for _, tc := range cases {
		res, fed, rss := limitRun(t, repo, env, tc.gen, tc.args...)
		t.Logf("%s: exit %d, %d MiB taken from the pipe, max RSS %d MiB", tc.name, res.code, fed>>20, rss>>20)
		if res.code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, res.code, tc.code, res)
		}
		if tc.inErr != "" && !strings.Contains(res.stderr+res.stdout, tc.inErr) {
			t.Errorf("%s: output lacks %q:\n%s", tc.name, tc.inErr, res)
		}
		// Linux folds the parent's resident set into a child's max RSS
		// when the child is started by vfork and exec (what os/exec does),
		// so the bound is relative to this test process, which other
		// parallel tests may have made large: reading a 1 GiB input whole
		// still goes far past it.
		var self syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		bound := max(int64(limitMaxRSS), self.Maxrss*1024+limitMaxRSS/2)
		if rss == 0 || rss > bound {
			t.Errorf("%s: max RSS %d bytes (limit %d)", tc.name, rss, bound)
		}
		if tc.eat && fed > limitMaxEat {
			t.Errorf("%s: the process read %d bytes of its input before refusing", tc.name, fed)
		}
	}
	if got := len(logJSON(t, repo, env)); got != before {
		t.Errorf("refused inputs wrote %d checkpoints", got-before)
	}
	_ = time.Second
}
