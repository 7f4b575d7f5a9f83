package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startCostly are the calls that build something at package init that is
// worth building only when used (issue 18, "Fast start"): every command,
// `git ctx version` too, pays for the package-level initialisers of every
// package linked into the binary.
var startCostly = map[string]bool{
	"regexp.MustCompile": true, "regexp.Compile": true, "regexp.MustCompilePOSIX": true,
	"template.Must": true, "template.New": true,
}

// TestNoCompileAtInit: no package linked into cmd/git-ctx compiles a
// regexp or a template in a package-level initialiser or an init function
// (use sync.OnceValue, or compile inside the function that needs it). A
// function literal that is stored (sync.OnceValue(func…)) runs later and
// is allowed; one called in place runs at init and is checked.
func TestNoCompileAtInit(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "sqlite_fts5", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles \"|\"}}{{end}}{{end}}", "./cmd/git-ctx")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < 2 {
			continue
		}
		for _, name := range parts[1:] {
			path := filepath.Join(parts[0], name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, pos := range compilesAtInit(f) {
				t.Errorf("%s: compiled at package init; make it lazy (sync.OnceValue)", fset.Position(pos))
			}
		}
	}
	if files < 50 {
		t.Fatalf("only %d files of cmd/git-ctx's packages found", files)
	}
}

// compilesAtInit returns where f calls a startCostly function while its
// package initialises: in a package-level var's value or in func init.
func compilesAtInit(f *ast.File) []token.Pos {
	var found []token.Pos
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // stored for later; a literal called in place is walked below
		case *ast.CallExpr:
			if lit, ok := n.Fun.(*ast.FuncLit); ok {
				ast.Inspect(lit.Body, visit)
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && startCostly[pkg.Name+"."+sel.Sel.Name] {
					found = append(found, n.Pos())
				}
			}
		}
		return true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					ast.Inspect(v, visit)
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" && d.Body != nil {
				ast.Inspect(d.Body, visit)
			}
		}
	}
	return found
}
