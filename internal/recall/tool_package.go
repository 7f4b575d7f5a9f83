//go:build !ctx_lean

package recall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-ctx/git-ctx/formats/ctxpkg"
	"github.com/git-ctx/git-ctx/internal/ctxpackages"
)

// PackageGetArgs are the package_get tool's arguments.
type PackageGetArgs struct {
	Name              string   `json:"name" jsonschema:"the package: NAME (its highest verified version) or NAME@VERSION"`
	Layers            []string `json:"layers,omitempty" jsonschema:"only these layers (knowledge, graph, session, patterns, gotchas); default all"`
	IncludeUnverified bool     `json:"include_unverified,omitempty" jsonschema:"return a package that failed verification, marked UNVERIFIED"`
	MaxBytes          int      `json:"max_bytes,omitempty" jsonschema:"budget of the result in bytes (default 16384); a cut result says so"`
}

// packageLayers are the layer names a package's content may hold.
var packageLayers = []string{"knowledge", "graph", "session", "patterns", "gotchas"}

func addPackageGetTool(s *mcp.Server, st *server) {
	schema := inputSchema[PackageGetArgs](budgetBounds, map[string]int{"layers": len(packageLayers)})
	if p := schema.Properties["layers"]; p != nil && p.Items != nil {
		for _, l := range packageLayers {
			p.Items.Enum = append(p.Items.Enum, l)
		}
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "package_get",
		Description: "A context package published on the memory branch: its manifest and the JSON of its layers.",
		InputSchema: schema,
		Annotations: readOnly,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a PackageGetArgs) (*mcp.CallToolResult, any, error) {
		return st.run(ctx, func(ctx context.Context) (string, error) { return st.packageGet(ctx, a) })
	})
}

func (st *server) packageGet(ctx context.Context, a PackageGetArgs) (string, error) {
	budget, err := budgetOf(a.MaxBytes)
	if err != nil {
		return "", err
	}
	name, version := ctxpackages.SplitSpec(strings.TrimSpace(a.Name))
	if name == "" {
		return "", fmt.Errorf("%w: name is empty", ErrArgument)
	}
	want := map[string]bool{}
	for _, l := range a.Layers {
		want[l] = true
	}
	list, err := ctxpackages.List(ctx, st.w)
	if err != nil {
		return "", err
	}
	var pick *ctxpackages.Info
	for i := range list {
		p := &list[i]
		if p.Name == name && (version == "" || p.Version == version) && (p.Verified || a.IncludeUnverified && version != "") {
			pick = p // sorted: the highest version comes last
		}
	}
	if pick == nil {
		return "", fmt.Errorf("%w: no verified package %s is published in this repository (an unverified one needs NAME@VERSION and include_unverified)", ErrArgument, a.Name)
	}
	raw, err := pickBytes(st, pick)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if pick.Verified {
		signer := "unsigned"
		if pick.Signed {
			signer = "signed by " + orDash(pick.SignerDevice) + " (key " + pick.Signer + ")"
		}
		fmt.Fprintf(&b, "package %s@%s (verified, %s)\n", pick.Name, pick.Version, signer)
	} else {
		fmt.Fprintf(&b, "package %s@%s UNVERIFIED (%s: do not rely on it)\n", pick.Name, pick.Version, pick.Error)
	}
	fmt.Fprintf(&b, "created: %s\ndescription: %s\nlayers: %s\n", pick.CreatedAt, orDash(pick.Description), strings.Join(pick.Layers, ", "))
	content, err := contentLayers(raw)
	if err != nil {
		return "", err
	}
	t := newBudget(budget)
	t.addCut(b.String())
	for _, l := range packageLayers {
		if (len(want) == 0 || want[l]) && content[l] != nil {
			var ind bytes.Buffer
			if json.Indent(&ind, content[l], "", "  ") != nil {
				ind.Reset()
				ind.Write(content[l])
			}
			t.addCut("\n## layer " + l + "\n" + ind.String() + "\n")
		}
	}
	return t.String(), nil
}

// pickBytes reads the file bytes of the package p from the branch.
func pickBytes(st *server, p *ctxpackages.Info) ([]byte, error) {
	v, err := st.w.View()
	if err != nil {
		return nil, err
	}
	return v.ReadFile(p.Path, ctxpkg.MaxFileSize)
}

// contentLayers returns the members of the package file's "content".
func contentLayers(raw []byte) (map[string]json.RawMessage, error) {
	var file struct {
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("read package content: %w", err)
	}
	return file.Content, nil
}
