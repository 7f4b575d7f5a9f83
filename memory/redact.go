package memory

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-ctx/git-ctx/redact"
)

// redactInput removes secret-shaped text from every string of in and
// returns the note saying how many secrets of which kinds were removed ("" if
// none).
func redactInput(in RecordInput) (RecordInput, string) {
	total := 0
	kinds := map[string]bool{}
	note := func(r redact.Result) {
		total += r.Count
		for _, k := range r.Kinds {
			kinds[k] = true
		}
	}
	one := func(s string) string {
		r := redact.String(s)
		note(r)
		return r.Text
	}
	list := func(l []string) []string {
		out, r := redact.Strings(l)
		note(r)
		return out
	}
	in.Summary = one(in.Summary)
	in.Session, in.Model = one(in.Session), one(in.Model)
	in.Files, in.Tools, in.Injections = list(in.Files), list(in.Tools), list(in.Injections)
	if total == 0 {
		return in, ""
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return in, fmt.Sprintf("[git-ctx redacted %d secret(s): %s]", total, strings.Join(names, ", "))
}

// redactText removes secret-shaped text from a string taken from stored
// records into something git-ctx builds (a snapshot's session, a package's
// session layer): records written with --no-redact or by an older version
// may hold secrets that must not travel further.
func redactText(s string) string { return redact.String(s).Text }

// redactList is redactText for every string of l (nil stays nil).
func redactList(l []string) []string {
	if l == nil {
		return nil
	}
	out, _ := redact.Strings(l)
	return out
}
