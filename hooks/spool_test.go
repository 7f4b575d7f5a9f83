package hooks

import "testing"

func TestParseSpool(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	data := "\npost-commit " + sha + " refs/heads/main\tcodex,\tsess\tmodel\n" +
		"\npost-comm" + // cut short: joins nothing, its own (invalid) entry
		"\npost-merge " + sha + " HEAD\n" +
		"\nturn turn-1-ab.json claude-code\n" +
		"\nturn ../escape.json claude-code\n" +
		"\npost-commit " + sha[:20] + " HEAD\n" +
		"\npost-commit " + sha + " HEAD" // no newline: not an entry yet
	es := parseSpool([]byte(data))
	if len(es) != 6 {
		t.Fatalf("%d entries, want 6: %+v", len(es), es)
	}
	want := []spoolEntry{
		{Kind: PostCommit, Arg: sha, Ref: "refs/heads/main", Tools: "codex,", Session: "sess", Model: "model"},
		{},
		{Kind: PostMerge, Arg: sha, Ref: "HEAD"},
		{Kind: kindTurn, Arg: "turn-1-ab.json", Ref: "claude-code"},
		{},
		{},
	}
	for i := range want {
		if es[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, es[i], want[i])
		}
	}
	if n := countValid(es); n != 3 {
		t.Errorf("countValid = %d, want 3", n)
	}
}
