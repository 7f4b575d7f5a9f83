package cache_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/cache"
)

func TestCommitTrailer(t *testing.T) {
	c40 := strings.Repeat("ab", 20)
	c64 := strings.Repeat("cd", 32)
	for _, tc := range []struct{ summary, want string }{
		{"fix\n\nCommit: " + c40, c40},
		{"fix\n\nbody\n\nCommit: " + c64, c64},
		{"fix\n\nCommit: " + c40 + "\n\n[git-ctx redacted 1 secret(s): aws]", c40},
		{"Commit: " + c40, c40},
		{"fix\n\nCommit: " + c40 + "\n\nmore text", ""}, // not the last paragraph
		{"fix\n\nCommit: " + strings.ToUpper(c40), ""},  // upper case
		{"fix\n\nCommit: " + c40[:39], ""},              // too short
		{"fix\n\nCommit: " + c40 + " and more", ""},     // trailing text
		{"fix\nCommit: " + c40, ""},                     // not its own paragraph
		{"[git-ctx redacted 1 secret(s): aws]", ""},     // the note alone
		{"", ""},
	} {
		if got := cache.CommitTrailer(tc.summary); got != tc.want {
			t.Errorf("CommitTrailer(%q) = %q, want %q", tc.summary, got, tc.want)
		}
	}
}

// linkRow is one record of the link tests: seq in its device's chain,
// branch, session, and the commit its summary names ("" for none).
func linkRow(device string, seq int, branch, session, commit string, verified bool) cache.Row {
	c := cp(fakeHash(device[:2]+strings.Repeat("0", 3), seq), device, int64(1000+seq))
	c.Branch, c.SessionID, c.Turn = branch, session, seq+1
	c.Summary = "turn " + device + " " + string(rune('a'+seq))
	if commit != "" {
		c.Summary = "subject\n\nCommit: " + commit
	}
	return cache.Row{CP: c, RepoID: "r1", Seq: seq, Verified: verified}
}

func linkHashes(t *testing.T, db *cache.DB, commit string) []string {
	t.Helper()
	links, err := db.Links(testCtx(t), []string{"r1"}, commit)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range links {
		mark := ""
		if !l.Verified {
			mark = "!"
		}
		out = append(out, l.Kind+":"+l.DeviceID+"/"+l.Hash[:6]+mark)
	}
	return out
}

func TestCommitLinks(t *testing.T) {
	c1, c2, c3 := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 64)
	d1, d2 := "d1aaaa", "d2bbbb"
	rows := []cache.Row{
		linkRow(d1, 0, "main", "s1", "", true),  // turn → c1
		linkRow(d1, 1, "main", "s1", "", true),  // turn → c1
		linkRow(d1, 2, "main", "", c1, true),    // names c1
		linkRow(d1, 3, "other", "s1", "", true), // another branch: not before c2
		linkRow(d1, 4, "main", "", c2, true),    // names c2, no turns since c1
		linkRow(d1, 5, "main", "s2", "", true),  // another session than c3's
		linkRow(d1, 6, "main", "s1", "", true),  // turn → c3
		linkRow(d1, 7, "main", "s1", c3, true),  // names c3 in session s1
		linkRow(d2, 0, "main", "t", "", false),  // a teammate's unverified turn → c1
		linkRow(d2, 1, "main", "t", c1, false),  // and commit record
	}
	want := map[string][]string{
		c1: {"turn:d1aaaa/d1000" + "0", "turn:d1aaaa/d1000" + "1", "commit:d1aaaa/d1000" + "2", "turn:d2bbbb/d2000" + "0!", "commit:d2bbbb/d2000" + "1!"},
		c2: {"commit:d1aaaa/d1000" + "4"},
		c3: {"turn:d1aaaa/d1000" + "6", "commit:d1aaaa/d1000" + "7"},
	}
	check := func(name string, db *cache.DB) {
		t.Helper()
		for c, w := range want {
			if got := linkHashes(t, db, c); !reflect.DeepEqual(got, w) {
				t.Errorf("%s: links of %s = %v, want %v", name, c[:4], got, w)
			}
		}
		if got := linkHashes(t, db, strings.Repeat("9", 40)); got != nil {
			t.Errorf("%s: links of an unknown commit = %v", name, got)
		}
	}
	root := isolate(t)
	full := build(t, filepath.Join(root, "full"), rows...)
	check("rebuild", full)

	// Incremental: the same rows in two refreshes give the same links.
	inc := build(t, filepath.Join(root, "inc"), rows[:2]...)
	err := inc.Update(testCtx(t), func(w *cache.Writer) error {
		for _, r := range rows[2:] {
			if err := w.AddCheckpoint(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("incremental", inc)
}
