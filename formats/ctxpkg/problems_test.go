package ctxpkg

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProblemsListsEveryFailure(t *testing.T) {
	priv := testKey(7)
	sealed := func(sign bool) *Package {
		if sign {
			return sealSigned(t, fullPackage(), priv)
		}
		return sealSigned(t, fullPackage(), nil)
	}
	for _, tc := range []struct {
		name  string
		edit  func(p *Package)
		rules []error
	}{
		{"valid", func(*Package) {}, nil},
		{"names", func(p *Package) { p.Manifest.Name, p.Manifest.Version = "", ".1" }, []error{ErrNameEmpty, ErrVersionDot}},
		{"integrity", func(p *Package) { p.ContentText = append([]byte(nil), p.ContentText[:len(p.ContentText)-1]...) },
			[]error{ErrContentHashMismatch, ErrByteSizeMismatch, ErrSHA256Mismatch}},
		{"signature", func(p *Package) {
			p.Manifest.Integrity.SHA256 = strings.Repeat("0", 64)
		}, []error{ErrSHA256Mismatch, ErrSignatureRejected}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sealed(true)
			tc.edit(p)
			got := p.Problems()
			if len(got) != len(tc.rules) {
				t.Fatalf("problems %v, want %v", got, tc.rules)
			}
			for i, r := range tc.rules {
				if !errors.Is(got[i], r) {
					t.Errorf("problem %d = %v, want %v", i, got[i], r)
				}
				if ProblemText(got[i]) == "" {
					t.Errorf("problem %d has no text", i)
				}
			}
		})
	}
	// A package built here verifies under the writer-bytes rule, and again
	// after being parsed and re-serialised by the serde writer.
	data, err := sealed(true).MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseFile(data)
	if err != nil || len(p.Problems()) != 0 {
		t.Fatalf("parsed: %v %v", err, p.Problems())
	}
	again, err := p.MarshalCompact()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseFile(again)
	if err != nil || len(q.Problems()) != 0 {
		t.Fatalf("re-serialised: %v %v", err, q.Problems())
	}
}

// BenchmarkVerify10MB measures ParseFile + Problems (validation, integrity
// over the content text, signature) of a signed package close to the
// 10,485,760-byte limit.
func BenchmarkVerify10MB(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	task := "bench"
	sl := &SessionLayer{TaskDescription: &task, ExportedAt: t0}
	// ~10 MB of findings with escapes and non-ASCII, as real notes have.
	line := strings.Repeat(`handler "x" → retry\tafter 5s; `, 3)
	for size := 0; size < 9_500_000; size += len(line) + 16 {
		sl.Findings = append(sl.Findings, SessionFinding{Summary: line})
	}
	p := &Package{Manifest: Manifest{SchemaVersion: 1, Name: "bench", Version: "1.0.0", Description: "d", CreatedAt: t0,
		Layers: []Layer{LayerSession}, Provenance: Provenance{Tool: "git-ctx", ToolVersion: "bench"}},
		Content: Content{Session: sl}}
	data, err := sealSigned(b, p, testKey(1)).MarshalCompact()
	if err != nil {
		b.Fatal(err)
	}
	if len(data) > MaxFileSize || len(data) < 9_000_000 {
		b.Fatalf("package is %d bytes", len(data))
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q, err := ParseFile(data)
		if err != nil {
			b.Fatal(err)
		}
		if probs := q.Problems(); len(probs) != 0 {
			b.Fatal(probs)
		}
	}
}
