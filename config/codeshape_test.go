package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/calendar/eventcal/config/testsupport"
)

// maxMethods is the most methods one type may declare. A type that needs
// more does more than one thing: declare the methods of each concern on a
// type of its own and compose them (embedding keeps the outer type's
// method set, so the interfaces it implements stay satisfied).
const maxMethods = 30

// methodCounts returns how many methods each type declares in the non-test
// Go files of fsys, keyed "dir.Type" (dir is the package's directory,
// empty at the root). It skips testdata, vendor and hidden directories. A
// receiver is counted on its base type: *T, T[K] and T count on T.
func methodCounts(fsys fs.FS) (map[string]int, error) {
	counts := map[string]int{}
	fset := token.NewFileSet()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
				continue
			}
			name, ok := receiverBase(fd.Recv.List[0].Type)
			if !ok {
				return fmt.Errorf("%s: method %s: unexpected receiver", p, fd.Name.Name)
			}
			dir := path.Dir(p)
			if dir == "." {
				dir = ""
			}
			counts[dir+"."+name]++
		}
		return nil
	})
	return counts, err
}

// receiverBase returns the name of the type a receiver expression names.
func receiverBase(e ast.Expr) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name, true
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		default:
			return "", false
		}
	}
}

// oversized returns the types of counts declaring more than limit
// methods, as "dir.Type: n methods", largest first.
func oversized(counts map[string]int, limit int) []string {
	var out []string
	for k, n := range counts {
		if n > limit {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	for i, k := range out {
		out[i] = fmt.Sprintf("%s: %d methods", k, counts[k])
	}
	return out
}

// TestNoTypeDoesTooMuch: no type of the module declares more than
// maxMethods methods (test files aside).
func TestNoTypeDoesTooMuch(t *testing.T) {
	t.Parallel()
	root := testsupport.ModuleRoot(t)
	counts, err := methodCounts(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if counts["repository/mongo.Store"] == 0 || counts["config.Config"] == 0 {
		t.Fatalf("the walk missed known types: %d types counted", len(counts))
	}
	for _, o := range oversized(counts, maxMethods) {
		t.Errorf("%s (at most %d: split it by concern into types it embeds)", o, maxMethods)
	}
}

// TestMethodCounts pins what methodCounts counts.
func TestMethodCounts(t *testing.T) {
	t.Parallel()
	methods := func(recv string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "func (%s) M%d() {}\n", recv, i)
		}
		return b.String()
	}
	cases := []struct {
		name  string
		files map[string]string
		want  map[string]int
		over  []string
	}{
		{"pointer and value receivers", map[string]string{
			"a/a.go": "package a\ntype T struct{}\n" + methods("t *T", 2) + "func (T) V() {}\nfunc F() {}\n",
		}, map[string]int{"a.T": 3}, nil},
		{"generic receivers", map[string]string{
			"g.go": "package g\ntype P[K any] struct{}\ntype Q[K, V any] struct{}\nfunc (p *P[K]) A() {}\nfunc (q Q[K, V]) B() {}\n",
		}, map[string]int{".P": 1, ".Q": 1}, nil},
		{"one type across files", map[string]string{
			"s/x.go": "package s\ntype S struct{}\n" + methods("s *S", 20),
			"s/y.go": "package s\n" + strings.ReplaceAll(methods("s *S", 11), "M", "N"),
		}, map[string]int{"s.S": 31}, []string{"s.S: 31 methods"}},
		{"same name in two packages", map[string]string{
			"p/a.go": "package p\ntype S struct{}\n" + methods("s *S", 16),
			"q/a.go": "package q\ntype S struct{}\n" + methods("s *S", 16),
		}, map[string]int{"p.S": 16, "q.S": 16}, nil},
		{"exactly the limit", map[string]string{
			"l.go": "package l\ntype L struct{}\n" + methods("l L", 30),
		}, map[string]int{".L": 30}, nil},
		{"tests, testdata and hidden directories skipped", map[string]string{
			"t/a_test.go":           "package t\ntype T struct{}\n" + methods("t *T", 40),
			"testdata/x.go":         "package x\ntype X struct{}\n" + methods("x *X", 40),
			".hidden/h.go":          "package h\ntype H struct{}\n" + methods("h *H", 40),
			"vendor/v/v.go":         "package v\ntype V struct{}\n" + methods("v *V", 40),
			"ok/ok.go":              "package ok\ntype O struct{}\n" + methods("o *O", 1),
			"ok/README.md":          "func (o *O) NotGo() {}\n",
			"ok/testdata/nested.go": "package nested\ntype N struct{}\n" + methods("n *N", 40),
		}, map[string]int{"ok.O": 1}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for name, src := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(src)}
			}
			got, err := methodCounts(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("counts %v, want %v", got, tc.want)
			}
			if over := oversized(got, maxMethods); !slices.Equal(over, tc.over) {
				t.Errorf("oversized %q, want %q", over, tc.over)
			}
		})
	}
}
