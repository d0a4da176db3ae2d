package present

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyLinkedForFetchesLinks keeps the visibility of linked records in
// one place: fetchLinked (every linked record, whatever its status) is
// called only by LinkedFor, which applies access.SeesLinked. A new output format
// that fetched linked records itself would decide visibility on its own.
func TestOnlyLinkedForFetchesLinks(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "fetchLinked" {
					return true
				}
				calls++
				if fn.Name.Name != "LinkedFor" {
					t.Errorf("%s: %s calls fetchLinked; get linked records from LinkedFor (renderer.go)", fset.Position(sel.Pos()), fn.Name.Name)
				}
				return true
			})
		}
	}
	if calls == 0 {
		t.Fatal("no call of fetchLinked found: the test no longer looks at the right code")
	}
}
