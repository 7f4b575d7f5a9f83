package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// catFiles reads many blobs of the memory branch with one
// `git cat-file --batch`, returning path → exact bytes.
func catFiles(t *testing.T, dir string, env []string, paths []string) map[string]string {
	t.Helper()
	var in bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&in, "%s:%s\n", memRef, p)
	}
	r := execute(t, dir, env, in.Bytes(), "git", "cat-file", "--batch")
	if r.code != 0 {
		t.Fatalf("cat-file --batch: %s", r)
	}
	out := map[string]string{}
	br := bufio.NewReader(strings.NewReader(r.stdout))
	for _, p := range paths {
		hdr, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("cat-file header for %s: %v", p, err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 || f[1] != "blob" {
			t.Fatalf("cat-file header for %s: %q", p, hdr)
		}
		n, _ := strconv.Atoi(f[2])
		buf := make([]byte, n+1)
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		out[p] = string(buf[:n])
	}
	return out
}

// checkCtxV1PastASegment appends checkpoints to a ctx-v1 repository whose
// branch already holds written (hash → record, one device) until it holds
// n > 256 (two full 128-line segments), then checks the layout round-trips:
// the tree holds exactly the prescribed paths, the chain rolled over into
// segment 00000002.jsonl, every
// file is the record git-ctx printed, and verify passes. It is run on the
// repository TestConcurrentCheckpoints filled, to keep the package fast.
//
// The in-process test of the ghyll-v1 layout (TestLayoutGhyllV1) is in
// cmd/git-ctx/cli_layout_test.go; wantPaths, wantChain and
// wantCommitSubjects are internal/testrepo's, shared with it.
func checkCtxV1PastASegment(t *testing.T, repo string, env []string, written map[string]record, n int) {
	t.Helper()
	inpAppendTwoWriters(t, repo, env, written, n)
	st := status(t, repo, env)
	if st.Layout != "ctx-v1" || st.Checkpoints != n {
		t.Fatalf("status: %+v", st)
	}
	cps, cpPaths, files := inpCtxV1Tree(t, repo, env, st, written, n)
	inpLogHasFiles(t, repo, env, cps, cpPaths, files)
	// show --json is the file's bytes, on both sides of the segment boundary.
	for _, i := range []int{0, 127, 255, 256, n - 1} {
		if js := mustCtx(t, repo, env, "show", "--json", cps[i].Hash[:10]); js != files[cpPaths[i]]+"\n" {
			t.Fatalf("show --json of checkpoint %d differs from the file:\n%q\n%q", i, js, files[cpPaths[i]])
		}
	}
	out := mustCtx(t, repo, env, "verify")
	if !strings.Contains(out, fmt.Sprintf("verified %d checkpoints in 1 chains", n)) {
		t.Fatalf("verify: %q", out)
	}
	wantCommitSubjects(t, repo, env, cps[n-3:], st.Device)
	// A segment is never rewritten once full: the last commit touched
	// only segment 1 among the chain files.
	changed := gitOut(t, repo, env, "diff-tree", "-r", "--name-only", "--no-commit-id", memRef)
	if strings.Contains(changed, "00000000.jsonl") || strings.Contains(changed, "00000001.jsonl") || !strings.Contains(changed, "00000002.jsonl") {
		t.Fatalf("last commit changed:\n%s", changed)
	}
}

// inpAppendTwoWriters appends checkpoints until written holds n, with two
// writers at once, adding each record a writer printed to written.
func inpAppendTwoWriters(t *testing.T, repo string, env []string, written map[string]record, n int) {
	t.Helper()
	// Two writers at once (one through --stdin and git's dispatch, one
	// calling the binary with flags); the chain order is read back below.
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make(chan string, n)
		have = len(written)
	)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := have + w; i < n; i += 2 {
				var r result
				if w == 0 {
					r = execute(t, repo, env, []byte(fmt.Sprintf(`{"message":"ctx %d","session":"bulk","file":["f%d.go"]}`, i, i)),
						"git", "ctx", "checkpoint", "--stdin", "--json")
				} else {
					r = execute(t, repo, env, nil, "git-ctx", "checkpoint", "--json", "-m", fmt.Sprintf("ctx %d", i), "--session", "bulk")
				}
				if r.code != 0 {
					errs <- fmt.Sprintf("checkpoint %d: %s", i, r)
					continue
				}
				var rec record
				if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
					errs <- fmt.Sprintf("checkpoint %d: %v", i, err)
					continue
				}
				mu.Lock()
				written[rec.Hash] = rec
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if t.Failed() || len(written) != n {
		t.Fatalf("%d distinct checkpoints written, want %d", len(written), n)
	}
}

// inpCtxV1Tree checks the branch holds exactly the ctx-v1 paths (LAYOUT,
// REPO, the key, three chain segments of 128, 128 and n-256 lines, one
// file per checkpoint) and returns the checkpoints in chain order, their
// paths and the files' bytes by path.
func inpCtxV1Tree(t *testing.T, repo string, env []string, st statusInfo, written map[string]record, n int) ([]record, []string, map[string]string) {
	t.Helper()
	rid, dev := st.RepoID, st.Device
	seg0 := "repos/" + rid + "/chains/" + dev + "/00000000.jsonl"
	segMid := "repos/" + rid + "/chains/" + dev + "/00000001.jsonl"
	seg1 := "repos/" + rid + "/chains/" + dev + "/00000002.jsonl"
	want := []string{"LAYOUT", "devices/" + dev + ".pub", seg0, segMid, seg1}
	// REPO fixes the repository id (FORMAT §3.3): written by init when an id
	// can be derived, else by the first checkpoint; it must name this id.
	if repoFile := branchFile(t, repo, env, "REPO"); strings.SplitN(repoFile, "\n", 2)[0] != rid {
		t.Fatalf("REPO on the branch: %q, want its first line %s", repoFile, rid)
	}
	want = append(want, "REPO")
	// The checkpoints in chain order.
	segs := catFiles(t, repo, env, []string{seg0, segMid, seg1})
	var cps []record
	var cpPaths []string
	for _, e := range parseChain(t, segs[seg0]+segs[segMid]+segs[seg1]) {
		cp, ok := written[e.Hash]
		if !ok {
			t.Fatalf("chain names %s, which no checkpoint command printed", e.Hash)
		}
		cps = append(cps, cp)
		cpPaths = append(cpPaths, ctxV1CheckpointPath(rid, cp.Hash))
	}
	want = append(want, cpPaths...)
	wantPaths(t, branchPaths(t, repo, env), want)

	files := catFiles(t, repo, env, append([]string{"LAYOUT", seg0, segMid, seg1}, cpPaths...))
	if files["LAYOUT"] != "ctx-v1 fanout=2\n" { // a new branch: two fan-out levels (FORMAT §2.2)
		t.Fatalf("LAYOUT holds %q", files["LAYOUT"])
	}
	if l0, lm, l1 := strings.Count(files[seg0], "\n"), strings.Count(files[segMid], "\n"), strings.Count(files[seg1], "\n"); l0 != 128 || lm != 128 || l1 != n-256 {
		t.Fatalf("segments hold %d, %d and %d lines, want 128, 128 and %d", l0, lm, l1, n-256)
	}
	wantChain(t, files[seg0]+files[segMid]+files[seg1], cps)
	return cps, cpPaths, files
}

// inpLogHasFiles: every file on the branch is the record log --json
// prints (with members of its own added), and each session's turns count
// 1, 2, … along the chain.
func inpLogHasFiles(t *testing.T, repo string, env []string, cps []record, cpPaths []string, files map[string]string) {
	t.Helper()
	// Every file on the branch is the record git-ctx printed when it wrote
	// it, and the record log --json prints.
	logged := map[string]json.RawMessage{}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(mustCtx(t, repo, env, "log", "--json")), &raw); err != nil {
		t.Fatal(err)
	}
	for _, m := range raw {
		var r record
		if err := json.Unmarshal(m, &r); err != nil {
			t.Fatal(err)
		}
		logged[r.Hash] = m
	}
	turns := map[string]int{}
	for i, cp := range cps {
		file := files[cpPaths[i]]
		// log --json may add members of its own (e.g. "verified"); every
		// member of the file must be there with the same value.
		var fm, lm map[string]json.RawMessage
		if err := json.Unmarshal([]byte(file), &fm); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(logged[cp.Hash], &lm); err != nil {
			t.Fatal(err)
		}
		for k, v := range fm {
			if lv, ok := lm[k]; !ok || compact(t, string(lv)) != compact(t, string(v)) {
				t.Fatalf("checkpoint %d: member %q is %s in the file, %s in log --json", i, k, v, lv)
			}
		}
		// Each session's turns count 1, 2, … along the chain.
		turns[cp.Session]++
		if cp.Turn != turns[cp.Session] {
			t.Fatalf("chain entry %d: session %q turn %d, want %d", i+1, cp.Session, cp.Turn, turns[cp.Session])
		}
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact %q: %v", s, err)
	}
	return b.String()
}

// wantPaths fails unless got (sorted) is exactly want.
func wantPaths(t *testing.T, got, want []string) { t.Helper(); testrepo.WantPaths(t, got, want) }

// wantChain checks the chain text names cps in order, linked from the
// genesis, in the canonical line form.
func wantChain(t *testing.T, chain string, cps []record) {
	t.Helper()
	testrepo.WantChain(t, chain, cps)
}

// wantCommitSubjects checks the newest len(cps) commits of the branch are
// "ctx: checkpoint <hash12> by <device> (turn N): <summary>".
func wantCommitSubjects(t *testing.T, repo string, env []string, cps []record, device string) {
	t.Helper()
	testrepo.WantCommitSubjects(t, repo, env, cps, device)
}
