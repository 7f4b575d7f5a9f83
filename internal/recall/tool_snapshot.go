//go:build !ctx_lean

package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/internal/snapshots"
)

// SnapshotRestoreArgs are the snapshot_restore tool's arguments.
type SnapshotRestoreArgs struct {
	Snapshot          string `json:"snapshot,omitempty" jsonschema:"the snapshot id or a unique prefix; empty: the newest verified snapshot of the current branch (else of any branch)"`
	IncludeUnverified bool   `json:"include_unverified,omitempty" jsonschema:"restore a snapshot that failed verification, marked UNVERIFIED"`
	MaxBytes          int    `json:"max_bytes,omitempty" jsonschema:"budget of the result in bytes (default 16384); a cut result says so"`
}

func addSnapshotRestoreTool(s *mcp.Server, st *server) {
	mcp.AddTool(s, &mcp.Tool{
		Name: "snapshot_restore",
		Description: "A context snapshot (lean-ctx) as text: its git anchor, the task, progress, decisions and files touched, " +
			"to resume where it was taken. Reads only: nothing is checked out.",
		InputSchema: inputSchema[SnapshotRestoreArgs](budgetBounds, nil),
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a SnapshotRestoreArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.snapshotRestore(ctx, a) })
	})
}

func (st *server) snapshotRestore(ctx context.Context, a SnapshotRestoreArgs) (string, error) {
	budget, err := budgetOf(a.MaxBytes)
	if err != nil {
		return "", err
	}
	list, err := snapshots.List(ctx, st.w, false)
	if err != nil {
		return "", err
	}
	id := strings.ToLower(strings.TrimSpace(a.Snapshot))
	if id == "" {
		if id = newestSnapshot(list, st.w.Repo.CurrentBranch()); id == "" {
			return "No verified snapshot in this repository.\n", nil
		}
	} else if strings.Trim(id, "0123456789abcdef") != "" || len(id) > 64 {
		return "", fmt.Errorf("%w: snapshot %q is not a hex id prefix", ErrArgument, a.Snapshot)
	}
	res, err := snapshots.Restore(ctx, st.w, id, false, "", false)
	if err != nil {
		return "", err
	}
	s := res.Session
	verified := snapshotVerified(list, s.SnapshotID)
	if !verified && !a.IncludeUnverified {
		return "", fmt.Errorf("%w: snapshot %s failed verification on this machine; set include_unverified to see it, marked UNVERIFIED", ErrArgument, cutText(s.SnapshotID, 12))
	}
	var b strings.Builder
	mark := " (verified)"
	if !verified {
		mark = " UNVERIFIED (failed verification on this machine: do not rely on it)"
	}
	fmt.Fprintf(&b, "snapshot %s%s\ncreated: %s\n", s.SnapshotID, mark, s.CreatedAt)
	fmt.Fprintf(&b, "git:     commit %s on branch %s\n", orDash(deref(s.GitCommit)), orDash(deref(s.GitBranch)))
	if !s.HasSession {
		b.WriteString("The snapshot holds no session.\n")
	} else {
		fmt.Fprintf(&b, "session: %s\ntask:    %s\n", orDash(deref(s.SessionID)), orDash(deref(s.Task)))
		if s.ProgressPct != nil {
			fmt.Fprintf(&b, "progress: %d%%\n", *s.ProgressPct)
		}
		if len(s.Decisions) > 0 {
			b.WriteString("\nDecisions:\n")
			for _, d := range s.Decisions {
				b.WriteString("- " + d + "\n")
			}
		}
		if len(s.FilesTouched) > 0 {
			b.WriteString("\nFiles touched:\n")
			for _, f := range s.FilesTouched {
				b.WriteString("- " + f + "\n")
			}
		}
	}
	t := newBudget(budget)
	t.addCut(b.String())
	return t.String(), nil
}

// newestSnapshot is the id of the newest verified snapshot made on branch,
// else of the newest verified one ("" when there is none). list is newest
// first.
func newestSnapshot(list []snapshots.ListEntry, branch string) string {
	newest := ""
	for _, e := range list {
		if !e.Verified {
			continue
		}
		if branch != "" && e.GitBranch != nil && *e.GitBranch == branch {
			return e.SnapshotID
		}
		if newest == "" {
			newest = e.SnapshotID
		}
	}
	return newest
}

// snapshotVerified: some timeline naming id verified it.
func snapshotVerified(list []snapshots.ListEntry, id string) bool {
	for _, e := range list {
		if e.SnapshotID == id && e.Verified {
			return true
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
