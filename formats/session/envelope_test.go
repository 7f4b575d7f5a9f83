package session

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func goldenEnvelope() Envelope {
	return Envelope{
		SchemaVersion:  1,
		Kind:           "reinstate-session-snapshot",
		SnapshotID:     "11111111-2222-4333-8444-555555555555",
		Agent:          "claude",
		AdapterSchema:  1,
		SourcePlatform: "darwin-arm64",
		ProjectID:      "local/demo",
		SessionID:      "abc",
		CreatedAt:      "2026-07-29T10:00:00Z",
		Files: []FileDescriptor{{
			Path: "projects/-Users-x-demo/abc.jsonl", Mode: 384, Size: 3072, SHA256: emptySHA,
		}},
	}
}

// The reference's illustrative line (§4.2) with its sha256 placeholder
// filled: key order, all keys present, "mode":384, compact, one "\n".
func TestEnvelopeGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/envelope_v1.golden")
	if err != nil {
		t.Fatal(err)
	}
	env := goldenEnvelope()
	got, err := env.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := ParseEnvelopeStrict(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalLine(); !bytes.Equal(again, want) {
		t.Fatalf("re-encode differs: %s", again)
	}
	if FileMode != 384 {
		t.Fatal("FileMode is not 384")
	}
}

// §4.2 escaping: Go encoding/json with HTML escaping.
func TestEnvelopeEscaping(t *testing.T) {
	env := goldenEnvelope()
	env.ProjectID = "q\"b\\s\b\f\n\r\t\x01\x1f<>&\u2028\u2029/é\xff~\x7f"
	env.Files = nil
	got, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	wantProject := `"project_id":"q\"b\\s\b\f\n\r\t\u0001\u001f\u003c\u003e\u0026\u2028\u2029/é\ufffd~` + "\x7f" + `"`
	if !bytes.Contains(got, []byte(wantProject)) {
		t.Fatalf("escaping: %s\nwant %s", got, wantProject)
	}
	if !bytes.HasSuffix(got, []byte(`"files":null}`)) {
		t.Fatalf("nil files: %s", got)
	}
	if bytes.ContainsAny(got, "\n ") {
		t.Fatalf("not compact: %q", got)
	}
}

func TestMarshalLineLimit(t *testing.T) {
	env := goldenEnvelope()
	base, _ := env.Marshal()
	env.SourcePlatform = strings.Repeat("x", MaxMetadataLine-1-len(base)+len("darwin-arm64"))
	line, err := env.MarshalLine()
	if err != nil || len(line) != MaxMetadataLine {
		t.Fatalf("exact limit: %d %v", len(line), err)
	}
	env.SourcePlatform += "x"
	if _, err := env.MarshalLine(); !errors.Is(err, ErrMetadataTooLarge) {
		t.Fatalf("over limit: %v", err)
	}
}

// §4.3: json.Unmarshal leniency.
func TestParseEnvelopeLenient(t *testing.T) {
	golden, _ := os.ReadFile("testdata/envelope_v1.golden")
	g := strings.TrimSuffix(string(golden), "\n")
	tests := []struct {
		name  string
		in    string
		check func(*Envelope) bool
	}{
		{"trailing newline", g + "\n", func(e *Envelope) bool { return e.SessionID == "abc" }},
		{"CR before LF", g + "\r\n", func(e *Envelope) bool { return e.SessionID == "abc" }},
		{"unknown key ignored", `{"future":{"a":[1]},` + g[1:], func(e *Envelope) bool { return e.SessionID == "abc" }},
		{"case-insensitive key", strings.Replace(g, `"session_id"`, `"SESSION_ID"`, 1), func(e *Envelope) bool { return e.SessionID == "abc" }},
		{"last duplicate wins", strings.Replace(g, `"session_id":"abc"`, `"session_id":"abc","session_id":"def"`, 1), func(e *Envelope) bool { return e.SessionID == "def" }},
		{"null leaves zero", strings.Replace(g, `"parent_revision":""`, `"parent_revision":null`, 1), func(e *Envelope) bool { return e.ParentRevision == "" }},
		{"uppercase sha", strings.Replace(g, emptySHA, strings.ToUpper(emptySHA), 1), func(e *Envelope) bool { return e.Validate() == nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseEnvelope([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(e) {
				t.Fatalf("%+v", e)
			}
		})
	}
	for _, bad := range []string{"", "not json", "[]", `{"schema_version":"1"}`, `{"files":[{"size":1.5}]}`, g + "x"} {
		if _, err := ParseEnvelope([]byte(bad)); !errors.Is(err, ErrInvalidMetadata) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParseEnvelope(make([]byte, MaxMetadataLine+1)); !errors.Is(err, ErrMetadataTooLarge) {
		t.Errorf("oversize: %v", err)
	}
}

func TestParseEnvelopeStrict(t *testing.T) {
	golden, _ := os.ReadFile("testdata/envelope_v1.golden")
	g := strings.TrimSuffix(string(golden), "\n")
	for name, in := range map[string]string{
		"unknown key":       `{"future":1,` + g[1:],
		"case variant":      strings.Replace(g, `"session_id"`, `"Session_ID"`, 1),
		"duplicate":         strings.Replace(g, `"session_id":"abc"`, `"session_id":"abc","session_id":"def"`, 1),
		"null":              strings.Replace(g, `"parent_revision":""`, `"parent_revision":null`, 1),
		"missing key":       strings.Replace(g, `"parent_revision":"",`, ``, 1),
		"unknown file key":  strings.Replace(g, `"mode":384`, `"mode":384,"x":1`, 1),
		"dup file key":      strings.Replace(g, `"mode":384`, `"mode":384,"mode":384`, 1),
		"files not array":   strings.TrimSuffix(strings.Replace(g, `"files":[`, `"files":{"a":`, 1), "}]}") + "}}}",
		"invalid UTF-8":     strings.Replace(g, "local/demo", "local/\xffdemo", 1),
		"object for scalar": strings.Replace(g, `"agent":"claude"`, `"agent":{}`, 1),
	} {
		if _, err := ParseEnvelopeStrict([]byte(in)); !errors.Is(err, ErrStrictJSON) || !errors.Is(err, ErrInvalidMetadata) {
			t.Errorf("%s: %v", name, err)
		}
		if name == "invalid UTF-8" || name == "unknown key" || name == "duplicate" {
			if _, err := ParseEnvelope([]byte(in)); err != nil {
				t.Errorf("%s: lenient parser refused: %v", name, err)
			}
		}
	}
}

// §10.1 step 3-4 rules, each with its sentinel.
func TestEnvelopeValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Envelope)
		want error
	}{
		{"ok", func(*Envelope) {}, nil},
		{"schema 2", func(e *Envelope) { e.SchemaVersion = 2 }, ErrUnsupportedSchema},
		{"schema 0", func(e *Envelope) { e.SchemaVersion = 0 }, ErrUnsupportedSchema},
		{"kind", func(e *Envelope) { e.Kind = "other" }, ErrUnexpectedKind},
		{"no snapshot id", func(e *Envelope) { e.SnapshotID = "" }, ErrMissingField},
		{"no agent", func(e *Envelope) { e.Agent = "" }, ErrMissingField},
		{"no session", func(e *Envelope) { e.SessionID = "" }, ErrMissingField},
		{"no files", func(e *Envelope) { e.Files = nil }, ErrArtifactCount},
		{"two files", func(e *Envelope) { e.Files = append(e.Files, e.Files[0]) }, ErrArtifactCount},
		{"unsafe path", func(e *Envelope) { e.Files[0].Path = "projects/../x.jsonl" }, ErrPathTraversal},
		{"absolute path", func(e *Envelope) { e.Files[0].Path = "/etc/passwd" }, ErrPathAbsolute},
		{"credential", func(e *Envelope) { e.Files[0].Path = "projects/x/.env.local" }, ErrCredentialPath},
		{"negative size", func(e *Envelope) { e.Files[0].Size = -1 }, ErrInvalidPayloadSize},
		{"size over limit", func(e *Envelope) { e.Files[0].Size = MaxPayloadSize + 1 }, ErrInvalidPayloadSize},
		{"size at limit", func(e *Envelope) { e.Files[0].Size = MaxPayloadSize }, nil},
		{"short sha", func(e *Envelope) { e.Files[0].SHA256 = emptySHA[:62] }, ErrInvalidPayloadHash},
		{"non-hex sha", func(e *Envelope) { e.Files[0].SHA256 = "zz" + emptySHA[2:] }, ErrInvalidPayloadHash},
		{"uppercase sha ok", func(e *Envelope) { e.Files[0].SHA256 = strings.ToUpper(emptySHA) }, nil},
		{"mode not checked", func(e *Envelope) { e.Files[0].Mode = 0o644 }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := goldenEnvelope()
			tc.mod(&e)
			wantNilOr(t, e.Validate(), tc.want)
		})
	}
}

func TestValidateForWrite(t *testing.T) {
	for name, tc := range map[string]struct {
		mod  func(*Envelope)
		want error
	}{
		"uppercase sha": {func(e *Envelope) { e.Files[0].SHA256 = strings.ToUpper(emptySHA) }, ErrInvalidPayloadHash},
		"mode 0":        {func(e *Envelope) { e.Files[0].Mode = 0 }, ErrInvalidMode},
		"no created_at": {func(e *Envelope) { e.CreatedAt = "" }, ErrInvalidTimestamp},
		"fractional":    {func(e *Envelope) { e.CreatedAt = "2026-07-29T10:00:00.5Z" }, ErrInvalidTimestamp},
		"offset":        {func(e *Envelope) { e.CreatedAt = "2026-07-29T10:00:00+02:00" }, ErrInvalidTimestamp},
	} {
		e := goldenEnvelope()
		tc.mod(&e)
		if err := e.validateForWrite(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	e := goldenEnvelope()
	if err := e.validateForWrite(); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopeMatch(t *testing.T) {
	e := goldenEnvelope()
	full := Expect{SnapshotID: e.SnapshotID, Agent: "claude", SessionID: "abc", ProjectID: "local/demo"}
	tests := []struct {
		want Expect
		err  error
	}{
		{full, nil},
		{Expect{}, nil},
		{Expect{SnapshotID: "other"}, ErrSnapshotIdentity},
		{Expect{Agent: "codex"}, ErrAgentMismatch},
		{Expect{SessionID: "x"}, ErrSessionMismatch},
		{Expect{ProjectID: "github.com/a/b"}, ErrProjectMismatch},
		{Expect{SnapshotID: "other", Agent: "codex"}, ErrSnapshotIdentity}, // rc.8 order
	}
	for i, tc := range tests {
		if err := e.Match(tc.want); !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%d: %v, want %v", i, err, tc.err)
		}
	}
}

func TestTimeHelpers(t *testing.T) {
	tm := time.Date(2026, 7, 29, 12, 0, 0, 999_000_000, time.FixedZone("x", 2*3600))
	if s := FormatTime(tm); s != "2026-07-29T10:00:00Z" {
		t.Fatal(s)
	}
	for s, ok := range map[string]bool{
		"2026-07-29T10:00:00Z": true, "2026-07-29T10:00:00.1Z": false, "2026-07-29 10:00:00Z": false,
		"": false, "2026-02-30T10:00:00Z": false, "2026-07-29T10:00:00z": false,
	} {
		if ValidTime(s) != ok {
			t.Errorf("%q", s)
		}
	}
}

func TestHashPayload(t *testing.T) {
	n, h, err := HashPayload(strings.NewReader(""))
	if err != nil || n != 0 || h != emptySHA {
		t.Fatal(n, h, err)
	}
	n, h, err = HashPayload(strings.NewReader("abc"))
	if err != nil || n != 3 || h != sha256hex([]byte("abc")) {
		t.Fatal(n, h, err)
	}
	fd := NewFileDescriptor("projects/a/b.jsonl", 3, h)
	if fd.Mode != 384 || fd.Size != 3 {
		t.Fatal(fd)
	}
}
