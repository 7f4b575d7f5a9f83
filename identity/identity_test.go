package identity

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
	"github.com/git-ctx/git-ctx/internal/atomicfile"
)

// newHome returns a fresh, not yet existing home directory.
func newHome(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "git-ctx")
}

func skipModeBits(t *testing.T) {
	t.Helper()
	if !checkModeBits {
		t.Skip("permission bits are not checked on " + runtime.GOOS)
	}
}

func mustLoad(t *testing.T, home, override string) *Identity {
	t.Helper()
	id, err := Load(home, override)
	if err != nil {
		t.Fatalf("Load(%q, %q): %v", home, override, err)
	}
	return id
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); checkModeBits && got != want {
		t.Errorf("%s: mode %04o, want %04o", path, got, want)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noTempFiles fails if a temporary file was left behind in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	if left, err := atomicfile.Temps(dir); err != nil || len(left) > 0 {
		t.Errorf("temporary files left behind in %s: %q (%v)", dir, left, err)
	}
}

func TestLoadCreatesIdentity(t *testing.T) {
	home := newHome(t)
	first := mustLoad(t, home, "")
	if !first.Created {
		t.Error("first Load: Created = false, want true")
	}
	if err := ValidDeviceID(first.DeviceID); err != nil {
		t.Errorf("generated device id: %v", err)
	}
	if got := string(readFile(t, filepath.Join(home, "device-id"))); got != first.DeviceID+"\n" {
		t.Errorf("device-id file = %q, want %q", got, first.DeviceID+"\n")
	}
	keyPath := filepath.Join(home, "keys", first.DeviceID+".key")
	if first.KeyPath != keyPath {
		t.Errorf("KeyPath = %q, want %q", first.KeyPath, keyPath)
	}
	priv, err := checkpoint.ParsePrivateKey(readFile(t, keyPath))
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if !priv.Equal(first.Private) {
		t.Error("key file does not hold Identity.Private")
	}
	if !first.Public.Equal(first.Private.Public()) {
		t.Error("Public is not the public half of Private")
	}
	wantMode(t, home, 0o700)
	wantMode(t, filepath.Join(home, "keys"), 0o700)
	wantMode(t, filepath.Join(home, "device-id"), 0o600)
	wantMode(t, keyPath, 0o600)
	wantMode(t, filepath.Join(home, "keys", first.DeviceID+".pub"), 0o644)
	noTempFiles(t, home)
	noTempFiles(t, filepath.Join(home, "keys"))

	second := mustLoad(t, home, "")
	if second.Created {
		t.Error("second Load: Created = true, want false")
	}
	if second.DeviceID != first.DeviceID {
		t.Errorf("second Load: device id %q, want %q", second.DeviceID, first.DeviceID)
	}
	if !second.Private.Equal(first.Private) {
		t.Error("second Load returned a different key")
	}
}

// An existing device-id file (say, written by hand) is used as is; its key
// is generated on first use.
func TestLoadExistingDeviceIDFile(t *testing.T) {
	for _, content := range []string{"my-laptop\n", "my-laptop", "  my-laptop \n\n"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) {
			home := newHome(t)
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "device-id"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			got := mustLoad(t, home, "")
			if got.DeviceID != "my-laptop" {
				t.Errorf("device id %q, want my-laptop", got.DeviceID)
			}
			if !got.Created {
				t.Error("Created = false, but the key was generated")
			}
			if after := string(readFile(t, filepath.Join(home, "device-id"))); after != content {
				t.Errorf("device-id file rewritten to %q", after)
			}
		})
	}
}

func TestLoadPublicKeyFile(t *testing.T) {
	home := newHome(t)
	id := mustLoad(t, home, "")
	pubPath := filepath.Join(home, "keys", id.DeviceID+".pub")
	want := checkpoint.EncodePublicKey(id.Private.Public().(ed25519.PublicKey))

	pub, err := checkpoint.ParsePublicKey(readFile(t, pubPath))
	if err != nil {
		t.Fatalf(".pub file: %v", err)
	}
	if !pub.Equal(id.Public) {
		t.Fatal(".pub file does not hold the public key of the private key")
	}

	other, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	tampered := map[string]func() error{
		"other key": func() error { return os.WriteFile(pubPath, checkpoint.EncodePublicKey(other), 0o644) },
		"garbage":   func() error { return os.WriteFile(pubPath, []byte("not a key\n"), 0o644) },
		"trailing":  func() error { return os.WriteFile(pubPath, append(append([]byte{}, want...), 'x'), 0o644) },
		"missing":   func() error { return os.Remove(pubPath) },
		"symlink": func() error {
			target := filepath.Join(t.TempDir(), "elsewhere.pub")
			if err := os.WriteFile(target, checkpoint.EncodePublicKey(other), 0o644); err != nil {
				return err
			}
			if err := os.Remove(pubPath); err != nil {
				return err
			}
			return os.Symlink(target, pubPath)
		},
	}
	for name, tamper := range tampered {
		t.Run(name, func(t *testing.T) {
			if err := tamper(); err != nil {
				t.Skip(err)
			}
			got := mustLoad(t, home, "")
			if !got.Public.Equal(id.Public) {
				t.Error("Load trusted the .pub file")
			}
			if after := readFile(t, pubPath); !bytes.Equal(after, want) {
				t.Errorf(".pub file not rewritten: %q", after)
			}
			fi, err := os.Lstat(pubPath)
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf(".pub is not a regular file after Load: %v %v", fi, err)
			}
			wantMode(t, pubPath, 0o644)
			noTempFiles(t, filepath.Join(home, "keys"))
		})
	}
}

func TestLoadOverride(t *testing.T) {
	home := newHome(t)
	def := mustLoad(t, home, "")
	ci := mustLoad(t, home, "ci-runner-1")
	if ci.DeviceID != "ci-runner-1" {
		t.Errorf("device id %q, want ci-runner-1", ci.DeviceID)
	}
	if !ci.Created {
		t.Error("Created = false for a new override key")
	}
	if want := filepath.Join(home, "keys", "ci-runner-1.key"); ci.KeyPath != want {
		t.Errorf("KeyPath %q, want %q", ci.KeyPath, want)
	}
	if ci.Private.Equal(def.Private) {
		t.Error("override device shares the default device's key")
	}
	wantMode(t, ci.KeyPath, 0o600)
	if _, err := os.Stat(filepath.Join(home, "keys", "ci-runner-1.pub")); err != nil {
		t.Error(err)
	}
	if got := strings.TrimSpace(string(readFile(t, filepath.Join(home, "device-id")))); got != def.DeviceID {
		t.Errorf("override changed the device-id file to %q", got)
	}

	again := mustLoad(t, home, "ci-runner-1")
	if again.Created || !again.Private.Equal(ci.Private) {
		t.Errorf("second override Load: Created=%v, same key=%v", again.Created, again.Private.Equal(ci.Private))
	}
}

// An override never reads or creates the device-id file.
func TestLoadOverrideWithoutDeviceIDFile(t *testing.T) {
	home := newHome(t)
	mustLoad(t, home, "ci-runner-1")
	if _, err := os.Stat(filepath.Join(home, "device-id")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("device-id file was created by an override Load: %v", err)
	}
	// A corrupt device-id file does not matter when the id is overridden.
	if err := os.WriteFile(filepath.Join(home, "device-id"), []byte("../../etc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, home, "ci-runner-1")
}

func TestLoadInvalidOverride(t *testing.T) {
	for _, override := range []string{"../x", "A", "a/b", "x.lock", strings.Repeat("a", 65), "-x", ".x", "a..b", `a\b`, "a b"} {
		t.Run(override, func(t *testing.T) {
			home := newHome(t)
			id, err := Load(home, override)
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("Load(%q) = %v, %v; want ErrInvalidID", override, id, err)
			}
			if _, err := os.Stat(home); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load with an invalid override touched home: %v", err)
			}
		})
	}
	// "" is no override at all (the device-id file is used), but is not a
	// valid id.
	if err := ValidDeviceID(""); !errors.Is(err, ErrInvalidID) {
		t.Errorf(`ValidDeviceID("") = %v, want ErrInvalidID`, err)
	}
}

func TestValidDeviceID(t *testing.T) {
	valid := []string{"a", "0", "mac-1a2b3c4d", "ci-runner-1", "a.b_c-d", strings.Repeat("a", 64), "x.locks", "key", "a.json.bak"}
	for _, id := range valid {
		if err := ValidDeviceID(id); err != nil {
			t.Errorf("ValidDeviceID(%q) = %v, want nil", id, err)
		}
	}
	invalid := []struct{ id, reason string }{
		{"", "empty"},
		{strings.Repeat("a", 65), "limit is 64"},
		{"A", "only a-z"},
		{"a/b", "only a-z"},
		{`a\b`, "only a-z"},
		{"a b", "only a-z"},
		{"é", "only a-z"},
		{"a\x00", "only a-z"},
		{"-a", "must start"},
		{".a", "must start"},
		{"_a", "must start"},
		{"a..b", `".."`},
		{"x.lock", `".lock"`},
		{"x.pub", `".pub"`},
		{"x.key", `".key"`},
		{"x.json", `".json"`},
		{"x.jsonl", `".jsonl"`},
	}
	for _, tc := range invalid {
		wantInvalidID(t, "ValidDeviceID", ValidDeviceID(tc.id), tc.id, tc.reason)
	}
}

// wantInvalidID: err, what the validator fname said of id, is a one-line
// ErrInvalidID naming reason.
func wantInvalidID(t *testing.T, fname string, err error, id, reason string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidID) {
		t.Errorf("%s(%q) = %v, want ErrInvalidID", fname, id, err)
		return
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("%s(%q) = %q, want it to mention %q", fname, id, err, reason)
	}
	if strings.ContainsAny(err.Error(), "\n\t") {
		t.Errorf("%s(%q): error %q holds a control character", fname, id, err)
	}
}

func TestLoadInsecure(t *testing.T) {
	skipModeBits(t)
	tests := []struct {
		name    string
		path    string      // "key", "home" or "keys" (the home's keys/)
		mode    os.FileMode // chmod'ed after a first successful Load
		wantMsg []string
	}{
		{"key 0644", "key", 0o644, []string{"chmod 600", "readable by others", "mode 0644"}},
		{"key 0640", "key", 0o640, []string{"chmod 600"}},
		{"key 0602", "key", 0o602, []string{"chmod 600", "writable"}},
		{"home 0755", "home", 0o755, []string{"chmod 700"}},
		{"home 0710", "home", 0o710, []string{"chmod 700"}},
		{"keys 0750", "keys", 0o750, []string{"chmod 700"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome(t)
			id := mustLoad(t, home, "")
			p := map[string]string{"key": id.KeyPath, "home": home, "keys": filepath.Join(home, "keys")}[tc.path]
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Load(home, "")
			if !errors.Is(err, ErrInsecure) {
				t.Fatalf("Load = %v, %v; want ErrInsecure", got, err)
			}
			msg := err.Error()
			for _, w := range append(tc.wantMsg, p) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			after, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode() != before.Mode() {
				t.Errorf("Load changed the mode of %s from %v to %v", p, before.Mode(), after.Mode())
			}
		})
	}
}

// A fresh home under a loose umask is still created 0700, and an existing
// loose home is refused before anything is written into it.
func TestLoadInsecureFreshHome(t *testing.T) {
	skipModeBits(t)
	home := newHome(t)
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home, ""); !errors.Is(err, ErrInsecure) {
		t.Fatalf("Load = %v, want ErrInsecure", err)
	}
	ents, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("Load wrote into an insecure home: %v", ents)
	}
}

func TestLoadSymlinkedKey(t *testing.T) {
	home := newHome(t)
	id := mustLoad(t, home, "")
	real := filepath.Join(t.TempDir(), "real.key")
	if err := os.Rename(id.KeyPath, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, id.KeyPath); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	got, err := Load(home, "")
	if !errors.Is(err, ErrInsecure) {
		t.Fatalf("Load = %v, %v; want ErrInsecure for a symlinked key", got, err)
	}
	if !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), id.KeyPath) {
		t.Errorf("error %q should name the path and say it is a symbolic link", err)
	}
	if fi, err := os.Lstat(id.KeyPath); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Load replaced the symlink: %v %v", fi, err)
	}
}

func TestLoadKeyNotRegular(t *testing.T) {
	home := newHome(t)
	id := mustLoad(t, home, "")
	if err := os.Remove(id.KeyPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(id.KeyPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home, ""); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Load = %v; want ErrCorrupt saying the key is not a regular file", err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	other, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	shortSeed := pem.EncodeToMemory(&pem.Block{Type: checkpoint.PrivateKeyPEMType, Bytes: []byte("0123456789abcdef")})
	tests := []struct {
		name    string
		file    string // "key" or "device-id"
		content []byte
		wantMsg string
	}{
		{"key garbage", "key", []byte("hello\n"), "no PEM block"},
		{"key empty", "key", nil, "no PEM block"},
		{"key public key", "key", checkpoint.EncodePublicKey(other), "PEM type"},
		{"key short seed", "key", shortSeed, "key bytes"},
		{"key too large", "key", bytes.Repeat([]byte("A"), checkpoint.MaxKeyFileSize+1), "larger than 4096 bytes"},
		{"device-id empty", "device-id", nil, "empty"},
		{"device-id blank", "device-id", []byte(" \n\t\n"), "empty"},
		{"device-id traversal", "device-id", []byte("../../etc/passwd\n"), "invalid device id"},
		{"device-id upper", "device-id", []byte("Laptop\n"), "invalid device id"},
		{"device-id two lines", "device-id", []byte("a\nb\n"), "invalid device id"},
		{"device-id reserved", "device-id", []byte("x.key\n"), "invalid device id"},
		{"device-id too large", "device-id", append(bytes.Repeat([]byte(" "), 300), "abc\n"...), "larger than 256 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome(t)
			id := mustLoad(t, home, "")
			path := id.KeyPath
			if tc.file == "device-id" {
				path = filepath.Join(home, "device-id")
			}
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Load(home, "")
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load = %v, %v; want ErrCorrupt", got, err)
			}
			msg := err.Error()
			for _, w := range []string{path, tc.wantMsg, "restore it from a backup", "move it"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("multi-line error %q", msg)
			}
			if tc.file == "key" && errors.Is(err, checkpoint.ErrBadKey) != (tc.name != "key too large") {
				t.Errorf("errors.Is(err, checkpoint.ErrBadKey) wrong for %q", msg)
			}
			if after := readFile(t, path); !bytes.Equal(after, tc.content) {
				t.Errorf("Load changed the corrupt file: %q -> %q", tc.content, after)
			}
			// Nothing else is created in its place.
			ents, err := os.ReadDir(filepath.Join(home, "keys"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 2 {
				t.Errorf("keys/ has %d entries after a failed Load, want 2", len(ents))
			}
		})
	}
}

// Error messages must never carry key material.
func TestErrorsDoNotLeakKey(t *testing.T) {
	home := newHome(t)
	id := mustLoad(t, home, "")
	good := readFile(t, id.KeyPath)
	// A valid key followed by junk: the parser refuses it.
	if err := os.WriteFile(id.KeyPath, append(append([]byte{}, good...), "junk"...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(home, "")
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load = %v, want ErrCorrupt", err)
	}
	block, _ := pem.Decode(good)
	body := strings.TrimSpace(strings.Split(string(good), "\n")[1])
	for _, secret := range []string{body, string(block.Bytes), fmt.Sprintf("%x", block.Bytes)} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error %q contains key material", err)
		}
	}
}

func TestLoadConcurrentGoroutines(t *testing.T) {
	for _, override := range []string{"", "ci-runner-1"} {
		t.Run(fmt.Sprintf("override=%q", override), func(t *testing.T) {
			home := newHome(t)
			const n = 16
			ids := make([]*Identity, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					ids[i], errs[i] = Load(home, override)
				}()
			}
			close(start)
			wg.Wait()
			created := 0
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("goroutine %d: %v", i, errs[i])
				}
				if ids[i].DeviceID != ids[0].DeviceID {
					t.Errorf("goroutine %d: device id %q, goroutine 0: %q", i, ids[i].DeviceID, ids[0].DeviceID)
				}
				if !ids[i].Private.Equal(ids[0].Private) {
					t.Errorf("goroutine %d: different key", i)
				}
				if ids[i].Created {
					created++
				}
			}
			// One call wins the device id and one the key (maybe the same one).
			if created < 1 || created > 2 {
				t.Errorf("%d calls report Created, want 1 or 2", created)
			}
			checkSingleIdentity(t, home, ids[0])
		})
	}
}

// checkSingleIdentity checks that home holds exactly the files of id.
func checkSingleIdentity(t *testing.T, home string, id *Identity) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(home, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{id.DeviceID + ".key", id.DeviceID + ".pub"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("keys/ holds %v, want %v", names, want)
	}
	priv, err := checkpoint.ParsePrivateKey(readFile(t, id.KeyPath))
	if err != nil || !priv.Equal(id.Private) {
		t.Errorf("key file does not hold the agreed key (%v)", err)
	}
	noTempFiles(t, home)
}

const (
	helperEnv     = "GIT_CTX_IDENTITY_TEST_HELPER"
	helperHomeEnv = "GIT_CTX_IDENTITY_TEST_HOME"
	helperGoEnv   = "GIT_CTX_IDENTITY_TEST_GO"
)

// TestHelperProcess is not a test: TestLoadConcurrentProcesses runs the test
// binary again with it selected. It waits for the start signal, calls Load
// and prints "<device id> <fingerprint> <created>".
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestLoadConcurrentProcesses")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(os.Getenv(helperGoEnv)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "no start signal")
			os.Exit(2)
		}
		time.Sleep(time.Millisecond)
	}
	id, err := Load(os.Getenv(helperHomeEnv), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s %v\n", id.DeviceID, checkpoint.Fingerprint(id.Public), id.Created)
	os.Exit(0)
}

func TestLoadConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	if os.Getenv(helperEnv) == "1" {
		t.Skip("inside a helper process")
	}
	home := newHome(t)
	goFile := filepath.Join(t.TempDir(), "go")
	const n = 8
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	errOuts := make([]*bytes.Buffer, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", helperHomeEnv+"="+home, helperGoEnv+"="+goFile)
		outs[i], errOuts[i] = new(bytes.Buffer), new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], errOuts[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	// Release all helpers at once so that they race on the empty home.
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, n)
	created := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\nstderr: %s", i, err, errOuts[i])
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && strings.HasPrefix(f[1], "SHA256:") {
				lines[i] = f[0] + " " + f[1]
				if f[2] == "true" {
					created++
				}
			}
		}
		if lines[i] == "" {
			t.Fatalf("helper %d printed no identity: %q", i, outs[i])
		}
	}
	for i := range n {
		if lines[i] != lines[0] {
			t.Errorf("helper %d: %q, helper 0: %q", i, lines[i], lines[0])
		}
	}
	if created < 1 || created > 2 {
		t.Errorf("%d helpers report Created, want 1 or 2", created)
	}
	id := mustLoad(t, home, "")
	if got := id.DeviceID + " " + checkpoint.Fingerprint(id.Public); got != lines[0] {
		t.Errorf("identity on disk %q, helpers agreed on %q", got, lines[0])
	}
	checkSingleIdentity(t, home, id)
}

func TestHome(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name                string
		gitCtxHome, xdg, hd string
		want                string
		wantErr             bool
	}{
		{name: "GIT_CTX_HOME wins", gitCtxHome: filepath.Join(dir, "g"), xdg: filepath.Join(dir, "x"), hd: filepath.Join(dir, "h"), want: filepath.Join(dir, "g")},
		{name: "GIT_CTX_HOME cleaned", gitCtxHome: dir + "/g/./", hd: filepath.Join(dir, "h"), want: filepath.Join(dir, "g")},
		{name: "relative GIT_CTX_HOME", gitCtxHome: "rel/dir", xdg: filepath.Join(dir, "x"), hd: filepath.Join(dir, "h"), wantErr: true},
		{name: "XDG_DATA_HOME", xdg: filepath.Join(dir, "x"), hd: filepath.Join(dir, "h"), want: filepath.Join(dir, "x", "git-ctx")},
		{name: "relative XDG_DATA_HOME ignored", xdg: "x", hd: filepath.Join(dir, "h"), want: filepath.Join(dir, "h", ".local", "share", "git-ctx")},
		{name: "HOME", hd: filepath.Join(dir, "h"), want: filepath.Join(dir, "h", ".local", "share", "git-ctx")},
		{name: "relative HOME", hd: "h", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
				t.Skip("HOME is not the home directory variable on " + runtime.GOOS)
			}
			t.Setenv("GIT_CTX_HOME", tc.gitCtxHome)
			t.Setenv("XDG_DATA_HOME", tc.xdg)
			t.Setenv("HOME", tc.hd)
			got, err := Home()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Home() = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Home() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestNewDeviceID(t *testing.T) {
	seen := make(map[string]bool)
	host, _ := os.Hostname()
	prefix := hostPart(host) + "-"
	for range 100 {
		id := NewDeviceID()
		if err := ValidDeviceID(id); err != nil {
			t.Fatalf("NewDeviceID() = %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewDeviceID() repeated %q", id)
		}
		seen[id] = true
		if !strings.HasPrefix(id, prefix) {
			t.Errorf("NewDeviceID() = %q, want prefix %q", id, prefix)
		}
		suffix := id[strings.LastIndexByte(id, '-')+1:]
		if len(suffix) != 8 || strings.Trim(suffix, "0123456789abcdef") != "" {
			t.Errorf("NewDeviceID() = %q: suffix %q is not 8 lowercase hex characters", id, suffix)
		}
	}
}

func TestHostPart(t *testing.T) {
	tests := []struct{ host, want string }{
		{"mac", "mac"},
		{"MacBook-Pro.local", "macbook-pro"},
		{"build_box.example.com", "build-box"},
		{"My Laptop (2)", "my-laptop-2"},
		{"--a--b--", "a-b"},
		{"Ünïcödé", "n-c-d"},
		{"", "device"},
		{".local", "device"},
		{"___", "device"},
		{strings.Repeat("x", 40), strings.Repeat("x", 32)},
		{strings.Repeat("a", 31) + "_b", strings.Repeat("a", 31)},
	}
	for _, tc := range tests {
		if got := hostPart(tc.host); got != tc.want {
			t.Errorf("hostPart(%q) = %q, want %q", tc.host, got, tc.want)
		}
		if err := ValidDeviceID(hostPart(tc.host) + "-0123abcd"); err != nil {
			t.Errorf("hostPart(%q) gives an invalid id: %v", tc.host, err)
		}
	}
}

func TestValidBranchDeviceID(t *testing.T) {
	valid := []string{"a", "laptop-3f2a9c1d", "Alice-MacBook-Pro.local", "DESKTOP-1A2B3C4", "build_agent.example.org",
		strings.Repeat("A", MaxBranchDeviceIDLen), "console", "com10", "lpt", "x.locks"}
	for _, id := range valid {
		if err := ValidBranchDeviceID(id); err != nil {
			t.Errorf("ValidBranchDeviceID(%q) = %v, want nil", id, err)
		}
		if ValidDeviceID(strings.ToLower(id)) == nil && ValidBranchDeviceID(strings.ToLower(id)) != nil {
			t.Errorf("a locally valid id %q is refused on read", strings.ToLower(id))
		}
	}
	invalid := []struct{ id, reason string }{
		{"", "empty"},
		{strings.Repeat("a", MaxBranchDeviceIDLen+1), "limit is 128"},
		{"a b", "0x20"},
		{"a\tb", "0x09"},
		{"a\nb", "0x0a"},
		{"a\x7f", "0x7f"},
		{"l\u0430ptop", "0xd0"}, // Cyrillic a
		{"laptop\u200b", "0xe2"},
		{"a/b", "0x2f"},
		{`a\b`, "0x5c"},
		{"a:b", "0x3a"},
		{"git~1", "0x7e"},
		{".git", "must start"},
		{"-rf", "must start"},
		{"a..b", `".."`},
		{"X.PUB", `".pub"`},
		{"x.Lock", `".lock"`},
		{"CON", "Windows"},
		{"nul.local", "Windows"},
		{"Com1", "Windows"},
		{"lpt9.x", "Windows"},
	}
	for _, tc := range invalid {
		wantInvalidID(t, "ValidBranchDeviceID", ValidBranchDeviceID(tc.id), tc.id, tc.reason)
	}
	for a, b := range map[string]string{"Laptop-1": "laptop-1", "LAPTOP-1.": "laptop-1", "a.b..": "A.B"} {
		if DeviceIDFoldKey(a) != DeviceIDFoldKey(b) {
			t.Errorf("DeviceIDFoldKey(%q) != DeviceIDFoldKey(%q)", a, b)
		}
	}
	if DeviceIDFoldKey("laptop-1") == DeviceIDFoldKey("laptop-2") {
		t.Error("DeviceIDFoldKey folds different ids together")
	}
}
