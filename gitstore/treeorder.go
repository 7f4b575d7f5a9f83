package gitstore

import (
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeEntriesProblem reports the first way entries (one tree object, in
// its stored order) breaks the rules git keeps for every tree it writes:
// each name once (a blob and a tree of the same name included) and the
// entries in git's order (names compared bytewise, a tree's name as if it
// ended in "/"). A tree that breaks them was made by hand: git's own path
// lookups find only one entry of a name, or none out of order, while a
// walk by tree id reads every entry, so the branch would show different
// records to git and to git-ctx. It returns "" for a well-formed tree; it
// allocates only for a tree where a directory's name prefixes the entry
// before it (the one arrangement where a blob of the same name need not
// be adjacent).
func treeEntriesProblem(entries []object.TreeEntry) string {
	spread := false
	for i := 1; i < len(entries); i++ {
		prev, cur := &entries[i-1], &entries[i]
		if prev.Name == cur.Name {
			return "duplicate entry name " + quoteName(cur.Name)
		}
		if gitTreeOrder(prev, cur) >= 0 {
			return "entries out of git's order at " + quoteName(cur.Name)
		}
		if cur.Mode == filemode.Dir && len(prev.Name) > len(cur.Name) && prev.Name[:len(cur.Name)] == cur.Name {
			spread = true
		}
	}
	if !spread {
		return ""
	}
	seen := make(map[string]struct{}, len(entries))
	for i := range entries {
		if _, dup := seen[entries[i].Name]; dup {
			return "duplicate entry name " + quoteName(entries[i].Name)
		}
		seen[entries[i].Name] = struct{}{}
	}
	return ""
}

// gitTreeOrder compares two tree entries the way git sorts them.
func gitTreeOrder(a, b *object.TreeEntry) int {
	n := min(len(a.Name), len(b.Name))
	for i := 0; i < n; i++ {
		if a.Name[i] != b.Name[i] {
			return int(a.Name[i]) - int(b.Name[i])
		}
	}
	return int(nameEnd(a, n)) - int(nameEnd(b, n))
}

// nameEnd is the byte of e's name at i, or past its end "/" for a tree
// and 0 for anything else.
func nameEnd(e *object.TreeEntry, i int) byte {
	if i < len(e.Name) {
		return e.Name[i]
	}
	if e.Mode == filemode.Dir {
		return '/'
	}
	return 0
}

// quoteName quotes an entry name for a problem line (Go quoting, so no
// control byte reaches a terminal), cut to 80 bytes.
func quoteName(s string) string {
	const most = 80
	if len(s) > most {
		return strconv.Quote(s[:most]) + "…"
	}
	return strconv.Quote(s)
}

// treeDirPath names a directory in a verify problem ("." for the root).
func treeDirPath(prefix string) string {
	if prefix == "" {
		return "."
	}
	return prefix
}
