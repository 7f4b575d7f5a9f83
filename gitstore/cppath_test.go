package gitstore

import (
	"strings"
	"testing"
)

// FuzzIsCheckpointPath: the layout walk's check of a record's path
// (isCheckpointPath, which makes no path) answers what comparing with
// CheckpointPath answers, at every fan-out depth, for any path, repository
// directory name and hash.
func FuzzIsCheckpointPath(f *testing.F) {
	h := strings.Repeat("ab", 32)
	for _, p := range []string{CheckpointPath(repoID, h, 0), CheckpointPath(repoID, h, 1), CheckpointPath(repoID, h, 2),
		"repos/" + repoID + "/checkpoints/ab/ab/" + h + ".json", "repos//checkpoints/" + h + ".json"} {
		f.Add(p, repoID, h)
	}
	f.Add("repos/./checkpoints/ab/"+h+".json", ".", h)
	f.Add("repos/a/checkpoints/a.json", "a", "a")
	f.Fuzz(func(t *testing.T, p, repo, hash string) {
		for fanout := 0; fanout <= 2; fanout++ {
			v := &View{Fanout: fanout}
			if got, want := v.isCheckpointPath(p, repo, hash), CheckpointPath(repo, hash, fanout) == p; got != want {
				t.Fatalf("fanout %d, %q %q %q: %v, want %v", fanout, p, repo, hash, got, want)
			}
			if !v.isCheckpointPath(CheckpointPath(repo, hash, fanout), repo, hash) {
				t.Fatalf("fanout %d, %q %q: its own path refused", fanout, repo, hash)
			}
		}
	})
}
