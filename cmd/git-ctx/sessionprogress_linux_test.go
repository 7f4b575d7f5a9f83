package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// psOpenPTY opens a pseudo-terminal pair (master, slave) through
// /dev/ptmx, or skips the test when the system has none.
func psOpenPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal slave: %v", err)
	}
	return m, s
}

// psOnTerminal runs the CLI in process with stderr on a fresh terminal
// and returns the exit code, stdout and what the terminal received.
func psOnTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	m, s := psOpenPTY(t)
	defer m.Close()
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, m) // ends with EIO once the slave is closed
		got <- b.String()
	}()
	code, stdout := psRunTo(t, s, args...)
	s.Close()
	return code, stdout, <-got
}

// TestSessionProgressOnTerminal: with stderr a terminal, a push shows the
// key derivation and upload phases and clears its line at the end, while
// --json stdout stays pure JSON; with -q the terminal gets nothing.
func TestSessionProgressOnTerminal(t *testing.T) {
	sess := psSessionFixture(t)
	code, stdout, term := psOnTerminal(t, append([]string{"session", "push", "--work-factor", "10", "--json"}, sess...)...)
	if code != 0 {
		t.Fatalf("push: exit %d: %q", code, term)
	}
	if !strings.HasPrefix(stdout, "{") || strings.Contains(stdout, "git-ctx:") || strings.Contains(stdout, "\r") {
		t.Fatalf("progress mixed into --json stdout: %q", stdout)
	}
	for _, want := range []string{"git-ctx: deriving key…", "git-ctx: encrypting and uploading ", " B / ", "git-ctx: updating the manifest"} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal lacks %q: %q", want, term)
		}
	}
	if !strings.HasSuffix(term, "\r\x1b[K") {
		t.Errorf("progress line not cleared at the end: %q", term)
	}

	code, _, term = psOnTerminal(t, append([]string{"session", "pull", "-q"}, sess...)...)
	if code != 0 || term != "" {
		t.Fatalf("pull -q: exit %d, terminal got %q", code, term)
	}
	t.Setenv("GIT_CTX_QUIET", "1")
	code, _, term = psOnTerminal(t, append([]string{"session", "list"}, sess...)...)
	if code != 0 || term != "" {
		t.Fatalf("list with GIT_CTX_QUIET: exit %d, terminal got %q", code, term)
	}
}
