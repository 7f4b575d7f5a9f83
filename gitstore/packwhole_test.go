package gitstore

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestReadPackedWholeSameAsProbe: in a long operation, readBlob's one-read
// path for blobs stored whole in a pack answers exactly what the size probe
// and the read it replaces answer (same bytes, same refusal with the same
// size, same error), for small and large blobs, deltas, incompressible
// blobs past the read window, non-blobs and missing ids, at several limits;
// and it really answers the small whole blobs.
func TestReadPackedWholeSameAsProbe(t *testing.T) {
	isolate(t)
	s, dir := newStore(t)
	write := func(data []byte) plumbing.Hash {
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return plumbing.NewHash(strings.TrimSpace(string(out)))
	}
	var ids []plumbing.Hash
	base := bytes.Repeat([]byte("a checkpoint-sized line of text\n"), 30)
	for i := 0; i < 20; i++ { // similar blobs: git stores most as deltas
		ids = append(ids, write(append(append([]byte{}, base...), fmt.Sprintf("record %d\n", i)...)))
	}
	noise := make([]byte, 3*windowSize)
	rand.Read(noise)
	// Past the first read, within the window: the one-read path reads on.
	other := make([]byte, firstRead+firstRead/2)
	rand.Read(other)
	mid := write(other)
	ids = append(ids, mid, write(noise), write(nil), write([]byte("x")),
		write(bytes.Repeat([]byte("big\n"), (MaxBlob+4096)/4)))
	tree := plumbing.NewHash(strings.TrimSpace(git(t, dir, "mktree", "--missing")))
	ids = append(ids, tree, plumbing.NewHash(strings.Repeat("ab", 20)))
	var list strings.Builder
	for _, id := range ids[:len(ids)-1] { // all but the missing id
		list.WriteString(id.String() + "\n")
	}
	cmd := exec.Command("git", "pack-objects", "-q", ".git/objects/pack/pack")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(list.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v\n%s", err, out)
	}
	git(t, dir, "prune-packed")

	read := func(noWhole bool) []string {
		st, err := Open(s.Repo)
		if err != nil {
			t.Fatal(err)
		}
		st.direct.reads = directReadLimit
		st.direct.noWhole = noWhole
		var out []string
		for _, limit := range []int64{0, 100, 1000, 4096, MaxBlob} {
			for _, id := range ids {
				b, err := st.readBlob(id, limit)
				var tl *TooLargeError
				if errors.As(err, &tl) {
					out = append(out, fmt.Sprintf("%s@%d: too large %d>%d base=%v", id, limit, tl.Size, tl.Limit, tl.Base))
				} else {
					out = append(out, fmt.Sprintf("%s@%d: %x %v", id, limit, b, err))
				}
			}
		}
		return out
	}
	got, want := read(false), read(true)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("one read:\n %.300s\nprobe and read:\n %.300s", got[i], want[i])
		}
	}
	st, err := Open(s.Repo)
	if err != nil {
		t.Fatal(err)
	}
	st.direct.reads = directReadLimit
	handled := 0
	for _, id := range ids {
		if _, _, ok := st.direct.readPackedWhole(id, MaxBlob); ok {
			handled++
		}
	}
	if data, _, ok := st.direct.readPackedWhole(mid, MaxBlob); !ok || len(data) != firstRead+firstRead/2 {
		t.Errorf("the one-read path did not answer a %d-byte incompressible blob (ok %v)", firstRead+firstRead/2, ok)
	}
	if handled < 4 {
		t.Fatalf("the one-read path answered %d of %d objects, want the whole small blobs", handled, len(ids))
	}
}
