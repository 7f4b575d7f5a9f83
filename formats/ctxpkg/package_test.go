package ctxpkg

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-ctx/git-ctx/formats/serdejson"
)

func ptr[T any](v T) *T { return &v }

func fullPackage() *Package {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 100_000_000, time.UTC)
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.UTC)
	return &Package{
		Manifest: Manifest{
			SchemaVersion: 1, Name: "@ns/demo", Version: "1.2.3+b1", Description: "demo <&> \u2028 é\x1b",
			CreatedAt: t0, Layers: []Layer{LayerKnowledge, LayerGraph, LayerSession, LayerPatterns, LayerGotchas},
			Tags:       []string{"go"},
			Provenance: Provenance{Tool: "lean-ctx", ToolVersion: "3.9.18", ProjectHash: ptr("abc")},
			Stats:      Stats{KnowledgeFacts: 1, CompressionRatio: 0.75},
		},
		Content: Content{
			Knowledge: &KnowledgeLayer{
				Facts: []KnowledgeFact{{Category: "arch", Key: "k", Value: "v", SourceSession: "s",
					Confidence: 0.8, CreatedAt: t0, LastConfirmed: t1, LastRetrieved: &t1,
					Fidelity: &FidelityScore{Structural: 1, Semantic: 1e-6, ComputedAt: t0}}},
				Patterns:   []ProjectPattern{{PatternType: "p", Description: "d", Examples: []string{"e"}, SourceSession: "s", CreatedAt: t0}},
				Insights:   []ConsolidatedInsight{{Summary: "i", FromSessions: []string{"a"}, Timestamp: t0}},
				ExportedAt: t1,
			},
			Graph: &GraphLayer{
				Nodes:      []GraphNode{{Kind: "function", Name: "f", FilePath: "a.go", LineStart: ptr[uint64](1)}},
				Edges:      []GraphEdge{{SourcePath: "a", SourceName: "f", TargetPath: "b", TargetName: "g", Kind: "calls"}},
				ExportedAt: t0,
			},
			Session: &SessionLayer{Findings: []SessionFinding{{Summary: "x", Line: ptr[uint32](3)}},
				Decisions: []SessionDecision{{Summary: "y", Rationale: ptr("z")}}, ExportedAt: t0},
			Patterns: &PatternsLayer{ExportedAt: t0},
			Gotchas: &GotchasLayer{Gotchas: []Gotcha{{ID: "g", Category: "build", Severity: "warning",
				Trigger: "t", Resolution: "r", Confidence: 0.9}}, ExportedAt: t0},
		},
	}
}

func TestBuildSealRoundTrip(t *testing.T) {
	p := fullPackage()
	file := sealedFile(t, p, testKey(9))
	for _, want := range []string{
		`"author": null`, `"updated_at": null`, `"created_at": "2026-01-02T03:04:05.100Z"`,
		`"confidence": 0.8`, `"semantic": 1e-6`, `"structural": 1.0`, `"task_description": null`,
		`"exported_at": "2026-01-02T03:04:05.123456789Z"`, "demo <&> \u2028 é\\u001b", `"privacy": "project_only"`,
		`"archetype": "fact"`, `"compression_ratio": 0.75`,
	} {
		if !strings.Contains(string(file), want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, bad := range []string{`"kind": "context"`, `"scope"`, `"visibility"`, `"line_end"`, `"file":`, `"marketplace"`} {
		if strings.Contains(string(file), bad) {
			t.Errorf("unexpected %s", bad)
		}
	}
	q, err := ReadFile(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckImport(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q.ContentText, p.ContentText) {
		t.Fatal("content text differs after parse")
	}
	again, err := q.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, file) {
		t.Fatalf("re-serialisation differs:\n%s\n%s", file, again)
	}
	// Compact form verifies too.
	compact, _ := q.MarshalCompact()
	r, err := ParseFile(compact)
	if err != nil || r.CheckImport() != nil {
		t.Fatal(err, r.CheckImport())
	}
	// Tampering a manifest field not covered keeps the signature valid;
	// tampering the content breaks integrity.
	tampered := bytes.Replace(file, []byte(`"value": "v"`), []byte(`"value": "w"`), 1)
	tp, err := ParseFile(tampered)
	if err != nil {
		t.Fatal(err)
	}
	var ie *IntegrityError
	if err := tp.CheckImport(); !errors.As(err, &ie) || !errors.Is(err, ErrContentHashMismatch) {
		t.Fatalf("tampered: %v", err)
	}
	errs, _ := tp.IntegrityErrors()
	if len(errs) != 2 || !strings.HasPrefix(errs[0].VerifyText(), "content_hash mismatch: manifest says ") ||
		!strings.HasPrefix(errs[1].VerifyText(), "package sha256 mismatch: manifest says ") {
		t.Fatalf("verify list %v", errs)
	}
}

func TestUnknownFieldsTrap(t *testing.T) {
	// The verify.rs fixture content verifies as written, but re-serialises to {}.
	v := loadVectors(t).PackageIntegrity[0]
	p, err := ParseFile(bundle(v.Name, v.Version, v.SHA256, v.ContentHash, v.ByteSize, v.ContentText, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.VerifyIntegrity(); err != nil {
		t.Fatal(err)
	}
	out, _ := p.MarshalCompact()
	q, _ := ParseFile(out)
	err = q.VerifyIntegrity()
	want := "integrity check failed: content_hash mismatch (expected " + v.ContentHash + ", got 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
}

func TestIntegrityMessages(t *testing.T) {
	v := loadVectors(t).PackageIntegrity[1]
	zero := strings.Repeat("0", 64)
	p, _ := ParseFile(bundle(v.Name, v.Version, zero, v.ContentHash, 3, "{ }", nil))
	err := p.VerifyIntegrity()
	if err.Error() != "integrity check failed: sha256 mismatch (expected "+v.SHA256+", got "+zero+")" {
		t.Fatal(err)
	}
	p, _ = ParseFile(bundle(v.Name, v.Version, v.SHA256, v.ContentHash, 3, "{}", nil))
	if err := p.VerifyIntegrity(); err.Error() != "integrity check failed: byte_size mismatch (expected 3, got 2)" {
		t.Fatal(err)
	}
	errs, _ := p.IntegrityErrors()
	if errs[0].VerifyText() != "byte_size mismatch: manifest says 3, content is 2 bytes" {
		t.Fatal(errs[0].VerifyText())
	}
}

func TestParseErrors(t *testing.T) {
	v := loadVectors(t).PackageIntegrity[1]
	good := string(bundle(v.Name, v.Version, v.SHA256, v.ContentHash, v.ByteSize, "{}", nil))
	cases := map[string]string{
		`{"manifest":{}}`: "parse package: missing field `schema_version`",
		strings.Replace(good, `"content":{}`, `"content":{},"content":{}`, 1):   "parse package: duplicate field `content`",
		strings.Replace(good, `"layers":["knowledge"]`, `"layers":["nope"]`, 1): "parse package: unknown variant `nope`, expected one of `knowledge`, `graph`, `session`, `patterns`, `gotchas`",
		strings.Replace(good, `"byte_size":2`, `"byte_size":2.0`, 1):            "parse package: invalid type: floating point `2.0`, expected u64",
		strings.Replace(good, `"content":{}`, `"content":{"knowledge":{"facts":[{"category":"c","key":"k","value":"v","source":"s"}],"patterns":[],"insights":[],"exported_at":"2026-01-01T00:00:00Z"}}`, 1): "parse package: missing field `source_session`",
		strings.Replace(good, `"stats":{`, `"stats":{"x":1,`, 1):                                                    "",
		strings.Replace(good, `,"stats":{"knowledge_facts":0,`, `,"stats":{`, 1):                                    "parse package: missing field `knowledge_facts`",
		strings.Replace(good, `"created_at":"0001-01-01T00:00:00Z"`, `"created_at":"2026-01-01T02:00:00+02:00"`, 1): "",
	}
	for in, want := range cases {
		_, err := ParseFile([]byte(in))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", in, err)
			}
			continue
		}
		if err == nil || err.Error() != want || !errors.Is(err, ErrParse) {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
	p, err := ParseFile([]byte(strings.Replace(good, `"created_at":"0001-01-01T00:00:00Z"`, `"created_at":"2026-01-01T02:00:00.1+02:00"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := p.MarshalCompact()
	if !strings.Contains(string(out), `"created_at":"2026-01-01T00:00:00.100Z"`) {
		t.Fatalf("%s", out)
	}
}

func TestSizeLimits(t *testing.T) {
	big := bytes.Repeat([]byte{' '}, MaxFileSize+1)
	if _, err := ParseFile(big); err == nil || err.Error() != "package file too large (10485761 bytes, max 10485760 bytes)" {
		t.Fatal(err)
	}
	if _, err := ReadFile(bytes.NewReader(append(big, big...))); !errors.Is(err, ErrTooLarge) {
		t.Fatal(err)
	}
	// Exactly the limit is allowed (fails later, on syntax, not size).
	if _, err := ParseFile(big[:MaxFileSize]); errors.Is(err, ErrTooLarge) {
		t.Fatal(err)
	}
}

func TestNames(t *testing.T) {
	for name, want := range map[string]bool{
		"a.ctxpkg": true, "dir/x-1.0.lctxpkg": true, "a.CTXPKG": false, ".ctxpkg": false,
		"a.ctxpkg.json": false, "ctxpkg": false, "a.tar": false, "dir.ctxpkg/": true,
	} {
		if IsPackageName(name) != want {
			t.Errorf("%s: %v", name, !want)
		}
	}
	if err := CheckName("x.json"); err.Error() != "unsupported file extension '.json' — expected .ctxpkg or .lctxpkg" {
		t.Fatal(err)
	}
	if err := CheckName("README"); err.Error() != "unsupported file extension '.(none)' — expected .ctxpkg or .lctxpkg" {
		t.Fatal(err)
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-01-02T03:04:05Z":            "2026-01-02T03:04:05Z",
		"2026-01-02t03:04:05.5z":          "2026-01-02T03:04:05.500Z",
		"2026-01-02T03:04:05.1234567891Z": "2026-01-02T03:04:05.123456789Z",
		"2026-01-02T03:04:05-01:30":       "2026-01-02T04:34:05Z",
		"2026-01-02T3:04:05Z":             "",
		"2026-01-02T03:04:05.Z":           "",
		"2026-01-02T03:04:05+0200":        "",
		"2026-01-02T03:04:05":             "",
		"2026-13-02T03:04:05Z":            "",
		"2026-01-02T03:04:05,5Z":          "",
	} {
		got, err := ParseTime(in)
		if want == "" {
			if err == nil {
				t.Errorf("%s accepted", in)
			}
			continue
		}
		if err != nil || serdejson.FormatTime(got) != want {
			t.Errorf("%s: %v %v", in, serdejson.FormatTime(got), err)
		}
	}
}
