package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/repository"
)

// TestOnlyLinkedForFetchesLinks keeps the visibility of linked records in
// one place: fetchLinked (every linked record, whatever its status) is
// called only by linkedFor, which applies seesLinked. A new output format
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
				if fn.Name.Name != "linkedFor" {
					t.Errorf("%s: %s calls fetchLinked; get linked records from linkedFor (linkrules.go)", fset.Position(sel.Pos()), fn.Name.Name)
				}
				return true
			})
		}
	}
	if calls == 0 {
		t.Fatal("no call of fetchLinked found: the test no longer looks at the right code")
	}
}

// TestSeesLinked pins the rule for every role and status: a linked venue
// or organizer shows to whoever may read it on its own.
func TestSeesLinked(t *testing.T) {
	users := map[string]*repository.User{
		"anonymous":   nil,
		"contributor": {ID: 1, Role: repository.RoleContributor},
		"author":      {ID: 2, Role: repository.RoleAuthor},
		"editor":      {ID: 3, Role: repository.RoleEditor},
		"admin":       {ID: 4, Role: repository.RoleAdmin},
	}
	type rule struct {
		status string
		owner  int64
		sees   string // the readers who see it, space-separated
	}
	rules := []rule{
		{repository.StatusPublish, 3, "anonymous contributor author editor admin"},
		{repository.StatusDraft, 3, "editor admin"},
		{repository.StatusPending, 3, "editor admin"},
		{repository.StatusPrivate, 3, "editor admin"},
		{repository.StatusFuture, 3, "editor admin"},
		{repository.StatusTrash, 3, "editor admin"},
		{repository.StatusDraft, 1, "contributor editor admin"},
		{repository.StatusPending, 1, "contributor editor admin"},
		{repository.StatusPrivate, 2, "author editor admin"},
		{repository.StatusFuture, 2, "author editor admin"},
		{repository.StatusFuture, 1, "editor admin"}, // a contributor may not edit a scheduled post
	}
	for _, kind := range []repository.PostKind{repository.KindVenue, repository.KindOrganizer} {
		for _, r := range rules {
			p := &repository.Post{Kind: kind, Status: r.status, Author: r.owner}
			for name, u := range users {
				want := strings.Contains(" "+r.sees+" ", " "+name+" ")
				if got := access.SeesLinked(u, p); got != want {
					t.Errorf("%s %s of user %d, read by %s: sees %v, want %v", r.status, kind, r.owner, name, got, want)
				}
			}
		}
	}
	img := &repository.Post{Kind: repository.KindImage, Status: repository.StatusDraft}
	if !access.SeesLinked(nil, img) {
		t.Error("images have no visibility of their own here")
	}
}
