package checkpoint

import (
	"crypto/ed25519"
	"testing"
)

func benchRecord(b testing.TB) ([]byte, ed25519.PublicKey) {
	cp, priv := sealed(b)
	cp.Summary = "auth: switch to JWT; refresh tokens expire after 7 days; rotate keys weekly\n\nCommit: 4132c267d5aeac48dbbfd1ff2a43bf8002253a86"
	cp.FilesTouched = []string{"pkg/auth/jwt.go", "pkg/auth/refresh.go"}
	cp.ToolsUsed = []string{"Edit", "Bash"}
	cp.Embedding = nil
	if err := cp.Seal(priv); err != nil {
		b.Fatal(err)
	}
	file, _ := cp.MarshalFile()
	return file, priv.Public().(ed25519.PublicKey)
}

// BenchmarkParse: decoding one checkpoint file.
func BenchmarkParse(b *testing.B) {
	file, _ := benchRecord(b)
	b.SetBytes(int64(len(file)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(file); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify: hash rule match and signature of a parsed record.
func BenchmarkVerify(b *testing.B) {
	file, pub := benchRecord(b)
	cp, _ := Parse(file)
	for i := 0; i < b.N; i++ {
		if _, err := cp.Verify(pub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonical: the seed-v1 canonical bytes alone.
func BenchmarkCanonical(b *testing.B) {
	file, _ := benchRecord(b)
	cp, _ := Parse(file)
	for i := 0; i < b.N; i++ {
		if _, err := cp.Canonical(RuleSeedV1); err != nil {
			b.Fatal(err)
		}
	}
}
