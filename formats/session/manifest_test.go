package session

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

const testUUID = "22222222-3333-4444-8555-666666666666"

// §6.1 examples, byte for byte.
func TestManifestGolden(t *testing.T) {
	wantEmpty, _ := os.ReadFile("testdata/manifest_v1_empty.golden")
	got, err := NewManifest().Marshal()
	if err != nil || !bytes.Equal(got, wantEmpty) {
		t.Fatalf("empty: %s %v", got, err)
	}
	// nil sessions is written as {} too.
	got, _ = (&Manifest{SchemaVersion: 1}).Marshal()
	if !bytes.Equal(got, wantEmpty) {
		t.Fatalf("nil sessions: %s", got)
	}

	want, _ := os.ReadFile("testdata/manifest_v1.golden")
	m := NewManifest()
	m.Revision = testUUID
	m.UpdatedAt = "2026-07-29T10:00:00Z"
	m.Sessions[SessionKey("claude", "abc")] = ManifestEntry{
		Agent: "claude", SessionID: "abc", SnapshotID: testUUID, ProjectID: "local/demo", UpdatedAt: "2026-07-29T10:00:00Z",
	}
	got, err = m.Marshal()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := ParseManifestStrict(want)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.Marshal(); !bytes.Equal(again, want) {
		t.Fatalf("round trip: %s", again)
	}
}

func TestManifestSortedAndEscaped(t *testing.T) {
	m := NewManifest()
	for _, sid := range []string{"b", "a", "c<&>"} {
		m.Sessions[SessionKey("codex", sid)] = ManifestEntry{Agent: "codex", SessionID: sid, SnapshotID: testUUID}
	}
	got, _ := m.Marshal()
	ia := bytes.Index(got, []byte(`"codex:a"`))
	ib := bytes.Index(got, []byte(`"codex:b"`))
	ic := bytes.Index(got, []byte(`"codex:c\u003c\u0026\u003e"`))
	if ia < 0 || ib < 0 || ic < 0 || !(ia < ib && ib < ic) {
		t.Fatalf("%s", got)
	}
}

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
		n    int
	}{
		{"empty example", `{"schema_version":1,"revision":"","sessions":{},"updated_at":""}`, nil, 0},
		{"null sessions", `{"schema_version":1,"sessions":null}`, nil, 0},
		{"absent sessions", `{"schema_version":1}`, nil, 0},
		{"unknown keys ignored", `{"schema_version":1,"etag":"x","sessions":{"k":{"agent":"a","zz":1}}}`, nil, 1},
		{"case-insensitive", `{"Schema_Version":1}`, nil, 0},
		{"entries not validated", `{"schema_version":1,"sessions":{"wrong":{"agent":"claude","session_id":"x"}}}`, nil, 1},
		{"schema 2", `{"schema_version":2}`, ErrUnsupportedSchema, 0},
		{"schema missing", `{}`, ErrUnsupportedSchema, 0},
		{"not json", `{`, ErrInvalidManifest, 0},
		{"wrong type", `{"schema_version":1,"sessions":[]}`, ErrInvalidManifest, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.in))
			if tc.want != nil {
				wantErr(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Sessions == nil || len(m.Sessions) != tc.n {
				t.Fatalf("%+v", m)
			}
		})
	}
}

func TestManifestSizeLimit(t *testing.T) {
	pad := func(total int) []byte {
		head := `{"schema_version":1,"revision":"`
		tail := `","sessions":{},"updated_at":""}`
		return []byte(head + strings.Repeat("r", total-len(head)-len(tail)) + tail)
	}
	if _, err := ParseManifest(pad(MaxManifestSize)); err != nil {
		t.Fatalf("exactly 4 MiB: %v", err)
	}
	if _, err := ParseManifest(pad(MaxManifestSize + 1)); !errors.Is(err, ErrManifestTooLarge) {
		t.Fatalf("4 MiB + 1: %v", err)
	}
	if _, err := ReadManifest(bytes.NewReader(pad(MaxManifestSize))); err != nil {
		t.Fatalf("read exactly 4 MiB: %v", err)
	}
	src := &countingSource{b: ' '}
	if _, err := ReadManifest(src); !errors.Is(err, ErrManifestTooLarge) {
		t.Fatalf("endless: %v", err)
	}
	if src.n > MaxManifestSize+64<<10 {
		t.Fatalf("read %d bytes of an endless manifest", src.n)
	}
	m := NewManifest()
	m.Revision = strings.Repeat("r", MaxManifestSize)
	if _, err := m.Marshal(); !errors.Is(err, ErrManifestTooLarge) {
		t.Fatalf("marshal: %v", err)
	}
}

func TestManifestValidate(t *testing.T) {
	good := ManifestEntry{Agent: "claude", SessionID: "abc", SnapshotID: testUUID, UpdatedAt: "2026-07-29T10:00:00Z"}
	tests := []struct {
		name string
		mod  func(*Manifest)
		want error
	}{
		{"ok", func(*Manifest) {}, nil},
		{"schema", func(m *Manifest) { m.SchemaVersion = 3 }, ErrUnsupportedSchema},
		{"updated_at", func(m *Manifest) { m.UpdatedAt = "yesterday" }, ErrInvalidTimestamp},
		{"wrong key", func(m *Manifest) { m.Sessions["claude:other"] = good }, ErrInvalidManifestEntry},
		{"no snapshot", func(m *Manifest) { e := good; e.SnapshotID = ""; m.Sessions["claude:abc"] = e }, ErrInvalidManifestEntry},
		{"no agent", func(m *Manifest) { e := good; e.Agent = ""; m.Sessions[":abc"] = e }, ErrInvalidManifestEntry},
		{"colon agent", func(m *Manifest) { e := good; e.Agent = "a:b"; m.Sessions["a:b:abc"] = e }, ErrInvalidManifestEntry},
		{"entry time", func(m *Manifest) { e := good; e.UpdatedAt = "2026"; m.Sessions["claude:abc"] = e }, ErrInvalidManifestEntry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManifest()
			m.Sessions["claude:abc"] = good
			tc.mod(m)
			wantNilOr(t, m.Validate(), tc.want)
		})
	}
}

func TestParseManifestStrict(t *testing.T) {
	g, _ := os.ReadFile("testdata/manifest_v1.golden")
	s := string(g)
	for name, in := range map[string]string{
		"null sessions":   `{"schema_version":1,"revision":"","sessions":null,"updated_at":""}`,
		"duplicate key":   strings.Replace(s, `"revision":`, `"revision":"","revision":`, 1),
		"dup session key": strings.Replace(s, `"sessions":{`, `"sessions":{"claude:abc":{},`, 1),
		"unknown key":     strings.Replace(s, `"revision":`, `"etag":"x","revision":`, 1),
		"unknown entry":   strings.Replace(s, `"agent":"claude",`, `"agent":"claude","x":1,`, 1),
		"missing entry":   strings.Replace(s, `"project_id":"local/demo",`, ``, 1),
		"case variant":    strings.Replace(s, `"updated_at":"2026-07-29T10:00:00Z"}`, `"Updated_At":"2026-07-29T10:00:00Z"}`, 1),
	} {
		if _, err := ParseManifestStrict([]byte(in)); !errors.Is(err, ErrStrictJSON) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := strings.Replace(s, `"sessions":{"claude:abc"`, `"sessions":{"claude:zzz"`, 1)
	if _, err := ParseManifestStrict([]byte(bad)); !errors.Is(err, ErrInvalidManifestEntry) {
		t.Errorf("entry under the wrong key: %v", err)
	}
	if _, err := ParseManifest([]byte(bad)); err != nil {
		t.Errorf("lenient parser must accept it (rc.8 does): %v", err)
	}
}
