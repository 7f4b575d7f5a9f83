//go:build !ctx_lean

package recall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/internal/fault"
	"github.com/git-ctx/git-ctx/internal/workspace"
)

// Result counts: the default and the most a caller may ask for.
const (
	DefaultLimit = 20
	MaxLimit     = 200
)

// ErrArgument: a tool was called with an argument it cannot use; the
// caller gets it as a tool error (one line), never as a protocol error.
var ErrArgument = fault.Sentinel(fault.Usage, "bad tool argument")

// Options configures the server.
type Options struct {
	Version string       // reported as the server's version
	Logger  *slog.Logger // where the SDK logs (nil: nowhere); never stdout
}

// server holds what every tool needs. Tool calls run one at a time: the
// workspace and its cache handle are not shared between goroutines.
type server struct {
	mu sync.Mutex
	w  *workspace.Workspace
}

// toolAdders registers every tool, one function per tool, each in its own
// file (tool_<name>.go). A new tool is a new file and one line here.
var toolAdders = []func(*mcp.Server, *server){
	addSearchTool,
	addLogTool,
	addShowTool,
	addExplainTool,
	addSnapshotRestoreTool,
	addPackageGetTool,
	addCheckpointTool,
}

// instructions tell the agent what the server is for.
const instructions = "git-ctx: this repository's team memory (ghyll/memory): checkpoints recorded by every device's " +
	"agents and commits, signed and verified per device, context snapshots and context packages. " +
	"Results hold only records that verified on this machine unless include_unverified is set; " +
	"then records that failed verification are marked UNVERIFIED and must not be trusted. " +
	"Use search or log to find what was decided and why, show for one record, explain for why a commit or a line of code changed, snapshot_restore to resume " +
	"a snapshot, package_get for a context package, and checkpoint to record your own decision."

// NewServer returns the MCP server of the memory of w's repository.
func NewServer(w *workspace.Workspace, opt Options) *mcp.Server {
	version := opt.Version
	if version == "" {
		version = "dev"
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "git-ctx", Title: "git-ctx team memory", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger, Capabilities: &mcp.ServerCapabilities{}})
	st := &server{w: w}
	for _, add := range toolAdders {
		add(s, st)
	}
	return s
}

// Serve runs the server over in and out (newline-delimited JSON-RPC, the
// stdio transport) until the client closes in (once every request read
// was answered) or ctx ends.
func Serve(ctx context.Context, w *workspace.Workspace, in io.Reader, out io.Writer, opt Options) error {
	a := newAnswered()
	t := &mcp.IOTransport{Reader: io.NopCloser(answeredReader{a, in}), Writer: answeredWriter{a, out}}
	err := NewServer(w, opt).Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "server is closing") {
		return nil
	}
	return fmt.Errorf("mcp server: %w", err)
}

// bound is a numeric range put into a tool's input schema.
type bound struct{ min, max float64 }

// inputSchema is the schema of In (jsonschema tags as descriptions,
// omitempty fields optional, no other members allowed) with the numeric
// ranges of bounds and the item limits of lists.
func inputSchema[In any](bounds map[string]bound, maxItems map[string]int) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("recall: schema of %T: %v", *new(In), err)) // a programming error, caught by every test
	}
	for name, b := range bounds {
		if p := s.Properties[name]; p != nil {
			lo, hi := b.min, b.max
			p.Minimum, p.Maximum = &lo, &hi
		}
	}
	for name, n := range maxItems {
		if p := s.Properties[name]; p != nil {
			n := n
			p.MaxItems = &n
		}
	}
	return s
}

// budgetBounds are the ranges of max_bytes and limit.
var budgetBounds = map[string]bound{
	"max_bytes": {MinMaxBytes, MaxMaxBytes},
	"limit":     {1, MaxLimit},
}

// run calls fn under the server's lock and turns its text or error into
// the tool's result: an error is a tool error of one line.
func (st *server) run(ctx context.Context, fn func(ctx context.Context) (string, error)) (*mcp.CallToolResult, any, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	text, err := fn(ctx)
	if err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "git-ctx: " + msg}}}
		res.IsError = true
		return res, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// budgetOf checks a max_bytes argument (0 = the default).
func budgetOf(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxBytes, nil
	case n < MinMaxBytes || n > MaxMaxBytes:
		return 0, fmt.Errorf("%w: max_bytes must be between %d and %d", ErrArgument, MinMaxBytes, MaxMaxBytes)
	}
	return n, nil
}

// limitOf checks a limit argument (0 = the default).
func limitOf(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultLimit, nil
	case n < 1 || n > MaxLimit:
		return 0, fmt.Errorf("%w: limit must be between 1 and %d", ErrArgument, MaxLimit)
	}
	return n, nil
}

func boolPtr(b bool) *bool { return &b }

// readOnly marks a tool that changes nothing.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}
