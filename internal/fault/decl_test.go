package fault

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEveryErrorHasAKind walks the module's source (every non-test file
// outside formats/, whose packages import nothing of ours: see the package
// doc, and this package) and requires that each exported package-level Err… variable is
// declared with a kind: fault.Sentinel, fault.New or fault.Wrap, or
// fmt.Errorf wrapping (%w) a kinded sentinel of the same package; and that
// each exported …Error type unwraps to a kinded sentinel of its package.
func TestEveryErrorHasAKind(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	pkgs := map[string][]*ast.File{} // directory -> files
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor"),
				rel == "formats", rel == filepath.Join("internal", "fault"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(rel)] = append(pkgs[filepath.Dir(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	var bad []string
	for dir, files := range pkgs {
		kinded, problems := kindedDecls(files)
		checked += len(kinded)
		for _, p := range problems {
			bad = append(bad, dir+": "+p)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	// The walk found the sentinels (a broken walk would pass vacuously).
	if checked < 50 {
		t.Errorf("only %d kinded errors found: the walk missed the source", checked)
	}
}

// kindedDecls checks one package's files: it returns the names of its
// kinded Err… variables and a line per exported error declared without a
// kind.
func kindedDecls(files []*ast.File) (kinded map[string]bool, problems []string) {
	kinded, unkinded := errorVars(files)
	for _, n := range unkinded {
		problems = append(problems, "error variable "+n+" is declared without a fault kind")
	}
	return kinded, append(problems, unkindedTypes(files, kinded)...)
}

// errorVars sorts the exported Err… variables of files into kinded ones
// (fault.Sentinel/New/Wrap, or fmt.Errorf("%w…", a kinded one)) and the
// rest.
func errorVars(files []*ast.File) (kinded map[string]bool, unkinded []string) {
	kinded = map[string]bool{}
	derived := map[string]string{} // Err… = fmt.Errorf("%w…", ErrBase)
	for _, vs := range valueSpecs(files) {
		for i, n := range vs.Names {
			if !strings.HasPrefix(n.Name, "Err") || !n.IsExported() {
				continue
			}
			if i >= len(vs.Values) {
				unkinded = append(unkinded, n.Name+" (no value)")
				continue
			}
			switch fn, args := call(vs.Values[i]); {
			case fn == "fault.Sentinel" || fn == "fault.New" || fn == "fault.Wrap":
				kinded[n.Name] = true
			case fn == "fmt.Errorf" && len(args) > 1 && isIdent(args[1]):
				derived[n.Name] = args[1].(*ast.Ident).Name
			default:
				unkinded = append(unkinded, n.Name)
			}
		}
	}
	for name, base := range derived {
		if kinded[base] {
			kinded[name] = true
		} else {
			unkinded = append(unkinded, name+" (wraps "+base+", which has no kind)")
		}
	}
	return kinded, unkinded
}

// valueSpecs lists the var declarations of files.
func valueSpecs(files []*ast.File) []*ast.ValueSpec {
	var out []*ast.ValueSpec
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					out = append(out, s.(*ast.ValueSpec))
				}
			}
		}
	}
	return out
}

// unkindedTypes: exported …Error types need an Unwrap method returning a
// kinded sentinel (alone or among the errors of Unwrap() []error).
func unkindedTypes(files []*ast.File, kinded map[string]bool) (problems []string) {
	types := map[string]bool{}
	unwraps := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Error") {
						types[ts.Name.Name] = true
					}
				}
			case *ast.FuncDecl:
				if ty, names := unwrapReturns(d); ty != "" {
					unwraps[ty] = append(unwraps[ty], names...)
				}
			}
		}
	}
	for ty := range types {
		ok := false
		for _, n := range unwraps[ty] {
			ok = ok || kinded[n]
		}
		if !ok {
			problems = append(problems, "error type "+ty+" does not unwrap to a kinded sentinel")
		}
	}
	return problems
}

// unwrapReturns: for a one-statement Unwrap method, its receiver type and
// the identifiers it returns (return ErrX, or return []error{…, ErrX}).
func unwrapReturns(d *ast.FuncDecl) (string, []string) {
	if d.Recv == nil || d.Name.Name != "Unwrap" || len(d.Body.List) != 1 {
		return "", nil
	}
	ret, ok := d.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", nil
	}
	results := []ast.Expr{ret.Results[0]}
	if lit, ok := ret.Results[0].(*ast.CompositeLit); ok {
		results = lit.Elts
	}
	var names []string
	for _, r := range results {
		if isIdent(r) {
			names = append(names, r.(*ast.Ident).Name)
		}
	}
	return recvType(d.Recv.List[0].Type), names
}

// call is the "pkg.Func" name and the arguments of a call expression.
func call(e ast.Expr) (string, []ast.Expr) {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return "", nil
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X) {
		return "", nil
	}
	return sel.X.(*ast.Ident).Name + "." + sel.Sel.Name, c.Args
}

func isIdent(e ast.Expr) bool { _, ok := e.(*ast.Ident); return ok }

// recvType is a method receiver's type name (T of *T or T).
func recvType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
