//go:build !ctx_lean

package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/internal/checkpoints"
)

// CheckpointArgs are the checkpoint tool's arguments.
type CheckpointArgs struct {
	Summary string   `json:"summary" jsonschema:"the decision and why, in a few lines (secret-shaped text is redacted before it is signed)"`
	Files   []string `json:"files,omitempty" jsonschema:"files the decision is about, relative to the repository's top"`
	Tools   []string `json:"tools,omitempty" jsonschema:"tools used (default: mcp)"`
	Session string   `json:"session,omitempty" jsonschema:"the agent session id (default: $GIT_CTX_SESSION, else git config ctx.session)"`
	Model   string   `json:"model,omitempty" jsonschema:"the model (default: $GIT_CTX_MODEL, else git config ctx.model)"`
}

func addCheckpointTool(s *mcp.Server, st *server) {
	schema := inputSchema[CheckpointArgs](nil, map[string]int{"files": checkpoints.MaxFiles, "tools": checkpoints.MaxTools})
	if p := schema.Properties["summary"]; p != nil {
		one, max := 1, checkpoints.MaxSummary
		p.MinLength, p.MaxLength = &one, &max
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "checkpoint",
		Description: "Record a decision in the team's memory: a checkpoint signed as this device and appended to its chain " +
			"on ghyll/memory (shared with the next git ctx push). The only tool that writes.",
		InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a CheckpointArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.checkpoint(ctx, a) })
	})
}

func (st *server) checkpoint(ctx context.Context, a CheckpointArgs) (string, error) {
	if strings.TrimSpace(a.Summary) == "" {
		return "", fmt.Errorf("%w: summary is empty", ErrArgument)
	}
	tools := a.Tools
	if len(tools) == 0 {
		tools = []string{"mcp"}
	}
	cp, err := checkpoints.Record(ctx, st.w, checkpoints.RecordInput{Summary: a.Summary, Files: a.Files, Tools: tools,
		Session: a.Session, Model: a.Model})
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Recorded checkpoint %s (device %s, session %s, turn %d), signed as this device.\n", cp.Hash, cp.DeviceID, orDash(cp.SessionID), cp.Turn)
	if len(cp.InjectionSig) > 0 {
		msg += fmt.Sprintf("It records the %d item(s) this session's briefing showed you (injections).\n", len(cp.InjectionSig))
	}
	return msg, nil
}
