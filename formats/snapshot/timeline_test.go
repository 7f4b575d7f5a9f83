package snapshot

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
)

func TestResolveID(t *testing.T) {
	ids := []string{"abc123", "abd456", "ABC789", "dup000", "dup000"}
	for _, c := range []struct {
		prefix, want, err string
	}{
		{"abc", "abc123", ""},
		{"abc123", "abc123", ""},
		{"ABC", "ABC789", ""},
		{"ab", "", "ambiguous snapshot id 'ab' — use more characters"},
		{"dup000", "", "ambiguous snapshot id 'dup000' — use more characters"},
		{"zzz", "", "no snapshot matches id 'zzz'"},
		{"abc1234", "", "no snapshot matches id 'abc1234'"},
		{"", "", "empty snapshot id"},
	} {
		got, err := ResolveID(c.prefix, ids)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%q: %q %v", c.prefix, got, err)
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: error %v, want %q", c.prefix, err, c.err)
		}
	}
	_, err := ResolveID("x", nil)
	if !errors.Is(err, ErrNoMatch) {
		t.Error(err)
	}
	_, err = ResolveID("a", ids)
	if !errors.Is(err, ErrAmbiguous) {
		t.Error(err)
	}
	if _, err := ResolveID("", ids); !errors.Is(err, ErrEmptyPrefix) {
		t.Error(err)
	}
}

func TestCheckID(t *testing.T) {
	for _, id := range []string{"a", strings.Repeat("f", 64), "ABCdef0123456789"} {
		if err := CheckID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"", strings.Repeat("f", 65), "../x", "abc.json", "g", "é"} {
		err := CheckID(id)
		if err == nil || err.Error() != "invalid snapshot id: "+id || !errors.Is(err, ErrInvalidID) {
			t.Errorf("%q: %v", id, err)
		}
	}
}

func TestParseTimeline(t *testing.T) {
	a := exampleA()
	if err := a.Sign(vectorfile.Key(t, strings.Repeat("07", 32))); err != nil {
		t.Fatal(err)
	}
	b := exampleB()
	b.ParentID = &a.SnapshotID
	if err := b.Finalize(); err != nil {
		t.Fatal(err)
	}
	la, _ := a.TimelineEntry().MarshalLine()
	lb, _ := b.TimelineEntry().MarshalLine()
	data := "\n   \n" + string(la) + "not json\n" + `{"snapshot_id":"x"}` + "\n" + strings.TrimSuffix(string(lb), "\n") + "\r\n\t\n" + string(la[:len(la)-1])
	got := ParseTimeline([]byte(data))
	if len(got) != 3 {
		t.Fatalf("%d entries: %+v", len(got), got)
	}
	if got[0].SnapshotID != a.SnapshotID || !got[0].Signed || got[1].SnapshotID != b.SnapshotID || got[1].Signed ||
		*got[1].ParentID != a.SnapshotID || *got[1].GitCommit != "abc1234" || got[1].TokensSaved != 800 {
		t.Fatalf("%+v", got)
	}
	ids := EntryIDs(got)
	if _, err := ResolveID(a.SnapshotID[:4], ids); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("listed twice: %v", err)
	}
	if id, err := ResolveID(b.SnapshotID[:4], ids); err != nil || id != b.SnapshotID {
		t.Fatal(id, err)
	}
	if ParseTimeline(nil) != nil {
		t.Fatal("empty index")
	}
}

func TestTimelineJSON(t *testing.T) {
	if b, err := TimelineJSON(nil); err != nil || string(b) != "[]" {
		t.Fatalf("%s %v", b, err)
	}
	e := exampleA().TimelineEntry()
	b, err := TimelineJSON([]TimelineEntry{e})
	want := "[\n  {\n    \"snapshot_id\": \"\",\n    \"parent_id\": null,\n    \"created_at\": \"2026-01-01T00:00:00Z\",\n    \"git_commit\": null,\n    \"git_branch\": null,\n    \"tokens_saved\": 0,\n    \"signed\": false\n  }\n]"
	if err != nil || string(b) != want {
		t.Fatalf("%s %v", b, err)
	}
}

func TestFileNames(t *testing.T) {
	id := "d0334b6e0e0da614163cfe623ffb6e4534e2086432263c498a40bbd33fd70f30"
	if got := PublishedFileName(id); got != "d0334b6e0e0d.ctxsnapshot.json" {
		t.Error(got)
	}
	if got := StoredFileName(id); got != id+".json" {
		t.Error(got)
	}
	if ShortID("abc") != "abc" {
		t.Error("short id of a short id")
	}
}

func TestApplyCaps(t *testing.T) {
	s := exampleB()
	s.Lineage.Items = nil
	for i := range 200 {
		s.Lineage.Items = append(s.Lineage.Items, LineageItem{Seq: uint64(i), Kind: KindOther})
	}
	for i := range 300 {
		s.Ledger.Items = append(s.Ledger.Items, LedgerItem{Path: fmt.Sprint(i)})
	}
	for i := range 70 {
		s.Session.Decisions = append(s.Session.Decisions, fmt.Sprint(i))
		s.Session.FilesTouched = append(s.Session.FilesTouched, fmt.Sprint(i))
	}
	s.ApplyCaps()
	if n := len(s.Lineage.Items); n != MaxLineageItems || s.Lineage.Items[0].Seq != 72 || s.Lineage.Items[n-1].Seq != 199 {
		t.Errorf("lineage: %d items from %d", n, s.Lineage.Items[0].Seq)
	}
	if n := len(s.Ledger.Items); n != MaxLedgerItems || s.Ledger.Items[n-1].Path != "299" {
		t.Errorf("ledger: %d items", n)
	}
	if len(s.Session.Decisions) != MaxSessionList || s.Session.Decisions[0] != "Use ed25519 for snapshot signing" {
		t.Errorf("decisions: %d, first %q", len(s.Session.Decisions), s.Session.Decisions[0])
	}
	if len(s.Session.FilesTouched) != MaxSessionList || s.Session.FilesTouched[63] != "62" {
		t.Errorf("files: %d", len(s.Session.FilesTouched))
	}
	if s.Lineage.ItemsRecorded != 42 {
		t.Error("items_recorded changed")
	}
	small := exampleB()
	before, _ := small.CanonicalBody()
	small.ApplyCaps()
	after, _ := small.CanonicalBody()
	if string(before) != string(after) {
		t.Error("caps changed a snapshot within the caps")
	}
	empty := New("t", "v")
	empty.ApplyCaps()
	if empty.Session != nil {
		t.Error("session created")
	}
}

func TestKeyFile(t *testing.T) {
	priv := vectorfile.Key(t, strings.Repeat("07", 32))
	for _, in := range []string{
		strings.Repeat("07", 32),
		" \n" + strings.Repeat("07", 32) + "\r\n",
		strings.Repeat("07", 32) + "\u00a0", // Rust trim() is Unicode-aware, as Go's TrimSpace
	} {
		k, err := ParseKeyFile([]byte(in))
		if err != nil || !k.Equal(priv) {
			t.Errorf("%q: %v", in, err)
		}
	}
	upper, err := ParseKeyFile([]byte(strings.Repeat("AB", 32)))
	if err != nil || string(EncodeKeyFile(upper)) != strings.Repeat("ab", 32) {
		t.Errorf("uppercase: %v", err)
	}
	for in, n := range map[string]int{
		"":                              0,
		strings.Repeat("07", 31):        62,
		strings.Repeat("07", 33):        66,
		strings.Repeat("0g", 32):        64,
		"+" + strings.Repeat("7", 63):   64,
		strings.Repeat("07", 64):        128,
		strings.Repeat("07", 16) + " 0": 34,
	} {
		_, err := ParseKeyFile([]byte(in))
		want := fmt.Sprintf("signing key file is corrupt (expected 64 hex chars, got %d chars) — delete it to regenerate (this changes your publisher identity!)", n)
		if err == nil || err.Error() != want || !errors.Is(err, ErrKeyFileCorrupt) {
			t.Errorf("%q: %v", in, err)
		}
	}
	var _ ed25519.PrivateKey = priv
}

func TestNormalizeRoot(t *testing.T) {
	for in, want := range map[string]string{
		"/home/user/project":    "/home/user/project",
		"/home/user/project/":   "/home/user/project",
		"/home//user///project": "/home/user/project",
		`C:\Users\me\proj\`:     "C:/Users/me/proj",
		`C:\`:                   "C:/",
		"/":                     "/",
		`\\server\share\dir`:    "//server/share/dir",
		"//server//share/":      "//server/share",
		"relative/dir/":         "relative/dir",
		"":                      "",
	} {
		if got := NormalizeRoot(in); got != want {
			t.Errorf("NormalizeRoot(%q) = %q, want %q", in, got, want)
		}
	}
	id := "git:github.com/user/my-repo"
	if ProjectHash(NormalizeRoot("/home/user/project/"), &id) != "c6fcdb962088ccff" {
		t.Error("normalised root hashes differently")
	}
}

func TestSipHash13(t *testing.T) {
	// Reference values of SipHash-1-3 with keys (0, 0) over raw bytes,
	// checked against the streaming splits: any chunking gives one result.
	msg := []byte("the quick brown fox jumps over the lazy dog, 0123456789")
	var whole sip13
	whole.write(msg)
	want := whole.sum()
	for split := 0; split <= len(msg); split++ {
		var h sip13
		h.write(msg[:split])
		h.write(msg[split:])
		if h.sum() != want {
			t.Fatalf("split %d", split)
		}
	}
	var empty sip13
	if empty.sum() == want {
		t.Fatal("empty input hashes like the message")
	}
}

func TestBlake3Hex(t *testing.T) {
	// BLAKE3 of the empty input (from the BLAKE3 specification's test vectors).
	if got := Blake3Hex(nil); got != "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" {
		t.Fatal(got)
	}
}
