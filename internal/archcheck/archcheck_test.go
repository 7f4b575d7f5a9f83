package archcheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/git-ctx/git-ctx/"

// layerRow is one row of ARCHITECTURE.md's table: | `pkg` | N | owns |.
var layerRow = regexp.MustCompile("^\\| `([a-z0-9/._-]+)` \\| ([0-9]+) \\|")

func readLayers(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := layerRow.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[2])
			if _, dup := layers[m[1]]; dup {
				t.Errorf("ARCHITECTURE.md names %s twice", m[1])
			}
			layers[m[1]] = n
		}
	}
	if len(layers) < 10 {
		t.Fatalf("ARCHITECTURE.md: only %d layer rows found", len(layers))
	}
	return layers
}

// mayShare reports whether importer may import imported on the same layer.
func mayShare(importer, imported string) bool {
	group := func(p string) string { return strings.SplitN(p, "/", 2)[0] }
	return group(importer) == group(imported) && (group(importer) == "formats" || group(importer) == "sessions")
}

// TestLayers: the import graph (non-test imports) follows the table.
func TestLayers(t *testing.T) {
	layers := readLayers(t)
	cmd := exec.Command("go", "list", "-tags", "sqlite_fts5", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		seen[pkg] = true
		lp, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no row in docs/ARCHITECTURE.md's layer table", pkg)
			continue
		}
		checkImports(t, layers, pkg, lp, fields[1:])
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("docs/ARCHITECTURE.md names %s, which is not a package of the module", pkg)
		}
	}
}

func checkImports(t *testing.T, layers map[string]int, pkg string, lp int, imports []string) {
	t.Helper()
	for _, imp := range imports {
		if !strings.HasPrefix(imp, module) {
			continue
		}
		imp = strings.TrimPrefix(imp, module)
		li, ok := layers[imp]
		if !ok || imp == pkg {
			continue // reported as a missing row, or an external test package
		}
		if li >= lp && !(li == lp && mayShare(pkg, imp)) {
			t.Errorf("%s (layer %d) imports %s (layer %d): arrows must point down", pkg, lp, imp, li)
		}
	}
}
