//go:build !ctx_lean

package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/cache"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
)

// SearchArgs are the search tool's arguments.
type SearchArgs struct {
	Query string `json:"query" jsonschema:"words to find in summaries, file names and tools (every word must match)"`
	ListArgs
}

func addSearchTool(s *mcp.Server, st *server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "search",
		Description: "Full-text search of the team's checkpoints (decisions, commits, agent turns), best match first.",
		InputSchema: inputSchema[SearchArgs](budgetBounds, nil),
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a SearchArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.search(ctx, a) })
	})
}

func (st *server) search(ctx context.Context, a SearchArgs) (string, error) {
	if strings.TrimSpace(a.Query) == "" {
		return "", fmt.Errorf("%w: query is empty", ErrArgument)
	}
	budget, limit, since, f, err := a.ListArgs.parse()
	if err != nil {
		return "", err
	}
	keep := func(e *cache.Entry) bool {
		return f.keep(e) && (a.Device == "" || e.DeviceID == a.Device) && (a.Session == "" || e.SessionID == a.Session) &&
			(since == 0 || e.Timestamp >= since)
	}
	var out []*cache.Entry
	for batch := limit * 4; ; batch *= 4 {
		hits, err := checkpoints.Search(ctx, st.w, a.Query, batch, "", "")
		if err != nil {
			return "", err
		}
		out = out[:0]
		for _, h := range hits {
			if keep(h.Entry) && len(out) < limit {
				out = append(out, h.Entry)
			}
		}
		if len(out) == limit || len(hits) < batch || batch >= scanCap {
			break
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("No records match %q.\n", a.Query), nil
	}
	head := fmt.Sprintf("%d record(s) match %q, best first.\n\n", len(out), a.Query)
	return listText(head, out, budget, a.IncludeUnverified), nil
}
