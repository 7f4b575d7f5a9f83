// Package s3test runs a real S3-compatible server for tests (imported by
// tests only): SeaweedFS's weed binary, installed by scripts/s3-server.sh,
// started on 127.0.0.1 with free ports, one access key, and its data in a
// temporary directory. It honours conditional writes (If-None-Match: * and
// If-Match on PutObject and CompleteMultipartUpload) and checks SigV4
// signatures, so wrong credentials are refused as on AWS.
//
// Without the binary a test is skipped with a message naming the install
// script, unless the environment variable CI is set: then it fails.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Version is the SeaweedFS module version scripts/s3-server.sh installs.
const Version = "v0.0.0-20261109003541-7506e5f91cd6"

// EnvBinary names the weed binary to use instead of the installed one.
const EnvBinary = "GIT_CTX_S3_SERVER"

// Server is a running S3 server.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string

	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	stop bool
}

// Binary is the weed binary: $GIT_CTX_S3_SERVER, else where
// scripts/s3-server.sh installs it, ~/.cache/git-ctx/s3-server/<Version>/weed
// of the user running the tests (found through the password database, since
// tests often move HOME).
func Binary() string {
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	home := ""
	if u, err := user.Current(); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".cache", "git-ctx", "s3-server", Version, "weed")
}

// need skips t (or, with CI set, fails it) when the binary is missing.
func need(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin
	}
	msg := fmt.Sprintf("S3 test server not installed (%s missing): run scripts/s3-server.sh (or set %s)", bin, EnvBinary)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; make test installs it first (make s3-server)", msg)
	}
	t.Skip(msg + "; S3 store tests skipped")
	return ""
}

var (
	sharedMu  sync.Mutex
	sharedSrv *Server
)

// Shared returns the process's shared server, starting it on first use.
// StopShared (from TestMain) stops it; it also dies with the test process.
func Shared(t testing.TB) *Server {
	t.Helper()
	bin := need(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		return sharedSrv
	}
	s, err := start(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	sharedSrv = s
	return s
}

// StopShared stops the shared server, if one was started.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		sharedSrv.Stop()
		sharedSrv = nil
	}
}

// Start starts a server of t's own (stopped when t ends), for a test that
// stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := need(t)
	s, err := start(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// freePorts finds n distinct ports p on 127.0.0.1 such that both p and
// p+10000 (weed's default gRPC port for p) can be listened on.
func freePorts(n int) ([]int, error) {
	var ports []int
	seen := map[int]bool{}
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		var b [2]byte
		rand.Read(b[:])
		p := 20000 + int(b[0])<<8%20000 + int(b[1])
		if seen[p] || seen[p+10000] || seen[p-10000] {
			continue
		}
		ok := true
		for _, q := range []int{p, p + 10000} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	if len(ports) < n {
		return nil, errors.New("no free ports")
	}
	return ports, nil
}

// start runs weed server with S3 in dir ("" makes a temporary one, removed
// by Stop) and waits until a bucket can be created.
func start(bin, dir string) (*Server, error) {
	own := dir == ""
	if own {
		var err error
		if dir, err = os.MkdirTemp("", "git-ctx-s3test-"); err != nil {
			return nil, err
		}
	}
	s := &Server{AccessKey: "gitctxtest" + randHex(4), SecretKey: "secret-" + randHex(16), done: make(chan struct{})}
	if own {
		s.dir = dir
	}
	cfg := fmt.Sprintf(`{"identities":[{"name":"tester","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, s.AccessKey, s.SecretKey)
	cfgPath := filepath.Join(dir, "s3.json")
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[3])
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir="+data,
		"-master.port="+strconv.Itoa(ports[0]), "-volume.port="+strconv.Itoa(ports[1]), "-filer.port="+strconv.Itoa(ports[2]),
		"-s3", "-s3.port="+strconv.Itoa(ports[3]), "-s3.config="+cfgPath, "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.autoCreateBucket=false",
		"-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=0",
		"-filer.localSocket="+filepath.Join(dir, "filer.sock"))
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = append(os.Environ(), "HOME="+dir)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.done) }()
	if err := s.waitReady(3 * time.Minute); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
		if len(log) > 4000 {
			log = log[len(log)-4000:]
		}
		return nil, fmt.Errorf("S3 test server did not come up: %w\n%s", err, log)
	}
	return s, nil
}

// waitReady polls until a bucket can be created and deleted.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("weed exited")
		default:
		}
		if resp, err := http.Get(s.Endpoint + "/"); err == nil {
			resp.Body.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			name := "ready-" + randHex(6)
			_, last = s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
			if last == nil {
				s.Client().DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
				cancel()
				return nil
			}
			cancel()
		} else {
			last = err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", limit, last)
}

// Stop ends the server (idempotent) and removes its temporary directory.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop {
		return
	}
	s.stop = true
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Client is a plain SDK client with the server's credentials, path-style.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// Env is the environment a git-ctx process needs to reach the server with
// its credentials (Reinstate's variables), the endpoint and no AWS
// configuration of the user running the tests.
func (s *Server) Env() []string {
	return []string{
		"REINSTATE_S3_ACCESS_KEY_ID=" + s.AccessKey, "REINSTATE_S3_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint, "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
	}
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := "t-" + strings.ToLower(randHex(8))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
