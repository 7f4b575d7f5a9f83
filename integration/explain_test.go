package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// explExplained is the part of `explain --json` these tests read.
type explExplained struct {
	Commits []struct {
		Commit      string `json:"commit"`
		Memory      bool   `json:"memory"`
		Checkpoints []struct {
			Hash     string `json:"hash"`
			Link     string `json:"link"`
			Device   string `json:"device"`
			Verified bool   `json:"verified"`
			Status   string `json:"status"`
			Reason   string `json:"reason"`
		} `json:"checkpoints"`
	} `json:"commits"`
}

func explDecode(t *testing.T, what, out string) explExplained {
	t.Helper()
	var e explExplained
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return e
}

// TestExplainTeammateQuarantined: a teammate's commit and its memory,
// pushed through a real bare remote and pulled by a device that does not
// trust the teammate (ctx.trust allowlist): the pull quarantines the
// records, and explain still shows the turn and the record naming the
// commit, read from the tracking ref, marked quarantined with the reason (text, JSON and the review's markdown),
// never hidden. Once the teammate is trusted, the next pull merges the
// records and explain shows the turn and the commit record, verified
// (the cache's links filled by the refresh after a merge).
func TestExplainTeammateQuarantined(t *testing.T) {
	t.Parallel()
	a, b, commit, turn, cp := explTeammateCommit(t)
	idB := b.id(t)

	r := a.ctx(t, "pull")
	wantCode(t, "pull of an untrusted teammate", r, 1)
	a.git(t, "fetch", "-q", "origin", "feature")
	explWantQuarantined(t, a, idB, commit, turn, cp)

	a.must(t, "devices", "trust", idB)
	if r := a.ctx(t, "pull"); r.code != 0 {
		t.Fatalf("pull after trusting B: %s", r)
	}
	e := explDecode(t, "explain after trusting B", a.must(t, "explain", commit, "--json"))
	cps := e.Commits[0].Checkpoints
	if len(cps) != 2 || cps[0].Hash != turn || cps[0].Link != "turn" || cps[1].Hash != cp || cps[1].Link != "commit" ||
		!cps[0].Verified || !cps[1].Verified || cps[1].Status != "verified" {
		t.Errorf("explain after the merge: %+v, want the turn %s and the record %s, verified", cps, turn, cp)
	}
}

// explTeammateCommit: device A (ctx.trust allowlist) and teammate B, who
// pushed a turn, commit and its record on feature through a bare remote.
// It returns both, the commit and the hashes of B's turn and record.
func explTeammateCommit(t *testing.T) (a, b *syncDevice, commit, turn, cp string) {
	t.Helper()
	s := newSandbox(t)
	rem := syncNewRemote(t, s, "file")
	a = syncFirstDevice(t, s, rem, "A")
	a.must(t, "init")
	a.must(t, "push")
	a.git(t, "config", "ctx.trust", "allowlist")

	b = syncCloneDevice(t, s, rem, "B")
	b.must(t, "pull")
	b.must(t, "init")
	b.git(t, "checkout", "-q", "-b", "feature")
	writeFile(t, filepath.Join(b.dir, "parse.go"), "package main\n\nfunc parse() {}\n")
	turn = b.cp(t, "teammate's turn: wrote the parser").Hash
	b.git(t, "add", "-A")
	b.git(t, "commit", "-q", "-m", "parser: first cut")
	commit = b.git(t, "rev-parse", "HEAD")
	rec := b.must(t, "checkpoint", "--from-commit", "HEAD", "--json")
	var c struct{ Hash string }
	if err := json.Unmarshal([]byte(rec), &c); err != nil {
		t.Fatal(err)
	}
	b.must(t, "push")
	b.git(t, "push", "-q", "origin", "feature")
	return a, b, commit, turn, c.Hash
}

// explWantQuarantined: A's explain, text and markdown review show B's
// turn and record, quarantined with the reason.
func explWantQuarantined(t *testing.T, a *syncDevice, idB, commit, turn, cp string) {
	t.Helper()
	e := explDecode(t, "explain origin/feature", a.must(t, "explain", "origin/feature", "--json"))
	if len(e.Commits) != 1 || e.Commits[0].Commit != commit || !e.Commits[0].Memory || len(e.Commits[0].Checkpoints) != 2 {
		t.Fatalf("explain of the teammate's quarantined commit: %+v", e)
	}
	if p := e.Commits[0].Checkpoints[0]; p.Hash != turn || p.Link != "turn" || p.Verified || p.Status != "quarantined" {
		t.Errorf("the teammate's turn: %+v, want %s, quarantined", p, turn)
	}
	q := e.Commits[0].Checkpoints[1]
	if q.Hash != cp || q.Device != idB || q.Verified || q.Status != "quarantined" || q.Reason == "" || q.Link != "commit" {
		t.Errorf("the teammate's record: %+v, want %s by %s, quarantined with a reason", q, cp, idB)
	}
	if txt := a.must(t, "explain", commit[:8]); !strings.Contains(txt, cp[:12]) || !strings.Contains(txt, "QUARANTINED ("+q.Reason) {
		t.Errorf("explain text does not mark the quarantined record:\n%s", txt)
	}
	md := a.must(t, "review", "main..origin/feature", "--format", "markdown")
	if !strings.Contains(md, "⚠️ unverified (quarantined: ") || !strings.Contains(md, "⚠️ unverified memory") || !strings.Contains(md, "<details>") {
		t.Errorf("review markdown does not mark the quarantined record:\n%s", md)
	}
}
