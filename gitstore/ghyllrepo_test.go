package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-ctx/git-ctx/formats/checkpoint"
)

// TestGhyllRepoIDVector: the ghyll-v1 repository directory is the shared
// vector's SHA-256 of the exact remote URL (surrounding whitespace, as git
// prints it, trimmed), not git-ctx's normalised id.
func TestGhyllRepoIDVector(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		RemoteURL string `json:"remote_url"`
		SHA256Hex string `json:"sha256_hex"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vs {
		if v.Kind != "repo_hash" {
			continue
		}
		n++
		for _, out := range []string{v.RemoteURL, v.RemoteURL + "\n", "  " + v.RemoteURL + "\r\n"} {
			if got := GhyllRepoID(out); got != v.SHA256Hex {
				t.Errorf("%s: GhyllRepoID(%q) = %s, want %s", v.Name, out, got, v.SHA256Hex)
			}
		}
	}
	if n == 0 {
		t.Fatal("no repo_hash vector")
	}
	if GhyllRepoID(" \n") != "" {
		t.Error("an empty URL got a directory")
	}
}

// TestLayoutRule: ghyll-v1 seals under ghyll's code rule, ctx-v1 under the
// seed rule.
func TestLayoutRule(t *testing.T) {
	if LayoutGhyllV1.Rule() != checkpoint.RuleGhyllV2 || LayoutCtxV1.Rule() != checkpoint.RuleSeedV1 {
		t.Fatalf("rules %s, %s", LayoutGhyllV1.Rule(), LayoutCtxV1.Rule())
	}
}

// TestAppendSealsUnderLayoutRule: every append seals under its branch's
// rule: v2 records whose hash is ghyll's (no emb) in ghyll-v1, v1 records
// under the seed rule in ctx-v1; the file is the record's MarshalFile.
func TestAppendSealsUnderLayoutRule(t *testing.T) {
	isolate(t)
	for _, layout := range []Layout{LayoutCtxV1, LayoutGhyllV1} {
		t.Run(string(layout), func(t *testing.T) {
			s, _ := newStore(t)
			ctx := context.Background()
			d := device(t, "dev-a", 1)
			if _, err := s.Init(ctx, InitOptions{Layout: layout, Device: d}); err != nil {
				t.Fatal(err)
			}
			ds := drafts(2, "x")
			ds[1].Embedding = []float32{0.5, 1}
			ar, err := s.Append(ctx, AppendRequest{RepoID: repoID, Device: d, Drafts: ds})
			if err != nil {
				t.Fatal(err)
			}
			v, err := s.View()
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range ar.Checkpoints {
				body, err := v.ReadFile(v.CheckpointPath(repoID, want.Hash), MaxBlob)
				if err != nil {
					t.Fatal(err)
				}
				cp, err := checkpoint.Parse(body)
				if err != nil {
					t.Fatal(err)
				}
				rule, err := cp.Verify(d.Key.Public().(ed25519.PublicKey))
				if err != nil || rule != layout.Rule() || cp.Version != layout.Rule().Version() {
					t.Fatalf("v%d rule %s (%v), want rule %s", cp.Version, rule, err, layout.Rule())
				}
				if h, _ := cp.ComputeHash(layout.Rule()); h != cp.Hash {
					t.Fatalf("hash %s is not %s's %s", cp.Hash, layout.Rule(), h)
				}
				if file, _ := cp.MarshalFile(); !bytes.Equal(file, body) {
					t.Fatalf("file is not the record's MarshalFile:\n%s", body)
				}
			}
		})
	}
}
