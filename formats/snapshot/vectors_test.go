package snapshot

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ctx/git-ctx/formats/internal/vectorfile"
)

type vector struct {
	Kind           string  `json:"kind"`
	Name           string  `json:"name"`
	SeedHex        string  `json:"seed_hex"`
	KeyFile        string  `json:"key_file_content"`
	PublicKey      string  `json:"public_key"`
	Canonical      string  `json:"canonical"`
	CanonicalLen   int     `json:"canonical_length_bytes"`
	SnapshotID     string  `json:"snapshot_id"`
	Preimage       string  `json:"signing_message_preimage"`
	SigningMessage string  `json:"signing_message"`
	Signature      string  `json:"signature"`
	StoredPretty   *string `json:"stored_pretty"`
	IndexLine      *string `json:"index_line"`
	Root           string  `json:"root"`
	Identity       *string `json:"identity"`
	ProjectHash    string  `json:"project_hash"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	return vectorfile.Load[[]vector](t, "snapshot.json")
}

func snapshotVectors(t testing.TB) map[string]vector {
	t.Helper()
	out := map[string]vector{}
	for _, v := range loadVectors(t) {
		if v.Kind == "snapshot" {
			out[v.Name] = v
		}
	}
	if len(out) != 2 {
		t.Fatalf("found %d snapshot vectors, want 2", len(out))
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// exampleA is ContextSnapshotV1::new("2026-01-01T00:00:00Z", "9.9.9").
func exampleA() *Snapshot { return New("2026-01-01T00:00:00Z", "9.9.9") }

// exampleB is full_snapshot() of lean-ctx's module tests, id and signature
// blanked.
func exampleB() *Snapshot {
	s := New("2026-06-28T12:00:00Z", "3.9.0")
	s.ParentID = ptr(strings.Repeat("p", 64))
	s.Git = GitAnchor{Commit: ptr("abc1234"), Branch: ptr("feat/context-time-machine"), Dirty: true}
	s.Project = Project{RootHash: ptr(strings.Repeat("r", 64)), IdentityHash: ptr(strings.Repeat("i", 64))}
	s.ROI = ROI{InputTokens: 1000, OutputTokens: 200, TokensSaved: 800, CompressionRate: 0.44444}
	s.Lineage = Lineage{ItemsRecorded: 42, Items: []LineageItem{{
		Seq: 1, Kind: KindRead, Tool: "ctx_read", Path: ptr("src/main.rs"),
		InputTokens: 500, OutputTokens: 13, CompressionRatio: 0.974, ContentHash: ptr(strings.Repeat("c", 64)),
	}}}
	s.Ledger = Ledger{WindowSize: 8000, TotalTokensSent: 1200, TotalTokensSaved: 800, Items: []LedgerItem{{
		Path: "src/main.rs", State: StatePinned, Phi: ptr(0.91), SentTokens: 13, OriginalTokens: 500,
	}}}
	s.Session = &Session{
		SessionID: ptr("sess-1"), Task: ptr("Implement Context Time Machine"),
		Decisions:    []string{"Use ed25519 for snapshot signing"},
		FilesTouched: []string{"rust/src/core/context_snapshot/mod.rs"},
		ProgressPct:  ptr(uint8(20)),
	}
	return s
}

func TestSnapshotVectors(t *testing.T) {
	built := map[string]*Snapshot{"A_empty_shell": exampleA(), "B_all_fields": exampleB()}
	for name, v := range snapshotVectors(t) {
		t.Run(name, func(t *testing.T) {
			if len(v.Canonical) != v.CanonicalLen {
				t.Fatalf("vector canonical is %d bytes, says %d", len(v.Canonical), v.CanonicalLen)
			}
			s := built[name]
			checkVectorCanonical(t, s, v)
			pub := checkVectorSigning(t, s, v)
			file := checkVectorStoredForms(t, s, v)
			checkVectorFileRoundTrip(t, file, pub)
		})
	}
}

// checkVectorCanonical: the canonical body, its id, preimage and signing
// message are the vector's, and parsing the body reproduces its bytes.
func checkVectorCanonical(t *testing.T, s *Snapshot, v vector) {
	t.Helper()
	// Writing from Go values.
	body, err := s.CanonicalBody()
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != v.Canonical {
		t.Fatalf("canonical body\n got %s\nwant %s", body, v.Canonical)
	}
	// Reading: parse and re-serialise reproduces the bytes.
	parsed, err := ParseFile([]byte(v.Canonical))
	if err != nil {
		t.Fatal(err)
	}
	again, err := parsed.MarshalCompact()
	if err != nil || string(again) != v.Canonical {
		t.Fatalf("re-serialised %s (%v)", again, err)
	}
	id, err := s.ComputeID()
	if err != nil || id != v.SnapshotID {
		t.Fatalf("id %s (%v), want %s", id, err, v.SnapshotID)
	}
	if SignPrefix+id != v.Preimage {
		t.Fatalf("preimage %s", SignPrefix+id)
	}
	if m := SigningMessage(id); m != v.SigningMessage {
		t.Fatalf("message %s, want %s", m, v.SigningMessage)
	}
}

// checkVectorSigning: the key file and signature are the vector's, and the
// signed snapshot verifies with its own key only; returns the public key.
func checkVectorSigning(t *testing.T, s *Snapshot, v vector) ed25519.PublicKey {
	t.Helper()
	priv := vectorfile.Key(t, v.SeedHex)
	if got := string(EncodeKeyFile(priv)); got != v.KeyFile {
		t.Fatalf("key file %q", got)
	}
	fromFile, err := ParseKeyFile([]byte(v.KeyFile))
	if err != nil || !fromFile.Equal(priv) {
		t.Fatalf("key file parse: %v", err)
	}
	if err := s.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if s.SnapshotID != v.SnapshotID || s.Signature.Algorithm != "ed25519" ||
		s.Signature.PublicKey != v.PublicKey || s.Signature.Value != v.Signature {
		t.Fatalf("signed: %+v %+v", s.SnapshotID, *s.Signature)
	}
	pub := priv.Public().(ed25519.PublicKey)
	for _, key := range []ed25519.PublicKey{nil, pub} {
		if ok, err := s.Verify(key); !ok || err != nil {
			t.Fatalf("Verify(%x) = %v, %v", key, ok, err)
		}
	}
	other := vectorfile.Key(t, strings.Repeat("01", 32)).Public().(ed25519.PublicKey)
	if ok, err := s.Verify(other); ok || err != nil {
		t.Fatalf("pinned other key: %v %v", ok, err)
	}
	return pub
}

// checkVectorStoredForms: the stored file and the timeline index line are
// the vector's; returns the stored file.
func checkVectorStoredForms(t *testing.T, s *Snapshot, v vector) []byte {
	t.Helper()
	file, err := s.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if v.StoredPretty != nil && string(file) != *v.StoredPretty {
		t.Fatalf("stored file\n got %s\nwant %s", file, *v.StoredPretty)
	}
	var ind bytes.Buffer
	compact, _ := s.MarshalCompact()
	if err := json.Indent(&ind, compact, "", "  "); err != nil || !bytes.Equal(ind.Bytes(), file) {
		t.Fatalf("json.Indent disagrees with Pretty")
	}
	line, err := s.TimelineEntry().MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if v.IndexLine != nil && string(line) != *v.IndexLine+"\n" {
		t.Fatalf("index line\n got %s\nwant %s", line, *v.IndexLine)
	}
	e, err := ParseTimelineEntry(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := e.MarshalLine(); !bytes.Equal(l2, line) {
		t.Fatalf("index line round trip: %s", l2)
	}
	return file
}

// checkVectorFileRoundTrip: the stored file reads back, verifies and imports.
func checkVectorFileRoundTrip(t *testing.T, file []byte, pub ed25519.PublicKey) {
	t.Helper()
	back, err := CheckImport(file)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := back.Verify(pub); !ok || err != nil {
		t.Fatalf("file round trip: %v %v", ok, err)
	}
	refile, _ := back.MarshalFile()
	if !bytes.Equal(refile, file) {
		t.Fatal("file changed across a round trip")
	}
	if err := back.CheckStorable(); err != nil {
		t.Fatal(err)
	}
}

func TestVectorStoredFileParses(t *testing.T) {
	v := snapshotVectors(t)["A_empty_shell"]
	s, err := ParseFile([]byte(*v.StoredPretty))
	if err != nil {
		t.Fatal(err)
	}
	if s.SnapshotID != v.SnapshotID || s.Signature == nil || s.Signature.Value != v.Signature {
		t.Fatalf("%+v", s)
	}
	if ok, err := s.Verify(nil); !ok || err != nil {
		t.Fatalf("Verify: %v %v", ok, err)
	}
	if _, err := CheckImport([]byte(*v.StoredPretty)); err != nil {
		t.Fatal(err)
	}
}

func TestProjectHashVectors(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.Kind != "project_hash" {
			continue
		}
		n++
		if got := ProjectHash(v.Root, v.Identity); got != v.ProjectHash {
			t.Errorf("%s: %s, want %s", v.Name, got, v.ProjectHash)
		}
	}
	if n != 2 {
		t.Fatalf("ran %d project_hash vectors, want 2", n)
	}
}

func TestVectorsMatchShared(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "testvectors", "snapshot.json"))
	if err != nil {
		t.Skip("../shared not present")
	}
	got, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "snapshot.json"))
	if !bytes.Equal(got, want) {
		t.Error("testdata/vectors/snapshot.json differs from shared/testvectors: copy it again")
	}
}
