package gitstore

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// rawTree writes a tree of entries exactly as given: any name, order,
// duplicates (what a hostile branch can hold).
func rawTree(t *testing.T, s *Store, entries []object.TreeEntry) plumbing.Hash {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%o %s\x00%s", uint32(e.Mode), e.Name, e.Hash[:])
	}
	h, err := s.writeLoose(plumbing.TreeObject, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// replaceAt returns tree root with the entry at path (which must exist)
// replaced by e (rawTree, the other entries as they were).
func replaceAt(t *testing.T, s *Store, root plumbing.Hash, path []string, e object.TreeEntry) plumbing.Hash {
	t.Helper()
	tr, err := s.readTree(root)
	if err != nil {
		t.Fatal(err)
	}
	es := append([]object.TreeEntry{}, tr.Entries...)
	for i := range es {
		if es[i].Name != path[0] {
			continue
		}
		if len(path) == 1 {
			es[i] = e
		} else {
			es[i].Hash = replaceAt(t, s, es[i].Hash, path[1:], e)
		}
		return rawTree(t, s, es)
	}
	t.Fatalf("no %s in %s", path[0], root)
	return plumbing.ZeroHash
}

// packLoose packs the loose objects of the repository at dir as they are
// (no walk of their content) and removes them.
func packLoose(t *testing.T, dir string) {
	t.Helper()
	var ids []string
	for _, l := range strings.Split(git(t, dir, "rev-parse", "--git-path", "objects"), "\n") {
		if l == "" {
			continue
		}
		objs := l
		if !filepath.IsAbs(objs) {
			objs = filepath.Join(dir, objs)
		}
		files, _ := filepath.Glob(filepath.Join(objs, "??", "*"))
		for _, f := range files {
			ids = append(ids, filepath.Base(filepath.Dir(f))+filepath.Base(f))
		}
	}
	if len(ids) == 0 {
		t.Fatal("no loose objects")
	}
	cmd := exec.Command("git", "pack-objects", "-q", ".git/objects/pack/pack")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v\n%s", err, out)
	}
	git(t, dir, "prune-packed")
}

func mustTree(t *testing.T, s *Store, h plumbing.Hash) []object.TreeEntry {
	t.Helper()
	tr, err := s.readTree(h)
	if err != nil {
		t.Fatal(err)
	}
	return append([]object.TreeEntry{}, tr.Entries...)
}

// hostileCheckpointDirs returns checkpoints directories made from cp (a
// two-level fan-out directory of real records), by name: unsafe names,
// records at wrong paths, missing and extra records, trees that are blobs,
// deep and huge directories, malformed trees.
func hostileCheckpointDirs(t *testing.T, s *Store, cp plumbing.Hash) map[string]object.TreeEntry {
	t.Helper()
	top := mustTree(t, s, cp)
	if len(top) < 3*walkAhead {
		t.Fatalf("only %d fan-out directories", len(top))
	}
	blob, err := s.writeBlob([]byte("not a tree\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := func(es []object.TreeEntry) object.TreeEntry {
		return object.TreeEntry{Mode: filemode.Dir, Hash: rawTree(t, s, es)}
	}
	named := func(e object.TreeEntry, name string) object.TreeEntry { e.Name = name; return e }
	file := func(name string) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob}
	}
	// sub returns top's i-th directory's entries (the second level).
	sub := func(i int) []object.TreeEntry { return mustTree(t, s, top[i].Hash) }
	leaf := func(i int) []object.TreeEntry { return mustTree(t, s, sub(i)[0].Hash) }
	edit := func(f func(es []object.TreeEntry) []object.TreeEntry) object.TreeEntry {
		return dir(f(append([]object.TreeEntry{}, top...)))
	}
	withSub := func(es []object.TreeEntry, i int, f func([]object.TreeEntry) []object.TreeEntry) {
		d := dir(f(sub(i)))
		es[i].Hash = d.Hash
	}
	out := map[string]object.TreeEntry{}
	out["unsafe names"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		for k, i := range []int{1, 7, len(es) / 2, len(es) - 2} {
			withSub(es, i, func(ss []object.TreeEntry) []object.TreeEntry {
				bad := []string{".git", "..", ".gitmodules", "a/b", "GIT~1"}[k%5]
				return append(ss, file(bad), named(dir(leaf(i)), ".GIT"))
			})
		}
		return append(es, file(".git"))
	})
	out["wrong paths"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		// a record moved into another fan-out directory, one a level up,
		// one a level down, non-hex and odd directories.
		moved := leaf(3)
		withSub(es, 4, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, moved[0]) })
		withSub(es, 9, func(ss []object.TreeEntry) []object.TreeEntry {
			return append(ss, named(dir([]object.TreeEntry{named(dir(leaf(9)), "ff")}), "zz"))
		})
		es[2] = named(dir(leaf(2)), es[2].Name) // records one level up
		es[len(es)-3].Hash = dir(append(sub(len(es)-3), named(dir(sub(5)), "fff"))).Hash
		return append(es, named(dir(nil), "gg"), file("README"), moved[0])
	})
	out["missing and extra records"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		for _, i := range []int{0, 11, len(es) - 1} {
			withSub(es, i, func(ss []object.TreeEntry) []object.TreeEntry {
				l := leaf(i)
				extra := named(l[0], strings.Repeat("e", 64)+".json")
				ss[0].Hash = dir(append(l[1:], extra)).Hash
				return ss
			})
		}
		return es
	})
	for _, at := range []int{0, walkAhead + 3, len(top) - 1} {
		out[fmt.Sprintf("a tree that is a blob at %d", at)] = edit(func(es []object.TreeEntry) []object.TreeEntry {
			withSub(es, 1, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, file("..")) })
			es[at].Hash = blob // a directory entry naming a blob
			withSub(es, len(es)-2, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, file(".git")) })
			return es
		})
	}
	out["two trees that are blobs"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		other, err := s.writeBlob([]byte("not a tree either\n"))
		if err != nil {
			t.Fatal(err)
		}
		withSub(es, 4, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, file(".git")) })
		es[5].Hash, es[len(es)-5].Hash = blob, other
		return es
	})
	out["deep"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		for _, i := range []int{2, len(es) / 3, len(es) - 1} {
			deep := dir([]object.TreeEntry{file(".git"), file("x")})
			for d := 0; d < 60; d++ {
				deep = dir([]object.TreeEntry{named(deep, fmt.Sprintf("%02x", d%256)), file("..")})
			}
			withSub(es, i, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, named(deep, "zz")) })
		}
		return es
	})
	out["huge"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		for k := 0; k < 3000; k++ {
			switch k % 3 {
			case 0:
				es = append(es, file(fmt.Sprintf("n%04d", k)))
			case 1:
				es = append(es, named(dir([]object.TreeEntry{file(".git"), file("y")}), fmt.Sprintf("d%04d", k)))
			default:
				es = append(es, named(dir(leaf(k%len(top))), fmt.Sprintf("%02x", k%256)))
			}
		}
		return es
	})
	out["malformed"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		es[3], es[4] = es[4], es[3]                                                                 // out of order
		withSub(es, 8, func(ss []object.TreeEntry) []object.TreeEntry { return append(ss, ss[0]) }) // twice
		// the same record twice, at its path and (another blob) at a wrong one
		l := leaf(10)
		withSub(es, 12, func(ss []object.TreeEntry) []object.TreeEntry {
			return append(ss, named(dir([]object.TreeEntry{{Name: l[0].Name, Mode: filemode.Regular, Hash: blob}}), "00"))
		})
		return append(es, es[len(es)-1])
	})
	out["modes"] = edit(func(es []object.TreeEntry) []object.TreeEntry {
		es[1].Mode = filemode.Submodule
		es[2].Mode = filemode.Symlink
		withSub(es, 3, func(ss []object.TreeEntry) []object.TreeEntry {
			ss[0].Mode = filemode.Regular
			return ss
		})
		return es
	})
	out["checkpoints is a blob"] = object.TreeEntry{Mode: filemode.Regular, Hash: blob}
	out["checkpoints is a tree that is a blob"] = object.TreeEntry{Mode: filemode.Dir, Hash: blob}
	out["empty"] = dir(nil)
	return out
}

// TestParallelWalkSameReport: on hostile checkpoints directories, a
// whole-branch verify whose walk runs on workers (gatherCheckpointsDir)
// gives the report of the serial walk — problems, bad paths, chains and
// their failures, in the same order — or the same error, with loose
// objects and packed ones (read by the workers' own treeReaders).
func TestParallelWalkSameReport(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s, dir, d := initStore(t, "dev-a", InitOptions{Fanout: FanoutTwo})
	ctx := context.Background()
	if _, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: drafts(120, "x")}); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "repack", "-adq") // the records' trees in the walk's order
	s = reopen(t, dir)
	base, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	cpPath := []string{"repos", repoID, "checkpoints"}
	e, err := base.entry("repos/" + repoID + "/checkpoints")
	if err != nil {
		t.Fatal(err)
	}
	variants := hostileCheckpointDirs(t, s, e.Hash)
	commits := map[string]plumbing.Hash{}
	for name, ce := range variants {
		ce.Name = "checkpoints"
		root := replaceAt(t, s, base.Root, cpPath, ce)
		v := commitView(t, s, root, name, base.Commit)
		commits[name] = v.Commit
		git(t, dir, "update-ref", "refs/test/"+strings.ReplaceAll(name, " ", "-"), v.Commit.String())
	}
	var lastReads int64
	compare := func(t *testing.T, s *Store, packed bool) {
		for name, c := range commits {
			t.Run(name, func(t *testing.T) {
				report := func(serial bool) (*Report, string) {
					serialCheckpointsWalk = serial
					defer func() { serialCheckpointsWalk = false }()
					st := reopen(t, dir)
					if packed {
						st.direct.reads = directReadLimit // the workers read the pack
					}
					v, err := st.ViewAt(c)
					if err != nil {
						t.Fatal(err)
					}
					rep, err := v.Verify()
					lastReads = st.treeWindowReads.Load()
					if err != nil {
						return nil, err.Error()
					}
					return rep, ""
				}
				want, wantErr := report(true)
				got, gotErr := report(false)
				if packed && name == "unsafe names" && lastReads == 0 {
					t.Fatal("the workers' treeReaders read no window")
				}
				if wantErr != gotErr {
					t.Fatalf("error %q, serial walk %q", gotErr, wantErr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("report differs from the serial walk's:\n got %+v\nwant %+v", got, want)
				}
				if want != nil && want.OK && name != "empty" {
					t.Fatalf("hostile tree verified: %+v", want)
				}
				if want != nil {
					t.Logf("%d problems, error %q", len(want.Problems), wantErr)
				} else {
					t.Logf("error %q", wantErr)
				}
			})
		}
	}
	t.Run("loose", func(t *testing.T) { compare(t, s, false) })
	packLoose(t, dir) // git repack refuses a tree that is a blob
	t.Run("packed", func(t *testing.T) { compare(t, s, true) })
}
