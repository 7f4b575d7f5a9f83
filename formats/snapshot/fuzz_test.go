package snapshot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
	"github.com/git-ctx/git-ctx/formats/serdejson"
)

// FuzzParse: no input panics; whatever parses re-encodes (compact and
// pretty) to bytes that parse to the same encoding, with the same id; a
// snapshot that verifies still verifies after the round trip, and its stored
// id is the one recomputed in the float era IntegrityEra names (Ryu only
// when the Zmij id differs).
func FuzzParse(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.Kind != "snapshot" {
			continue
		}
		f.Add([]byte(v.Canonical))
		if v.StoredPretty != nil {
			f.Add([]byte(*v.StoredPretty))
		}
	}
	b := exampleB()
	if err := b.Sign(vectorfile.Key(f, seedB)); err != nil {
		f.Fatal(err)
	}
	file, _ := b.MarshalFile()
	f.Add(file)
	f.Add([]byte(`[1,"",null,"t","v",[null,null,false],[null,null],[0,0,0,0],[0,[]],[0,0,0,[]],null,null]`))
	f.Add([]byte(strings.Replace(canonA, `"git":`, `"x":[{"y":-0,"z":1e-7}],"git":`, 1)))
	compactB, _ := b.MarshalCompact()
	f.Add(compactB)
	// A signed file from a lean-ctx whose serde_json predates zmij ("1e16").
	legacy := exampleB()
	legacy.ROI.CompressionRate = 1e16
	body, _ := legacy.CanonicalBody()
	legacy.SnapshotID = Blake3Hex(bytes.Replace(body, []byte("1e+16"), []byte("1e16"), 1))
	if err := legacy.Sign(vectorfile.Key(f, seedB)); err != nil {
		f.Fatal(err)
	}
	legacyFile, _ := legacy.MarshalFile()
	f.Add(bytes.Replace(legacyFile, []byte("1e+16"), []byte("1e16"), 1))
	f.Add([]byte(strings.NewReplacer(`0.974`, `1`, `0.91`, `-0`, `"phi"`, `"Phi"`, `"parent_id":"`, `"parent_id":null,"p":"`).Replace(string(compactB))))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseFile(data)
		if err != nil {
			return
		}
		c1, err := s.MarshalCompact()
		if err != nil {
			t.Fatalf("parsed snapshot does not encode: %v", err)
		}
		if len(c1) > MaxFileSize {
			return
		}
		back, err := ParseFile(c1)
		if err != nil {
			t.Fatalf("own encoding does not parse: %v\n%s", err, c1)
		}
		c2, err := back.MarshalCompact()
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("unstable encoding:\n%s\n%s", c1, c2)
		}
		pretty, err := s.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		fromPretty, err := ParseFile(pretty)
		if err != nil {
			t.Fatalf("own file does not parse: %v\n%s", err, pretty)
		}
		if c3, _ := fromPretty.MarshalCompact(); !bytes.Equal(c1, c3) {
			t.Fatalf("pretty round trip changed the value:\n%s\n%s", c1, c3)
		}
		id1, err1 := s.ComputeID()
		id2, err2 := back.ComputeID()
		if err1 != nil || err2 != nil || id1 != id2 {
			t.Fatalf("id changed across a round trip: %s %s", id1, id2)
		}
		ok, verr := s.Verify(nil)
		_, _ = CheckImport(data)
		if verr != nil || !ok {
			return
		}
		era, err := s.IntegrityEra()
		if want, _ := s.computeID(era); err != nil || want != s.SnapshotID || (era == serdejson.Ryu) == (id1 == s.SnapshotID) {
			t.Fatalf("verified with id %s, body hashes to %s (%v era %v)", s.SnapshotID, id1, err, era)
		}
		if ok2, err := fromPretty.Verify(nil); !ok2 || err != nil {
			t.Fatalf("verified snapshot fails after a file round trip: %v %v", ok2, err)
		}
	})
}

// FuzzTimelineLine: no panic; an accepted line re-encodes to a line that
// parses to the same encoding.
func FuzzTimelineLine(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.IndexLine != nil {
			f.Add([]byte(*v.IndexLine))
		}
	}
	f.Add([]byte(`{"snapshot_id":"a","parent_id":"b","created_at":"c","git_commit":"d","git_branch":null,"tokens_saved":1,"signed":false,"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ParseTimeline(data)
		e, err := ParseTimelineEntry(data)
		if err != nil {
			return
		}
		l1, err := e.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		e2, err := ParseTimelineEntry(l1)
		if err != nil {
			t.Fatalf("own line does not parse: %v", err)
		}
		if l2, _ := e2.MarshalLine(); !bytes.Equal(l1, l2) {
			t.Fatalf("unstable line:\n%s\n%s", l1, l2)
		}
		if got := ParseTimeline(append(l1, l1...)); len(got) != 2 {
			t.Fatalf("index of two copies of the line gave %d entries", len(got))
		}
	})
}

// FuzzKeyFile: no panic; an accepted key file re-encodes to a key file that
// gives the same key.
func FuzzKeyFile(f *testing.F) {
	f.Add([]byte(strings.Repeat("07", 32)))
	f.Add([]byte(" " + strings.Repeat("AB", 32) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseKeyFile(data)
		if err != nil {
			return
		}
		k2, err := ParseKeyFile(EncodeKeyFile(k))
		if err != nil || !k2.Equal(k) {
			t.Fatalf("key file round trip: %v", err)
		}
	})
}
