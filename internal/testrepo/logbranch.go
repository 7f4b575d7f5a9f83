package testrepo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// LogEntries splits the output of `git ctx log --json` into its elements,
// each raw and compacted.
func LogEntries(t testing.TB, stdout string) []string {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("log --json: %v\n%s", err, stdout)
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = Compact(t, []byte(e))
	}
	return out
}

// Compact is the JSON b compacted; it must be valid.
func Compact(t testing.TB, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.String()
}

// WantLogEqualsBranch fails unless entries (LogEntries of `git ctx log
// --json` in dir) are exactly the checkpoint files of st's repository on
// the branch, each element being the file's JSON plus "verified" (true
// unless listed in unverified), and st (`git ctx status --json`) counts
// them. It returns how many there are.
func WantLogEqualsBranch(t testing.TB, dir string, env []string, st StatusInfo, entries []string, unverified map[string]bool) int {
	t.Helper()
	prefix := "repos/" + st.RepoID + "/checkpoints/"
	files := map[string]string{}
	for _, p := range BranchPaths(t, dir, env) {
		if strings.HasPrefix(p, prefix) && strings.HasSuffix(p, ".json") {
			files[strings.TrimSuffix(filepath.Base(p), ".json")] = p
		}
	}
	if len(entries) != len(files) {
		t.Fatalf("log lists %d checkpoints, the branch holds %d files", len(entries), len(files))
	}
	seen := map[string]bool{}
	for _, e := range entries {
		var h struct {
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(e), &h); err != nil {
			t.Fatal(err)
		}
		p, ok := files[h.Hash]
		if !ok || seen[h.Hash] {
			t.Fatalf("log entry %s: on the branch %v, listed twice %v", h.Hash, ok, seen[h.Hash])
		}
		seen[h.Hash] = true
		file := Compact(t, []byte(BranchFile(t, dir, env, p)))
		want := file[:len(file)-1] + fmt.Sprintf(`,"verified":%v}`, !unverified[h.Hash])
		if e != want {
			t.Errorf("log entry differs from the branch file %s (plus verified):\n log  %s\n want %s", p, e, want)
		}
	}
	if st.Checkpoints != len(files) {
		t.Errorf("status counts %d checkpoints, the branch holds %d", st.Checkpoints, len(files))
	}
	return len(files)
}
