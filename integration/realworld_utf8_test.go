package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/git-ctx/git-ctx/internal/testrepo"
)

// unhSummaries maps each summary `log --json` lists to its entry's
// verified flag.
func unhSummaries(t *testing.T, d *syncDevice) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, e := range unhEntries(t, d) {
		var s string
		var v bool
		json.Unmarshal(e["summary"], &s)
		json.Unmarshal(e["verified"], &v)
		out[s] = v
	}
	return out
}

// unhWantSummary fails unless d lists a verified record whose summary
// contains want.
func unhWantSummary(t *testing.T, d *syncDevice, want string) {
	t.Helper()
	testrepo.WantVerifiedSummary(t, d.name, unhSummaries(t, d), want)
}

// TestUTF8RecordsVerify: text that is not valid UTF-8 (a Latin-1 byte in
// -m, invalid bytes in --stdin, commits made under i18n.commitEncoding
// ISO-8859-1 and windows-1252 recorded by the post-commit hook) gives
// records that verify locally and, after push and pull, on a teammate;
// commit messages are decoded by their declared encoding.
func TestUTF8RecordsVerify(t *testing.T) {
	t.Parallel()
	s, rem, a := cltTeam(t, "file", "A")

	r := a.ctx(t, "checkpoint", "--json", "-m", "caf\xe9 au lait")
	wantCode(t, "checkpoint -m with a Latin-1 byte", r, 0)
	if rec := decodeRecord(t, []byte(r.stdout)); rec.Summary != "caf\uFFFD au lait" {
		t.Fatalf("summary %q, want the Latin-1 byte replaced by U+FFFD", rec.Summary)
	}
	r = execute(t, a.dir, a.env, []byte("{\"message\": \"na\xefve stdin\", \"files\": [\"caf\xe9.txt\"]}"),
		"git", "ctx", "checkpoint", "--json", "--stdin")
	wantCode(t, "checkpoint --stdin with invalid UTF-8", r, 0)
	if rec := decodeRecord(t, []byte(r.stdout)); !utf8.ValidString(rec.Summary) || len(rec.Files) != 1 || !utf8.ValidString(rec.Files[0]) {
		t.Fatalf("--stdin record holds invalid UTF-8: %+v", rec)
	}

	// The post-commit hook, for commits whose messages are stored in a
	// legacy encoding (the commit object names it in its encoding header).
	a.must(t, "hooks", "install")
	for _, c := range []struct{ enc, msg, want string }{
		{"ISO-8859-1", "r\xe9sum\xe9 en latin-1\n\nCorps: d\xe9j\xe0 vu", "résumé en latin-1"},
		{"windows-1252", "\x93quoted\x94 \x80 in cp1252", "“quoted” € in cp1252"},
	} {
		writeFile(t, a.dir+"/f-"+c.enc+".txt", c.enc)
		a.git(t, "add", "--", "f-"+c.enc+".txt")
		r := execute(t, a.dir, a.env, nil, "git", "-c", "i18n.commitEncoding="+c.enc, "commit", "-q", "-m", c.msg)
		if r.code != 0 {
			t.Fatalf("commit under %s: %s", c.enc, r)
		}
		head := a.git(t, "rev-parse", "HEAD")
		if raw := a.git(t, "cat-file", "commit", head); !strings.Contains(raw, "\nencoding "+c.enc+"\n") {
			t.Fatalf("setup: the commit has no encoding header:\n%s", raw)
		}
		unhWantSummary(t, a, c.want)
	}
	if s := unhSummaries(t, a); len(s) != 4 {
		t.Fatalf("A holds %d records, want 4: %v", len(s), s)
	}
	for s := range unhSummaries(t, a) {
		if strings.Contains(s, "Corps") && !strings.Contains(s, "déjà vu") {
			t.Fatalf("the commit body was not decoded: %q", s)
		}
	}
	a.wantVerifies(t)
	a.must(t, "push")

	b := syncCloneDevice(t, s, rem, "B")
	out := b.must(t, "pull")
	syncWantLine(t, "B's pull", out, syncPulled(a.id(t), 4))
	b.wantVerifies(t)
	for _, want := range []string{"caf\uFFFD au lait", "na\uFFFDve stdin", "résumé en latin-1", "“quoted” €"} {
		unhWantSummary(t, b, want)
	}
}
