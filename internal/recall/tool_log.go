//go:build !ctx_lean

package recall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/gitexec"
	"github.com/git-ctx/git-ctx/internal/checkpoints"
)

// LogArgs are the log tool's arguments.
type LogArgs struct {
	Commit string `json:"commit,omitempty" jsonschema:"only the records of this commit (a revision or a commit id prefix of at least 4 hex digits)"`
	ListArgs
}

// ListArgs are the filters and bounds the list tools (log, search) share.
type ListArgs struct {
	Device            string `json:"device,omitempty" jsonschema:"only records of this device id"`
	Session           string `json:"session,omitempty" jsonschema:"only records of this agent session id"`
	Branch            string `json:"branch,omitempty" jsonschema:"only records made on this git branch"`
	Since             string `json:"since,omitempty" jsonschema:"only records at or after this date (2026-11-30), RFC 3339 time or age (36h, 7d, 2w)"`
	IncludeUnverified bool   `json:"include_unverified,omitempty" jsonschema:"also return records that failed verification, marked UNVERIFIED"`
	Limit             int    `json:"limit,omitempty" jsonschema:"at most this many records (default 20)"`
	MaxBytes          int    `json:"max_bytes,omitempty" jsonschema:"budget of the result in bytes (default 16384); a cut result says so"`
}

// parse checks the shared arguments: the result's budget, the record
// limit, the earliest time (0: any) and the filter they make.
func (a ListArgs) parse() (budget, limit int, since int64, f recordFilter, err error) {
	if budget, err = budgetOf(a.MaxBytes); err != nil {
		return
	}
	if limit, err = limitOf(a.Limit); err != nil {
		return
	}
	if since, err = parseSince(a.Since, time.Now()); err != nil {
		return
	}
	return budget, limit, since, recordFilter{branch: a.Branch, unverified: a.IncludeUnverified}, nil
}

func addLogTool(s *mcp.Server, st *server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "log",
		Description: "The team's most recent checkpoints, newest first, optionally of one device, session, branch or commit.",
		InputSchema: inputSchema[LogArgs](budgetBounds, nil),
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a LogArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.log(ctx, a) })
	})
}

func (st *server) log(ctx context.Context, a LogArgs) (string, error) {
	budget, limit, since, f, err := a.ListArgs.parse()
	if err != nil {
		return "", err
	}
	if a.Commit != "" {
		if f.commit, err = st.commitID(ctx, a.Commit); err != nil {
			return "", err
		}
	}
	entries, err := recentEntries(ctx, st.w, checkpoints.Filter{Device: a.Device, Session: a.Session, Since: since}, f, limit)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "No records match.\n", nil
	}
	head := fmt.Sprintf("%d record(s), newest first.\n\n", len(entries))
	return listText(head, entries, budget, a.IncludeUnverified), nil
}

// commitID resolves a revision to its full commit id through git; a hex
// prefix git does not know (a teammate's commit not fetched here) is used
// as it is.
func (st *server) commitID(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") || len(rev) > 256 {
		return "", fmt.Errorf("%w: commit %q is not a revision", ErrArgument, rev)
	}
	if out, err := gitexec.Git(ctx, st.w.Repo.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	low := strings.ToLower(rev)
	if len(low) >= 4 && len(low) <= 64 && strings.Trim(low, "0123456789abcdef") == "" {
		return low, nil
	}
	return "", fmt.Errorf("%w: commit %q is not a revision of this repository nor a commit id", ErrArgument, rev)
}
