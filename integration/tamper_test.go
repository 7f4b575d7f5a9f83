package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tamperFixture is a repository with four checkpoints by one device.
type tamperFixture struct {
	repo, device, repoID, layout string
	env                          []string
	cps                          []record
	chainPath                    string
}

func newTamperFixture(t *testing.T, layout string) *tamperFixture {
	t.Helper()
	s := newSandbox(t)
	f := &tamperFixture{repo: newRepo(t, s, "repo"), env: s.env("dev"), layout: layout}
	mustCtx(t, f.repo, f.env, "init", "--layout", layout)
	for i := 1; i <= 4; i++ {
		f.cps = append(f.cps, checkpoint(t, f.repo, f.env, "-m", "cp "+strconv.Itoa(i), "--file", "f"+strconv.Itoa(i)+".go"))
	}
	st := status(t, f.repo, f.env)
	f.device, f.repoID = st.Device, st.RepoID
	if layout == "ghyll-v1" {
		f.chainPath = "repos/" + f.repoID + "/chains/" + f.device + ".jsonl"
	} else {
		f.chainPath = "repos/" + f.repoID + "/chains/" + f.device + "/00000000.jsonl"
	}
	if rep := verifyJSON(t, f.repo, f.env); !rep.OK {
		t.Fatalf("untampered fixture does not verify:\n%s", rep.Raw)
	}
	return f
}

// clone returns a copy of the fixture in a fresh directory, so that each
// subtest tampers with its own repository.
func (f *tamperFixture) clone(t *testing.T) *tamperFixture {
	t.Helper()
	c := *f
	c.repo = filepath.Join(t.TempDir(), "repo")
	if err := os.CopyFS(c.repo, os.DirFS(f.repo)); err != nil {
		t.Fatal(err)
	}
	return &c
}

func (f *tamperFixture) cpPath(hash string) string {
	if f.layout == "ghyll-v1" {
		return ghyllV1CheckpointPath(f.repoID, hash)
	}
	return ctxV1CheckpointPath(f.repoID, hash)
}

func (f *tamperFixture) chainLines(t *testing.T) []string {
	t.Helper()
	data := branchFile(t, f.repo, f.env, f.chainPath)
	lines := strings.SplitAfter(data, "\n")
	if len(lines) != len(f.cps)+1 || lines[len(lines)-1] != "" {
		t.Fatalf("setup: chain %q", data)
	}
	return lines[:len(lines)-1]
}

// wantFailure runs verify (text and --json): exit 1, the text output
// contains every string in want, the JSON says ok=false and mentions them
// too, and stderr says verification failed.
func (f *tamperFixture) wantFailure(t *testing.T, want ...string) {
	t.Helper()
	r := gitCtx(t, f.repo, f.env, "verify")
	wantCode(t, "verify of a tampered branch", r, 1)
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("verify output lacks %q:\n%s", w, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "verification failed") {
		t.Errorf("verify stderr: %q", r.stderr)
	}
	wantOneLine(t, "verify stderr", r.stderr)
	rep := verifyJSON(t, f.repo, f.env)
	if rep.OK {
		t.Fatalf("verify --json says ok on a tampered branch:\n%s", rep.Raw)
	}
	for _, w := range want {
		if !strings.Contains(rep.Raw, w) && !strings.Contains(w, " ") {
			t.Errorf("verify --json lacks %q:\n%s", w, rep.Raw)
		}
	}
}

// failLine is how verify names the first bad record of a device.
func failLine(device, hash string, entry int, reason string) string {
	return "FAIL device " + device + ": checkpoint " + hash[:12] + " (entry " + strconv.Itoa(entry) + "): " + reason
}

func TestTamperingIsDetected(t *testing.T) {
	t.Parallel()
	ctxV1 := newTamperFixture(t, "ctx-v1")
	fixtures := map[string]*tamperFixture{"ctx-v1": ctxV1, "ghyll-v1": newTamperFixture(t, "ghyll-v1")}

	t.Run("untampered", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		// A plumbing commit that rewrites a file with its own bytes changes
		// nothing: the harness's rewriting is not itself detected.
		p := f.cpPath(f.cps[1].Hash)
		rewriteBranch(t, f.repo, f.env, "same bytes", fileEdit{path: p, content: branchFile(t, f.repo, f.env, p)})
		out := mustCtx(t, f.repo, f.env, "verify")
		if !strings.Contains(out, "verified 4 checkpoints in 1 chains") {
			t.Fatalf("verify: %q", out)
		}
	})

	for _, layout := range []string{"ctx-v1", "ghyll-v1"} {
		layout := layout
		t.Run("summary-edited/"+layout, func(t *testing.T) {
			t.Parallel()
			f := fixtures[layout].clone(t)
			cp := f.cps[1]
			p := f.cpPath(cp.Hash)
			data := branchFile(t, f.repo, f.env, p)
			edited := strings.Replace(data, `"summary": "cp 2"`, `"summary": "cp 2, but better"`, 1)
			if edited == data {
				t.Fatalf("setup: summary not found in %s", data)
			}
			rewriteBranch(t, f.repo, f.env, "edit summary", fileEdit{path: p, content: edited})
			f.wantFailure(t, failLine(f.device, cp.Hash, 2, "hash_mismatch"), "hash_mismatch", cp.Hash[:12], f.device)
		})
	}

	t.Run("chain-ts-edited", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		lines := f.chainLines(t)
		cp := f.cps[2]
		old := `"ts":` + strconv.FormatInt(cp.TS, 10) + `}`
		if !strings.Contains(lines[2], old) {
			t.Fatalf("setup: line 3 %q lacks %q", lines[2], old)
		}
		lines[2] = strings.Replace(lines[2], old, `"ts":`+strconv.FormatInt(cp.TS+1000, 10)+`}`, 1)
		rewriteBranch(t, f.repo, f.env, "edit ts", fileEdit{path: f.chainPath, content: strings.Join(lines, "")})
		f.wantFailure(t, failLine(f.device, cp.Hash, 3, "entry_mismatch"), "entry_mismatch", cp.Hash[:12])
	})

	t.Run("chain-lines-swapped", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		lines := f.chainLines(t)
		lines[1], lines[2] = lines[2], lines[1]
		rewriteBranch(t, f.repo, f.env, "swap", fileEdit{path: f.chainPath, content: strings.Join(lines, "")})
		// Entry 2 now holds checkpoint 3, whose parent is checkpoint 2.
		f.wantFailure(t, failLine(f.device, f.cps[2].Hash, 2, "broken_chain"), "broken_chain", f.cps[2].Hash[:12])
	})

	t.Run("key-replaced", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		rewriteBranch(t, f.repo, f.env, "new key", fileEdit{path: "devices/" + f.device + ".pub", content: newPublicKeyPEM(t)})
		f.wantFailure(t, failLine(f.device, f.cps[0].Hash, 1, "bad_signature"), "bad_signature", f.cps[0].Hash[:12])
	})

	t.Run("key-garbage", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		rewriteBranch(t, f.repo, f.env, "bad key", fileEdit{path: "devices/" + f.device + ".pub", content: "not a key\n"})
		f.wantFailure(t, "FAIL devices/"+f.device+".pub", f.device)
	})

	t.Run("file-removed", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		cp := f.cps[1]
		rewriteBranch(t, f.repo, f.env, "drop file", fileEdit{path: f.cpPath(cp.Hash), remove: true})
		f.wantFailure(t, failLine(f.device, cp.Hash, 2, "missing_checkpoint"), "missing_checkpoint", cp.Hash[:12])
	})

	t.Run("checkpoint-dropped-from-middle", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		lines := f.chainLines(t)
		lines = append(lines[:1], lines[2:]...)
		rewriteBranch(t, f.repo, f.env, "drop checkpoint 2",
			fileEdit{path: f.cpPath(f.cps[1].Hash), remove: true},
			fileEdit{path: f.chainPath, content: strings.Join(lines, "")})
		// Checkpoint 3 now follows checkpoint 1 but names 2 as its parent.
		f.wantFailure(t, failLine(f.device, f.cps[2].Hash, 2, "broken_chain"), "broken_chain", f.cps[2].Hash[:12])
	})

	t.Run("last-checkpoint-dropped", func(t *testing.T) {
		// Dropping the newest record is not detectable from the branch alone
		// (that is what pinning the tip on fetch is for); the chain must stay
		// consistent, so verify passes with 3.
		t.Parallel()
		f := ctxV1.clone(t)
		lines := f.chainLines(t)
		rewriteBranch(t, f.repo, f.env, "drop newest",
			fileEdit{path: f.cpPath(f.cps[3].Hash), remove: true},
			fileEdit{path: f.chainPath, content: strings.Join(lines[:3], "")})
		if out := mustCtx(t, f.repo, f.env, "verify"); !strings.Contains(out, "verified 3 checkpoints") {
			t.Fatalf("verify: %q", out)
		}
	})

	t.Run("unknown-file", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		rewriteBranch(t, f.repo, f.env, "extra files",
			fileEdit{path: "notes.txt", content: "hello\n"},
			fileEdit{path: "repos/" + f.repoID + "/checkpoints/ab/cd/ef/readme.txt", content: "hi\n"})
		f.wantFailure(t, "FAIL notes.txt: not part of the ctx-v1 layout",
			"FAIL repos/"+f.repoID+"/checkpoints/ab/cd/ef: not a checkpoint file name")
		// The chain itself still verifies.
		if out := gitCtx(t, f.repo, f.env, "verify").stdout; !strings.Contains(out, "OK   device "+f.device+": 4 checkpoints") {
			t.Fatalf("verify: %q", out)
		}
	})

	// renamed is a fresh clone of the ctx-v1 world, the hash of its second
	// record, another hash, and the edits that move the record's file to
	// that other hash's name.
	renamed := func(t *testing.T) (f *tamperFixture, hash, other string, rename []fileEdit) {
		t.Helper()
		f = ctxV1.clone(t)
		hash = f.cps[1].Hash
		other = otherHash(hash)
		data := branchFile(t, f.repo, f.env, f.cpPath(hash))
		return f, hash, other, []fileEdit{{path: f.cpPath(hash), remove: true}, {path: f.cpPath(other), content: data}}
	}

	t.Run("file-renamed", func(t *testing.T) {
		t.Parallel()
		f, hash, other, rename := renamed(t)
		rewriteBranch(t, f.repo, f.env, "rename", rename...)
		f.wantFailure(t, failLine(f.device, hash, 2, "missing_checkpoint"),
			"FAIL "+f.cpPath(other)+": checkpoint file not named by any chain")
	})

	t.Run("file-renamed-and-chain-rewritten", func(t *testing.T) {
		t.Parallel()
		f, hash, other, rename := renamed(t)
		chain := strings.Replace(branchFile(t, f.repo, f.env, f.chainPath), `"hash":"`+hash+`"`, `"hash":"`+other+`"`, 1)
		rewriteBranch(t, f.repo, f.env, "rename and relink", append(rename, fileEdit{path: f.chainPath, content: chain})...)
		f.wantFailure(t, failLine(f.device, other, 2, "hash_mismatch"), "hash_mismatch")
	})

	t.Run("record-moved-to-another-device", func(t *testing.T) {
		t.Parallel()
		f := ctxV1.clone(t)
		cp := f.cps[0]
		p := f.cpPath(cp.Hash)
		data := branchFile(t, f.repo, f.env, p)
		edited := strings.Replace(data, `"device": "`+f.device+`"`, `"device": "mallory"`, 1)
		rewriteBranch(t, f.repo, f.env, "reattribute", fileEdit{path: p, content: edited})
		f.wantFailure(t, "FAIL device "+f.device+": checkpoint "+cp.Hash[:12]+" (entry 1)", cp.Hash[:12])
	})
}

// otherHash is hash with its last hex digit changed (same fan-out directory).
func otherHash(hash string) string {
	last := hash[63]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return hash[:63] + string(repl)
}
