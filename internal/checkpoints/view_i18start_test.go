package checkpoints_test

import (
	"errors"
	"testing"

	"github.com/git-ctx/git-ctx/gitstore"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// TestWorkspaceViewFollowsTip: Workspace.View is reused while the tip is
// unchanged and never outlives it: after an append through the same
// workspace, and after one through another workspace of the same clone,
// View, ReadStatus and Show see the new tip and the new record.
func TestWorkspaceViewFollowsTip(t *testing.T) {
	ctx := workspacetest.Ctx(t)
	w := workspacetest.NewWorld(t)
	dir := w.NewRepo(t, "repo")
	a := workspacetest.Open(t, dir, w.Home("a"))
	if _, err := a.View(); !errors.Is(err, gitstore.ErrNotInitialized) {
		t.Fatalf("View before init: %v, want ErrNotInitialized", err)
	}
	if _, err := a.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	a.Record(t, workspacetest.Say("first"))
	v1, err := a.View()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.View(); err != nil || again != v1 {
		t.Fatalf("View at an unchanged tip made a new view (%v)", err)
	}
	check := func(who string, wantTip string, wantCount int, hash string) {
		t.Helper()
		v, err := a.View()
		if err != nil {
			t.Fatal(err)
		}
		if v.Commit.String() != wantTip {
			t.Fatalf("%s: View at %s, tip is %s", who, v.Commit, wantTip)
		}
		st, err := checkpoints.ReadStatus(ctx, a.Workspace)
		if err != nil {
			t.Fatal(err)
		}
		if st.Tip != wantTip || st.Checkpoints != wantCount {
			t.Fatalf("%s: status tip %s with %d checkpoints, want %s with %d", who, st.Tip, st.Checkpoints, wantTip, wantCount)
		}
		if _, raw, err := checkpoints.Show(ctx, a.Workspace, hash[:12]); err != nil || len(raw) == 0 {
			t.Fatalf("%s: show %s: %v", who, hash[:12], err)
		}
	}
	second := a.Record(t, workspacetest.Say("second"))
	check("same workspace", a.MustTip(t), 2, second)

	b := workspacetest.Open(t, dir, w.Home("a"))
	third := b.Record(t, workspacetest.Say("third"))
	check("other workspace", b.MustTip(t), 3, third)
}
