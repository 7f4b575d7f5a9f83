package cache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
	"github.com/git-ctx/git-ctx/internal/workspace/workspacetest"
)

// record appends one checkpoint by d and returns its hash.
func record(t *testing.T, d *workspacetest.Dev, in checkpoints.RecordInput) string {
	t.Helper()
	cp, err := checkpoints.Record(context.Background(), d.Workspace, in)
	if err != nil {
		t.Fatalf("Record %q: %v", in.Summary, err)
	}
	return cp.Hash
}

func say(s string, args ...any) checkpoints.RecordInput {
	return checkpoints.RecordInput{Summary: fmt.Sprintf(s, args...)}
}
