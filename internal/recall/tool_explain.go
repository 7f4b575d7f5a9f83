//go:build !ctx_lean

package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/internal/explain"
)

// ExplainArgs are the explain tool's arguments.
type ExplainArgs struct {
	Target            string `json:"target" jsonschema:"a code commit (HEAD, a short hash), a range (main..feature) or a path with an optional line (src/auth.go:42)"`
	IncludeUnverified bool   `json:"include_unverified,omitempty" jsonschema:"also return linked records that failed verification or that a pull refused, marked UNVERIFIED or QUARANTINED"`
	MaxBytes          int    `json:"max_bytes,omitempty" jsonschema:"budget of the result in bytes (default 16384); a cut result says so"`
}

func addExplainTool(s *mcp.Server, st *server) {
	mcp.AddTool(s, &mcp.Tool{
		Name: "explain",
		Description: "Why code changed: for each code commit of a commit, range or path[:line] (through git blame), " +
			"the checkpoints linked to it (the post-commit record naming it and the agent turns before it), with device, session, turn, model, summary, files and tools.",
		InputSchema: inputSchema[ExplainArgs](budgetBounds, nil),
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a ExplainArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.explain(ctx, a) })
	})
}

func (st *server) explain(ctx context.Context, a ExplainArgs) (string, error) {
	budget, err := budgetOf(a.MaxBytes)
	if err != nil {
		return "", err
	}
	target := strings.TrimSpace(a.Target)
	if target == "" || strings.HasPrefix(target, "-") {
		return "", fmt.Errorf("%w: target %q is not a commit, range or path[:line]", ErrArgument, a.Target)
	}
	spec, err := explain.ParseSpec(target)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrArgument, err)
	}
	rep, err := explain.Explain(ctx, st.w, spec)
	if err != nil {
		return "", err
	}
	t := newBudget(budget)
	for _, c := range rep.Commits {
		t.add(explainCommitText(c, a.IncludeUnverified))
	}
	if len(rep.Commits) == 0 {
		t.add(fmt.Sprintf("no code commit matches %s\n", target))
	}
	if rep.Truncated {
		t.add(fmt.Sprintf("[only the first %d commits are explained]\n", explain.MaxCommits))
	}
	return t.String(), nil
}

// explainCommitText is one commit and its linked records; records that
// did not verify are counted but not shown unless asked for.
func explainCommitText(c explain.Commit, unverified bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s %s\n", c.Hash, firstLine(c.Subject, 200))
	hidden := 0
	for _, r := range c.Records {
		if r.Status != explain.StatusVerified && !unverified {
			hidden++
			continue
		}
		mark := "verified"
		switch r.Status {
		case explain.StatusUnverified:
			mark = "UNVERIFIED (failed verification on this machine: do not rely on it)"
		case explain.StatusQuarantined:
			mark = "QUARANTINED (refused by a pull: " + orDash(r.Reason) + ")"
		}
		fmt.Fprintf(&b, "  %s checkpoint %s %s\n    device %s, session %s turn %d, model %s, %s\n",
			r.Kind, r.Hash, mark, r.Device, orDash(r.Session), r.Turn, orDash(r.Model), stamp(r.Timestamp))
		if len(r.Files) > 0 {
			fmt.Fprintf(&b, "    files: %s\n", strings.Join(r.Files, ", "))
		}
		if len(r.Tools) > 0 {
			fmt.Fprintf(&b, "    tools: %s\n", strings.Join(r.Tools, ", "))
		}
		for _, line := range strings.Split(strings.TrimRight(r.Summary, "\n"), "\n") {
			b.WriteString("    | " + line + "\n")
		}
	}
	switch {
	case len(c.Records) == 0:
		b.WriteString("  no memory: no checkpoint is linked to this commit\n")
	case hidden > 0:
		fmt.Fprintf(&b, "  %d linked record(s) did not verify and are not shown; set include_unverified to see them, marked\n", hidden)
	}
	return b.String()
}
