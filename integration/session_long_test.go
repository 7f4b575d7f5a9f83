package integration

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSessionLargeRoundTrip pushes and restores a 1 GiB synthetic Claude
// session and checks each git-ctx process's peak RSS stays under 64 MiB.
// It takes about a minute or more (disk and CPU bound), so it runs only with
// GIT_CTX_LONG=1:
//
//	GIT_CTX_LONG=1 go test -tags sqlite_fts5 -count=1 -v ./integration -run TestSessionLargeRoundTrip
func TestSessionLargeRoundTrip(t *testing.T) {
	if os.Getenv("GIT_CTX_LONG") == "" {
		t.Skip("1 GiB session round trip: set GIT_CTX_LONG=1 to run it")
	}
	const size = 1 << 30
	const limitKiB = 64 << 10
	w, a, b := cltSessPair(t, "elsewhere")
	const id = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"
	src := claudeFile(a.home, a.repo, id)
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	wantHash := writeLarge(t, src, a.repo, size, b.repo)

	start := time.Now()
	r, ps := sessRun(t, a.repo, a.env, sessPass, "push", "--store", w.store, "--work-factor", sessWF)
	if r.code != 0 {
		t.Fatalf("push: %s", r)
	}
	pushTime := time.Since(start)
	pushRSS := ps.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux

	start = time.Now()
	r, ps = sessRun(t, b.repo, b.env, sessPass, "pull", "--store", w.store)
	if r.code != 0 {
		t.Fatalf("pull: %s", r)
	}
	pullTime := time.Since(start)
	pullRSS := ps.SysUsage().(*syscall.Rusage).Maxrss

	dest := claudeFile(b.home, b.repo, id)
	f, err := os.Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.Copy(h, f)
	f.Close()
	if got := hex.EncodeToString(h.Sum(nil)); got != wantHash {
		t.Fatal("restored 1 GiB session differs from the source with the paths mapped")
	}
	mb := float64(size) / 1e6
	t.Logf("1 GiB session: push %.1f s (%.0f MB/s), peak RSS %d KiB; pull %.1f s (%.0f MB/s), peak RSS %d KiB",
		pushTime.Seconds(), mb/pushTime.Seconds(), pushRSS, pullTime.Seconds(), mb/pullTime.Seconds(), pullRSS)
	// Relative to this test process, folded into a vfork'd child's max RSS
	// (see TestS3SessionLargeBoundedMemory).
	bound := max(int64(limitKiB), costSelfRSS()/1024+limitKiB/2)
	if pushRSS > bound || pullRSS > bound {
		t.Fatalf("peak RSS over the bound %d KiB: push %d KiB, pull %d KiB", bound, pushRSS, pullRSS)
	}
}

// writeLarge writes a size-byte JSONL transcript whose records name repo
// on allow-listed keys, and returns the SHA-256 of the same transcript with
// repo replaced by mappedRepo (what the restore must produce).
func writeLarge(t *testing.T, p, repo string, size int64, mappedRepo string) string {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	h := sha256.New()
	pad := strings.Repeat("lorem ipsum ", 80)
	var n int64
	for i := 0; n < size; i++ {
		line := fmt.Sprintf(`{"type":"assistant","i":%d,"cwd":%q,"message":{"text":%q}}`+"\n", i, repo, pad)
		bw.WriteString(line)
		io.WriteString(h, strings.Replace(line, `"cwd":"`+repo+`"`, `"cwd":"`+mappedRepo+`"`, 1))
		n += int64(len(line))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
