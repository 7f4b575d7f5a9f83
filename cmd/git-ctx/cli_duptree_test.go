package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// Hostile trees with duplicate entry names, made with git plumbing
// (`hash-object -t tree --literally`, which checks nothing) and pushed with
// plain git to a bare remote that does not fsck what it receives. The
// whole-branch walks read each tree entry's own object by id in one pass;
// these tests check that no arrangement of a directory's entries (a record
// name twice with the honest copy first or last, a directory "checkpoints"
// twice, a blob beside a tree of the same name, entries out of git's order)
// gets a record that does not verify onto a teammate's branch or into its
// cache, that the teammate still merges the honest records, and that
// `git ctx verify` on a branch holding such a tree fails with a reason.

// treeEntry is one entry of a raw git tree object.
type treeEntry struct {
	mode, name string
	id         string // hex
}

// readRawTree parses the tree object id of the repository at dir.
func readRawTree(t *testing.T, dir string, env []string, id string) []treeEntry {
	t.Helper()
	raw := testrepo.MustGit(t, dir, env, "cat-file", "tree", id)
	var out []treeEntry
	for rest := []byte(raw); len(rest) > 0; {
		sp := bytes.IndexByte(rest, ' ')
		nul := bytes.IndexByte(rest, 0)
		if sp < 0 || nul < sp || len(rest) < nul+21 {
			t.Fatalf("tree %s: malformed", id)
		}
		out = append(out, treeEntry{mode: string(rest[:sp]), name: string(rest[sp+1 : nul]), id: hex.EncodeToString(rest[nul+1 : nul+21])})
		rest = rest[nul+21:]
	}
	return out
}

// writeRawTree stores entries as a tree object in exactly the given order,
// duplicates included, and returns its id.
func writeRawTree(t *testing.T, dir string, env []string, entries []treeEntry) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		raw, err := hex.DecodeString(e.id)
		if err != nil || len(raw) != 20 {
			t.Fatalf("entry %q: bad id %q", e.name, e.id)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(raw)
	}
	r := testrepo.Git(t, dir, env, b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	if r.Code != 0 {
		t.Fatalf("hash-object tree: %s", r)
	}
	return strings.TrimSpace(r.Stdout)
}

// editTreeAt rewrites the directory at path (slash-separated, "" for the
// root) below the tree root with edit and returns the new root's id.
func editTreeAt(t *testing.T, dir string, env []string, root, path string, edit func([]treeEntry) []treeEntry) string {
	t.Helper()
	entries := readRawTree(t, dir, env, root)
	if path == "" {
		return writeRawTree(t, dir, env, edit(entries))
	}
	first, rest, _ := strings.Cut(path, "/")
	for i, e := range entries {
		if e.name == first && e.mode == "40000" {
			entries[i].id = editTreeAt(t, dir, env, e.id, rest, edit)
			return writeRawTree(t, dir, env, entries)
		}
	}
	t.Fatalf("no directory %q in tree %s", first, root)
	return ""
}

// blob stores content and returns its id.
func blob(t *testing.T, dir string, env []string, content string) string {
	t.Helper()
	r := testrepo.Git(t, dir, env, []byte(content), "hash-object", "-w", "--stdin")
	if r.Code != 0 {
		t.Fatalf("hash-object: %s", r)
	}
	return strings.TrimSpace(r.Stdout)
}

func splitDir(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	return p[:i], p[i+1:]
}

// dupTreeCases are the hostile arrangements: each gets the repository, the
// branch tip's tree, the path of A's first record, its forged bytes, and
// returns the hostile tree.
var dupTreeCases = []struct {
	name string
	make func(t *testing.T, dir string, env []string, root, path, forged string) string
}{
	{"record name twice, honest first", func(t *testing.T, dir string, env []string, root, path, forged string) string {
		d, n := splitDir(path)
		fb := blob(t, dir, env, forged)
		return editTreeAt(t, dir, env, root, d, func(es []treeEntry) []treeEntry {
			return append(es, treeEntry{"100644", n, fb})
		})
	}},
	{"record name twice, forged first", func(t *testing.T, dir string, env []string, root, path, forged string) string {
		d, n := splitDir(path)
		fb := blob(t, dir, env, forged)
		return editTreeAt(t, dir, env, root, d, func(es []treeEntry) []treeEntry {
			return append([]treeEntry{{"100644", n, fb}}, es...)
		})
	}},
	{"checkpoints directory twice", func(t *testing.T, dir string, env []string, root, path, forged string) string {
		i := strings.Index(path, "/checkpoints/")
		repoDir, below := path[:i], path[i+len("/checkpoints/"):]
		// The second "checkpoints" is the first with the record replaced.
		var honest string
		for _, e := range readRawTree(t, dir, env, testrepo.GitOut(t, dir, env, "rev-parse", root+":"+repoDir)) {
			if e.name == "checkpoints" {
				honest = e.id
			}
		}
		d, n := splitDir(below)
		fb := blob(t, dir, env, forged)
		evil := editTreeAt(t, dir, env, honest, d, func(es []treeEntry) []treeEntry {
			for i := range es {
				if es[i].name == n {
					es[i].id = fb
				}
			}
			return es
		})
		return editTreeAt(t, dir, env, root, repoDir, func(es []treeEntry) []treeEntry {
			out := []treeEntry{}
			for _, e := range es {
				out = append(out, e)
				if e.name == "checkpoints" {
					out = append(out, treeEntry{"40000", "checkpoints", evil})
				}
			}
			return out
		})
	}},
	{"blob beside a tree of the same name", func(t *testing.T, dir string, env []string, root, path, forged string) string {
		i := strings.Index(path, "/checkpoints/")
		fb := blob(t, dir, env, forged)
		return editTreeAt(t, dir, env, root, path[:i], func(es []treeEntry) []treeEntry {
			return append([]treeEntry{{"100644", "checkpoints", fb}}, es...)
		})
	}},
	{"entries out of order", func(t *testing.T, dir string, env []string, root, path, forged string) string {
		i := strings.Index(path, "/checkpoints/")
		return editTreeAt(t, dir, env, root, path[:i], func(es []treeEntry) []treeEntry {
			for l, r := 0, len(es)-1; l < r; l, r = l+1, r-1 {
				es[l], es[r] = es[r], es[l]
			}
			return es
		})
	}},
}

// TestPullDuplicateTreeEntries: B pulls a branch whose tree holds one of
// the hostile arrangements; B ends with A's honest records (made before and
// after the hostile commit), never the forged one, and B's branch verifies.
func TestPullDuplicateTreeEntries(t *testing.T) {
	for _, c := range dupTreeCases {
		t.Run(c.name, func(t *testing.T) {
			s, remote, a := newTeam(t)
			first := a.Checkpoint(t, "A's first decision")
			a.Must(t, "push")
			b := inproc.CloneDevice(t, s, "B", remote)
			b.Must(t, "init")
			second := a.Checkpoint(t, "A's second decision")
			st := inproc.Status(t, a.Dir, a.Env)
			path := testrepo.CtxV1CheckpointPath(st.RepoID, first.Hash)
			stored := testrepo.BranchFile(t, a.Dir, a.Env, path)
			forged := strings.Replace(stored, "A's first decision", "A's forged decision", 1)
			tip := a.Tip(t)
			root := a.Git(t, "rev-parse", tip+"^{tree}")
			evil := c.make(t, a.Dir, a.Env, root, path, forged)
			commit := testrepo.GitOut(t, a.Dir, a.Env, "commit-tree", evil, "-p", tip, "-m", "ctx: checkpoint")
			a.Git(t, "push", "-q", "origin", commit+":refs/heads/ghyll/memory")

			r := b.Ctx(t, "pull")
			if r.Code != 0 && r.Code != 1 {
				t.Fatalf("pull of a hostile tree: want exit 0 or 1, got %s", r)
			}
			if r.Code == 1 && strings.TrimSpace(r.Stderr) == "" {
				t.Fatalf("pull failed without a reason: %s", r)
			}
			t.Logf("pull: %s", r)
			b.WantVerifies(t)
			got := b.Hashes(t)
			// A's second record travels only in the hostile commit: a blob
			// beside the checkpoints directory hides it from the layout, and
			// then the pull must say so (exit 1), not drop it silently.
			if !got[first.Hash] || (!got[second.Hash] && r.Code != 1) {
				t.Fatalf("B lacks A's honest records after the hostile pull: %v\n%s", got, r)
			}
			if out := b.Must(t, "log"); strings.Contains(out, "forged") {
				t.Fatalf("B's log shows the forged record:\n%s", out)
			}
			if r := b.Ctx(t, "search", "forged"); strings.Contains(r.Stdout, "forged decision") && !strings.Contains(r.Stdout, "QUARANTINED") {
				t.Fatalf("B's search shows the forged record as verified:\n%s", r)
			}
			// Honest records after the hostile commit still merge: a
			// fresh clone C gets B's merge and B's record made after.
			third := b.Checkpoint(t, "B's decision after")
			b.Must(t, "push")
			c := inproc.CloneDevice(t, s, "C", remote)
			rc := c.Ctx(t, "init")
			if rc.Code != 0 && rc.Code != 1 {
				t.Fatalf("C's init: %s", rc)
			}
			c.WantVerifies(t)
			if got := c.Hashes(t); !got[third.Hash] || !got[first.Hash] {
				t.Fatalf("C lacks honest records: %v\n%s", got, rc)
			}
			if out := c.Must(t, "log"); strings.Contains(out, "forged") {
				t.Fatalf("C's log shows the forged record:\n%s", out)
			}
		})
	}
}

// TestVerifyDuplicateTreeEntries: a local branch whose tree holds a
// hostile arrangement fails `git ctx verify` with a reason (exit 1), or,
// where the arrangement hides nothing, passes; it never panics or hangs.
func TestVerifyDuplicateTreeEntries(t *testing.T) {
	for _, c := range dupTreeCases {
		t.Run(c.name, func(t *testing.T) {
			_, repo, env := newInitRepo(t)
			first := inproc.Checkpoint(t, repo, env, "-m", "A's first decision")
			inproc.Checkpoint(t, repo, env, "-m", "A's second decision")
			st := inproc.Status(t, repo, env)
			path := testrepo.CtxV1CheckpointPath(st.RepoID, first.Hash)
			stored := testrepo.BranchFile(t, repo, env, path)
			forged := strings.Replace(stored, "A's first decision", "A's forged decision", 1)
			tip := testrepo.Tip(t, repo, env)
			root := testrepo.GitOut(t, repo, env, "rev-parse", tip+"^{tree}")
			evil := c.make(t, repo, env, root, path, forged)
			commit := testrepo.GitOut(t, repo, env, "commit-tree", evil, "-p", tip, "-m", "ctx: checkpoint")
			testrepo.MustGit(t, repo, env, "update-ref", testrepo.MemRef, commit, tip)
			r := inproc.Ctx(t, repo, env, "verify")
			t.Logf("verify: %s", r)
			testrepo.WantCode(t, "verify of a branch with a hand-made tree", r, 1)
			if !strings.Contains(r.Stdout, "malformed tree: ") && !strings.Contains(r.Stderr, "memory branch is damaged: ") {
				t.Fatalf("verify does not name the malformed tree:\n%s", r)
			}
			// log reads what git's path lookup finds; a forged record may
			// show, but never as verified.
			for _, l := range strings.Split(inproc.MustCtx(t, repo, env, "log"), "\n") {
				if strings.Contains(l, "forged") && !strings.Contains(l, "UNVERIFIED") && !strings.Contains(l, "QUARANTINED") {
					t.Fatalf("log shows the forged record as verified: %q", l)
				}
			}
		})
	}
}
