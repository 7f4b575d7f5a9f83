package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// leanTags are the shipped git-ctx's build tags (Makefile LEANTAGS).
const leanTags = "sqlite_fts5,urfave_cli_no_docs,ctx_lean"

// TestFloorLinksLeanDependencies: startfloor imports exactly the packages
// of other modules that git-ctx's own packages import in the lean build,
// so the floor moves when the dependencies do.
func TestFloorLinksLeanDependencies(t *testing.T) {
	list := func(format, pkg string, deps bool) []string {
		args := []string{"list", "-tags", leanTags, "-f", format}
		if deps {
			args = append(args, "-deps")
		}
		cmd := exec.Command("go", append(args, pkg)...)
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %v: %v", args, err)
		}
		var pkgs []string
		for _, p := range strings.Fields(string(out)) {
			if strings.Contains(p, ".") && !strings.HasPrefix(p, "github.com/git-ctx/git-ctx") && !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		slices.Sort(pkgs)
		return pkgs
	}
	want := list(`{{if .Module}}{{if .Module.Main}}{{join .Imports " "}}{{end}}{{end}}`, "./cmd/git-ctx", true)
	got := list(`{{join .Imports " "}}`, "./bench/startfloor", false)
	if !slices.Equal(got, want) {
		t.Errorf("startfloor imports\n  %v\nthe lean git-ctx's packages import\n  %v", got, want)
	}
}
