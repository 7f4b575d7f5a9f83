package gitstore

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestTreeEntriesProblem: git's tree rules, as git writes trees: names
// once (a blob and a tree of one name included, adjacent or not) and in
// git's order, where a tree sorts as its name with "/".
func TestTreeEntriesProblem(t *testing.T) {
	f := func(name string) object.TreeEntry { return object.TreeEntry{Name: name, Mode: filemode.Regular} }
	d := func(name string) object.TreeEntry { return object.TreeEntry{Name: name, Mode: filemode.Dir} }
	cases := []struct {
		entries []object.TreeEntry
		bad     bool
	}{
		{nil, false},
		{[]object.TreeEntry{f("a")}, false},
		{[]object.TreeEntry{f("a"), f("b")}, false},
		{[]object.TreeEntry{f("a-b"), d("a"), f("a0")}, false}, // "a-b" < "a/" < "a0"
		{[]object.TreeEntry{f("a"), f("a-b"), d("a")}, true},   // blob and tree "a", not adjacent
		{[]object.TreeEntry{f("a"), d("a")}, true},
		{[]object.TreeEntry{f("b"), f("a")}, true},
		{[]object.TreeEntry{d("a"), f("a-b")}, true}, // "a/" > "a-b"
		{[]object.TreeEntry{f("x.json"), f("x.json")}, true},
		{[]object.TreeEntry{d("checkpoints"), d("checkpoints")}, true},
	}
	for _, c := range cases {
		if got := treeEntriesProblem(c.entries); (got != "") != c.bad {
			t.Errorf("treeEntriesProblem(%v) = %q, want a problem %v", c.entries, got, c.bad)
		}
	}
}
