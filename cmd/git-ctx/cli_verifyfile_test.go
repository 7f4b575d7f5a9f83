package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// fileResult is one object of `git ctx verify FILE… --json`.
type fileResult struct {
	File      string `json:"file"`
	Format    string `json:"format"`
	Valid     bool   `json:"valid"`
	ID        string `json:"id"`
	Error     string `json:"error"`
	Rule      string `json:"rule"`
	Device    string `json:"device"`
	KeySource string `json:"key_source"`
}

// verifyFiles runs verify with the given arguments (flags first) and
// decodes the JSON array it prints.
func cliVerifyFiles(t *testing.T, dir string, env []string, argv ...string) ([]fileResult, testrepo.Result) {
	t.Helper()
	r := execute(t, dir, env, nil, append([]string{"git-ctx", "verify", "--json"}, argv...)...)
	var res []fileResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("verify %q --json: %v\n%s", argv, err, r)
	}
	return res, r
}

// TestVerifyFileOffline: `git ctx verify FILE` checks a checkpoint file
// with the key from the branch, from --key, or none; wrong keys, tampered,
// oversized and junk files fail with the documented exit codes.
func TestVerifyFileOffline(t *testing.T) {
	s, repo, env := newInitRepo(t)
	cp := inproc.Checkpoint(t, repo, env, "-m", "offline record", "--file", "a.go")
	st := inproc.Status(t, repo, env)
	f := &verifyFileFixture{
		repo: repo, env: env, cp: cp, st: st,
		work:    s.Dir(t, "files"),
		outside: s.Dir(t, "outside"), // not in any repository
	}
	f.good = filepath.Join(f.work, "cp.json")
	testrepo.WriteFile(t, f.good, testrepo.BranchFile(t, repo, env, testrepo.CtxV1CheckpointPath(st.RepoID, cp.Hash)))
	f.localPub = filepath.Join(s.CtxHome("dev"), "keys", st.Device+".pub")
	verifyFileKeys(t, f)
	verifyFileBroken(t, f)
}

// verifyFileFixture is one repository with one checkpoint, copied to the
// file good, and a directory outside any repository.
type verifyFileFixture struct {
	repo                          string
	env                           []string
	cp                            testrepo.Record
	st                            testrepo.StatusInfo
	work, outside, good, localPub string
}

// verifyFileKeys: where the key comes from (branch, --key, none, wrong).
func verifyFileKeys(t *testing.T, f *verifyFileFixture) {
	repo, env, cp, st, work, outside, good, localPub := f.repo, f.env, f.cp, f.st, f.work, f.outside, f.good, f.localPub
	// Inside the repository the key comes from the branch.
	res, r := cliVerifyFiles(t, repo, env, good)
	testrepo.WantCode(t, "verify FILE in the repo", r, 0)
	if len(res) != 1 || res[0].File != good || res[0].Format != "checkpoint" || !res[0].Valid ||
		res[0].ID != cp.Hash || res[0].Error != "" || res[0].Rule != "seed-v1" || res[0].Device != st.Device ||
		res[0].KeySource != "branch devices/"+st.Device+".pub" {
		t.Fatalf("verify FILE in the repo: %+v", res)
	}
	// The same through git's dispatch, in text form.
	out := inproc.MustCtx(t, repo, env, "verify", good)
	if !strings.Contains(out, "OK checkpoint "+cp.Hash) {
		t.Fatalf("verify FILE text: %q", out)
	}

	// Outside any repository, without --key: no key, not valid.
	res, r = cliVerifyFiles(t, outside, env, good)
	testrepo.WantCode(t, "verify FILE outside a repo without --key", r, 1)
	if len(res) != 1 || res[0].Valid || res[0].Format != "checkpoint" || !strings.Contains(res[0].Error, "--key") {
		t.Fatalf("verify FILE without a key: %+v", res)
	}

	// With --key the device's public key.
	res, r = cliVerifyFiles(t, outside, env, "--key", localPub, good)
	testrepo.WantCode(t, "verify FILE --key", r, 0)
	if len(res) != 1 || !res[0].Valid || res[0].ID != cp.Hash || res[0].Error != "" || res[0].KeySource != "--key "+localPub {
		t.Fatalf("verify FILE --key: %+v", res)
	}

	// Another valid key: bad signature.
	otherPub := filepath.Join(work, "other.pem")
	testrepo.WriteFile(t, otherPub, testrepo.NewPublicKeyPEM(t))
	res, r = cliVerifyFiles(t, outside, env, "--key", otherPub, good)
	testrepo.WantCode(t, "verify FILE with the wrong key", r, 1)
	if len(res) != 1 || res[0].Valid || !strings.Contains(res[0].Error, "bad_signature") {
		t.Fatalf("verify FILE with the wrong key: %+v", res)
	}

}

// verifyFileBroken: tampered, mixed, oversized, junk and missing files,
// and a --key that is not a key.
func verifyFileBroken(t *testing.T, f *verifyFileFixture) {
	repo, env, work, outside, good, localPub := f.repo, f.env, f.work, f.outside, f.good, f.localPub
	// A tampered copy.
	tampered := filepath.Join(work, "tampered.json")
	data := string(testrepo.ReadFile(t, good))
	edited := strings.Replace(data, `"summary": "offline record"`, `"summary": "online record"`, 1)
	if edited == data {
		t.Fatal("setup: summary not found")
	}
	testrepo.WriteFile(t, tampered, edited)
	res, r := cliVerifyFiles(t, outside, env, "--key", localPub, tampered)
	testrepo.WantCode(t, "verify tampered FILE", r, 1)
	if len(res) != 1 || res[0].Valid || res[0].Error == "" || !strings.Contains(res[0].Error, "hash_mismatch") {
		t.Fatalf("verify tampered FILE: %+v", res)
	}

	// Valid and invalid together: exit 1, one object each, in order.
	res, r = cliVerifyFiles(t, repo, env, good, tampered)
	testrepo.WantCode(t, "verify good+tampered", r, 1)
	if len(res) != 2 || !res[0].Valid || res[1].Valid || res[0].File != good || res[1].File != tampered {
		t.Fatalf("verify good+tampered: %+v", res)
	}

	// Over 1 MiB: refused for safety.
	big := filepath.Join(work, "big.json")
	if err := os.WriteFile(big, []byte(`{"v":1,"summary":"`+strings.Repeat("x", 1<<20)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, r = cliVerifyFiles(t, outside, env, "--key", localPub, big)
	testrepo.WantCode(t, "verify a file over 1 MiB", r, 7)
	if len(res) != 1 || res[0].Valid {
		t.Fatalf("verify big: %+v", res)
	}

	// Not a record at all, and a missing file.
	junk := filepath.Join(work, "junk.json")
	testrepo.WriteFile(t, junk, `{"hello":"world"}`)
	res, r = cliVerifyFiles(t, outside, env, "--key", localPub, junk, filepath.Join(work, "missing.json"))
	testrepo.WantCode(t, "verify junk", r, 1)
	if len(res) != 2 || res[0].Valid || res[1].Valid || res[0].Error == "" || res[1].Error == "" {
		t.Fatalf("verify junk: %+v", res)
	}
	// --key that is not a key is a usage error.
	r = execute(t, outside, env, nil, "git-ctx", "verify", "--key", junk, good)
	testrepo.WantCode(t, "verify --key junk", r, 2)
}

// TestVerifyVectorFiles verifies the shared vectors' files offline.
func TestVerifyVectorFiles(t *testing.T) {
	s := newSandbox(t)
	env := s.Env("dev")
	outside := s.Dir(t, "outside")
	root, err := filepath.Abs(filepath.Join("..", "..")) // the module root
	if err != nil {
		t.Fatal(err)
	}
	var vectors []map[string]any
	if err := json.Unmarshal(testrepo.ReadFile(t, filepath.Join(root, "testdata", "vectors", "checkpoint.json")), &vectors); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, v := range vectors {
		name, _ := v["name"].(string)
		file, hasFile := v["file"].(string)
		if !hasFile || !(strings.HasPrefix(name, "S1") || strings.HasPrefix(name, "S2")) {
			continue
		}
		seen++
		pemKey, _ := v["public_key_pem"].(string)
		hash, _ := v["hash"].(string)
		fp := filepath.Join(outside, name+".json")
		kp := filepath.Join(outside, name+".pem")
		testrepo.WriteFile(t, fp, file)
		testrepo.WriteFile(t, kp, pemKey)
		res, r := cliVerifyFiles(t, outside, env, "--key", kp, fp)
		testrepo.WantCode(t, "verify vector "+name, r, 0)
		if len(res) != 1 || !res[0].Valid || res[0].Rule != "seed-v1" || res[0].ID != hash || res[0].Format != "checkpoint" {
			t.Fatalf("vector %s: %+v", name, res)
		}
		// One changed byte in the file breaks it.
		bad := strings.Replace(file, `"v": 1`, `"v": 2`, 1)
		if bad == file {
			t.Fatalf("vector %s: no version member", name)
		}
		testrepo.WriteFile(t, fp, bad)
		if _, r := cliVerifyFiles(t, outside, env, "--key", kp, fp); r.Code != 1 {
			t.Fatalf("modified vector %s: %s", name, r)
		}
	}
	if seen != 2 {
		t.Fatalf("found %d S1/S2 vectors with a file, want 2", seen)
	}
}

// TestFlagsAfterArguments: the CLI contract writes flags after the
// positional arguments (`git ctx show <hash-prefix> [--json]`,
// `git ctx verify FILE... [--key PUB.pem] [--json]`); they must work there.
func TestFlagsAfterArguments(t *testing.T) {
	s, repo, env := newInitRepo(t)
	cp := inproc.Checkpoint(t, repo, env, "-m", "flags last")
	want := inproc.MustCtx(t, repo, env, "show", "--json", cp.Hash[:12])

	r := inproc.Ctx(t, repo, env, "show", cp.Hash[:12], "--json")
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("git ctx show HASH --json: want the --json output, got %s", r)
	}

	st := inproc.Status(t, repo, env)
	file := filepath.Join(s.Dir(t, "files"), "cp.json")
	testrepo.WriteFile(t, file, testrepo.BranchFile(t, repo, env, testrepo.CtxV1CheckpointPath(st.RepoID, cp.Hash)))
	pub := filepath.Join(s.CtxHome("dev"), "keys", st.Device+".pub")
	r = inproc.Ctx(t, s.Dir(t, "outside"), env, "verify", file, "--key", pub, "--json")
	var res []fileResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); r.Code != 0 || err != nil || len(res) != 1 || !res[0].Valid {
		t.Errorf("git ctx verify FILE --key PUB --json: want one valid result, got %s", r)
	}
}
