package snapshot

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
)

func lineEntry(t testing.TB) TimelineEntry {
	t.Helper()
	b := exampleB()
	if err := b.Sign(vectorfile.Key(t, seedB)); err != nil {
		t.Fatal(err)
	}
	return b.TimelineEntry()
}

func TestTimelineLineRoundTrip(t *testing.T) {
	priv := vectorfile.Key(t, seedB)
	pub := priv.Public().(ed25519.PublicKey)
	e := lineEntry(t)
	l, err := SignTimelineLine(priv, "r1", "dev-a", 3, GenesisPrev, e)
	if err != nil {
		t.Fatal(err)
	}
	legacy, _ := e.AppendJSON(nil)
	wantTail := `,"seq":3,"prev":"` + GenesisPrev + `","line_sig":"`
	if !bytes.HasPrefix(l.Bytes(), legacy[:len(legacy)-1]) || !strings.Contains(string(l.Bytes()), wantTail) {
		t.Fatalf("signed line is not the legacy line plus seq/prev/line_sig:\n%s", l.Bytes())
	}
	back, err := ParseTimelineLine(l.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !back.LineSigned() || back.Seq != 3 || back.Prev != GenesisPrev || !bytes.Equal(back.Bytes(), l.Bytes()) {
		t.Fatalf("round trip: %+v", back)
	}
	if !back.VerifyLine(pub, "r1", "dev-a") {
		t.Fatal("own line does not verify")
	}
	// Every bound value matters: repo, device, seq, prev, entry.
	other := back
	other.Seq = 4
	for name, ok := range map[string]bool{
		"repo":   back.VerifyLine(pub, "r2", "dev-a"),
		"device": back.VerifyLine(pub, "r1", "dev-b"),
		"seq":    other.VerifyLine(pub, "r1", "dev-a"),
		"key":    back.VerifyLine(vectorfile.Key(t, strings.Repeat("07", 32)).Public().(ed25519.PublicKey), "r1", "dev-a"),
	} {
		if ok {
			t.Errorf("a line verifies under another %s", name)
		}
	}
	moved := back
	moved.Prev = NextPrev(GenesisPrev, []byte("x"))
	if moved.VerifyLine(pub, "r1", "dev-a") {
		t.Error("a line verifies with another prev")
	}
	changed := back
	changed.Entry.TokensSaved++
	if changed.VerifyLine(pub, "r1", "dev-a") {
		t.Error("a line verifies with another entry")
	}
	// A legacy line parses as unsigned.
	lg, err := ParseTimelineLine(legacy)
	if err != nil || lg.LineSigned() || lg.VerifyLine(pub, "r1", "dev-a") {
		t.Fatalf("legacy line: %+v %v", lg, err)
	}
}

func TestTimelineLineMessage(t *testing.T) {
	e := TimelineEntry{SnapshotID: strings.Repeat("a", 64), CreatedAt: "2026-01-01T00:00:00Z", TokensSaved: 5, Signed: true}
	msg, err := TimelineLineMessage("r", "d", 7, GenesisPrev, e)
	if err != nil {
		t.Fatal(err)
	}
	want := "git-ctx-timeline-line-v1\nrepo r\ndevice d\nseq 7\nprev " + GenesisPrev + "\nentry " +
		`{"snapshot_id":"` + strings.Repeat("a", 64) + `","parent_id":null,"created_at":"2026-01-01T00:00:00Z","git_commit":null,"git_branch":null,"tokens_saved":5,"signed":true}` + "\n"
	if string(msg) != want {
		t.Fatalf("message:\n%q\nwant\n%q", msg, want)
	}
	if NextPrev(GenesisPrev, []byte("{}")) == GenesisPrev || len(NextPrev(GenesisPrev, nil)) != 64 {
		t.Fatal("NextPrev")
	}
}

func TestParseTimelineLineRejectsOtherBytes(t *testing.T) {
	priv := vectorfile.Key(t, seedB)
	l, err := SignTimelineLine(priv, "r", "d", 12, GenesisPrev, lineEntry(t))
	if err != nil {
		t.Fatal(err)
	}
	s := string(l.Bytes())
	for name, bad := range map[string]string{
		"space":            strings.Replace(s, `"seq":12`, `"seq": 12`, 1),
		"leading zero":     strings.Replace(s, `"seq":12`, `"seq":012`, 1),
		"uppercase sig":    s[:len(s)-3] + "A" + s[len(s)-2:],
		"short prev":       strings.Replace(s, `"prev":"0`, `"prev":"`, 1),
		"members reversed": strings.Replace(s, `"seq":12,`, ``, 1)[:len(s)-len(`"seq":12,`)-2] + `,"seq":12"}`,
		"no seq":           strings.Replace(s, `,"seq":12`, ``, 1),
		"extra member":     strings.Replace(s, `,"seq":12`, `,"x":1,"seq":12`, 1),
		"trailing space":   s + " ",
		"negative seq":     strings.Replace(s, `"seq":12`, `"seq":-12`, 1),
		"huge seq":         strings.Replace(s, `"seq":12`, `"seq":99999999999999999999`, 1),
		"legacy spaced":    `{"snapshot_id": "` + strings.Repeat("a", 64) + `","parent_id":null,"created_at":"t","git_commit":null,"git_branch":null,"tokens_saved":0,"signed":false}`,
		"too long":         s + strings.Repeat(" ", MaxTimelineLine),
	} {
		if _, err := ParseTimelineLine([]byte(bad)); !errors.Is(err, ErrTimelineLine) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParseTimelineLine: no input panics; whatever parses re-encodes to
// exactly its input, and a parsed signed line still verifies (or not)
// the same after a re-parse of its bytes.
func FuzzParseTimelineLine(f *testing.F) {
	priv := vectorfile.Key(f, seedB)
	e := lineEntry(f)
	l, err := SignTimelineLine(priv, "r", "d", 0, GenesisPrev, e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(l.Bytes())
	lg, _ := LegacyTimelineLine(e)
	f.Add(lg.Bytes())
	f.Add([]byte(`{"snapshot_id":"x","parent_id":null,"created_at":"t","git_commit":null,"git_branch":null,"tokens_saved":0,"signed":false,"seq":1,"prev":"` + GenesisPrev + `","line_sig":"` + strings.Repeat("0", 128) + `"}`))
	f.Add([]byte(`{"seq":1,"prev":"","line_sig":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseTimelineLine(data)
		if err != nil {
			if !errors.Is(err, ErrTimelineLine) {
				t.Fatalf("error does not wrap ErrTimelineLine: %v", err)
			}
			return
		}
		if !bytes.Equal(p.Bytes(), data) {
			t.Fatalf("parsed line keeps other bytes")
		}
		enc, err := p.encode()
		if err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("re-encoding differs: %v\n%s\n%s", err, enc, data)
		}
		q, err := ParseTimelineLine(enc)
		if err != nil || q.LineSigned() != p.LineSigned() || q.Seq != p.Seq || q.Prev != p.Prev {
			t.Fatalf("re-parse differs: %v", err)
		}
		pub := priv.Public().(ed25519.PublicKey)
		if p.VerifyLine(pub, "r", "d") != q.VerifyLine(pub, "r", "d") {
			t.Fatal("verification changed across a re-parse")
		}
	})
}
