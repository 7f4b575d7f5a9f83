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

// ShowArgs are the show tool's arguments.
type ShowArgs struct {
	Hash              string `json:"hash" jsonschema:"the checkpoint's hash or a unique prefix of it (hex)"`
	IncludeUnverified bool   `json:"include_unverified,omitempty" jsonschema:"show the record even if it failed verification, marked UNVERIFIED"`
	MaxBytes          int    `json:"max_bytes,omitempty" jsonschema:"budget of the result in bytes (default 16384); a cut result says so"`
}

func addShowTool(s *mcp.Server, st *server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "show",
		Description: "One checkpoint in full: who recorded it (device, author), when, on which branch and session, files, tools and the whole summary.",
		InputSchema: inputSchema[ShowArgs](budgetBounds, nil),
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a ShowArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.show(ctx, a) })
	})
}

func (st *server) show(ctx context.Context, a ShowArgs) (string, error) {
	budget, err := budgetOf(a.MaxBytes)
	if err != nil {
		return "", err
	}
	h := strings.ToLower(strings.TrimSpace(a.Hash))
	if h == "" || len(h) > 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: hash %q is not a hex hash prefix", ErrArgument, a.Hash)
	}
	e, _, err := checkpoints.Show(ctx, st.w, h)
	if err != nil {
		return "", err
	}
	if !e.Verified && !a.IncludeUnverified {
		return "", fmt.Errorf("%w: checkpoint %s failed verification on this machine; set include_unverified to see it, marked UNVERIFIED", ErrArgument, e.Hash[:12])
	}
	t := newBudget(budget)
	t.addCut(recordText(e))
	return t.String(), nil
}

// recordText is the whole of one record.
func recordText(e *cache.Entry) string {
	var b strings.Builder
	if e.Verified {
		fmt.Fprintf(&b, "checkpoint %s (verified: signed by device %s, hash chain intact)\n", e.Hash, e.DeviceID)
	} else {
		fmt.Fprintf(&b, "checkpoint %s UNVERIFIED (failed verification on this machine: do not rely on it)\n", e.Hash)
	}
	fmt.Fprintf(&b, "device:  %s\nauthor:  %s\ntime:    %s\nbranch:  %s\nsession: %s turn %d\nmodel:   %s\nparent:  %s\n",
		e.DeviceID, orDash(e.AuthorID), stamp(e.Timestamp), orDash(e.Branch), orDash(e.SessionID), e.Turn, orDash(e.ActiveModel), e.ParentHash)
	if len(e.FilesTouched) > 0 {
		fmt.Fprintf(&b, "files:   %s\n", strings.Join(e.FilesTouched, ", "))
	}
	if len(e.ToolsUsed) > 0 {
		fmt.Fprintf(&b, "tools:   %s\n", strings.Join(e.ToolsUsed, ", "))
	}
	if len(e.InjectionSig) > 0 {
		fmt.Fprintf(&b, "injections: %s\n", strings.Join(e.InjectionSig, ", "))
	}
	b.WriteString("\n" + strings.TrimRight(e.Summary, "\n") + "\n")
	return b.String()
}
