//go:build !urfave_cli_no_docs

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/git-ctx.1 is the man page source kept in the tree; it must be what
// the command definitions generate (run with UPDATE_GOLDEN=1 to refresh).
func TestManPageUpToDate(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	page, err := manPage(app)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("..", "..", "docs", "git-ctx.1")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.WriteFile(golden, []byte(page), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, []byte(page)) {
		t.Fatal("docs/git-ctx.1 is stale: run UPDATE_GOLDEN=1 go test ./cmd/git-ctx")
	}
	for _, want := range []string{".TH git-ctx 1", "checkpoint", "EXIT STATUS", "GIT_CTX_HOME"} {
		if !strings.Contains(page, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
}
