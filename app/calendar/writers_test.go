package calendar_test

import (
	"go/ast"
	"go/types"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"

	"golang.org/x/tools/go/packages"
)

// repositoryPath is the package of the store's interface.
const repositoryPath = "github.com/calendar/eventcal/repository"

// writerHomes are the packages (and those below them) that may call the
// store's write methods: the calendar's services, the stores, and the
// background work of sync (index marks, webhooks' delivery state,
// scheduled publishing, the recurrence horizon), which writes its own
// bookkeeping.
var writerHomes = []string{
	"github.com/calendar/eventcal/app/calendar",
	repositoryPath,
	"github.com/calendar/eventcal/sync",
}

// allowedWriters are the remaining callers of a store write method outside
// writerHomes, as "package.Function: Method", each with its reason. A new
// caller fails TestEveryWriterGoesThroughTheCalendar: write through the
// calendar's services (app/calendar) instead, or add it here with a
// reason. An entry that no longer calls fails it too.
var allowedWriters = map[string]string{
	"github.com/calendar/eventcal/bench.storeSeed: CreateRecord": "the benchmark seeds a store at scale to measure the store and the index, " +
		"not the calendar's checks (its records are generated valid)",
	"github.com/calendar/eventcal/bench.runMeiliSim: CreateRecord": "the benchmark seeds a store at scale to measure the Meilisearch sync, " +
		"not the calendar's checks (its records are generated valid)",
}

// ownStores are packages outside writerHomes that keep records of their
// own, which the calendar does not hold, in a store interface of their
// own: they may call that interface's write methods (and no other store
// write). Their other writes (events, venues, organizers, labels) are
// checked like everyone's.
var ownStores = map[string]struct{ iface, reason string }{
	"github.com/calendar/eventcal/app/sources": {"SourceStore", "the sources service and the source runner keep the " +
		"sources, their runs and the runs' claims; every event a run imports is written through the calendar"},
}

// writeMethods are the store methods that write: Create*, Update*,
// Delete*, and UnlinkRecord and RevokeToken.
func writeMethods(store *types.Interface) []string {
	var out []string
	for m := range store.Methods() {
		name := m.Name()
		if strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Update") || strings.HasPrefix(name, "Delete") ||
			name == "UnlinkRecord" || name == "RevokeToken" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryWriterGoesThroughTheCalendar type-checks the module's
// packages (not their tests) and lists every call of a store write method
// (writeMethods of repository.Store) outside writerHomes: on a value of
// the store's interface, or of any type with every method of it (a store
// engine). Each must be in allowedWriters, and every entry there must
// still be a caller: so "every writer goes through the calendar's
// services" stays true, and its exceptions stay named.
func TestEveryWriterGoesThroughTheCalendar(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir: testsupport.ModuleRoot(t)}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var storeIface *types.Interface
	for _, p := range pkgs {
		if p.PkgPath == repositoryPath {
			storeIface = p.Types.Scope().Lookup("Store").Type().Underlying().(*types.Interface)
		}
	}
	if storeIface == nil {
		t.Fatal("repository.Store not found")
	}
	writes := writeMethods(storeIface)
	if len(writes) < 10 || !slices.Contains(writes, "CreateRecord") || !slices.Contains(writes, "DeleteWebhook") {
		t.Fatalf("write methods %v: the store's interface is not what this test expects", writes)
	}
	var storeNames []string
	for m := range storeIface.Methods() {
		storeNames = append(storeNames, m.Name())
	}
	// storeLike reports whether typ has every method of the store.
	storeLike := func(typ types.Type) bool {
		ms := types.NewMethodSet(typ)
		if _, isPtr := typ.(*types.Pointer); !isPtr && !types.IsInterface(typ) {
			ms = types.NewMethodSet(types.NewPointer(typ))
		}
		for _, name := range storeNames {
			if ms.Lookup(nil, name) == nil {
				return false
			}
		}
		return true
	}
	// own lists, per package of ownStores, the methods it may call.
	own := map[string][]string{}
	for path, o := range ownStores {
		for _, p := range pkgs {
			if p.PkgPath != repositoryPath {
				continue
			}
			obj := p.Types.Scope().Lookup(o.iface)
			if obj == nil {
				t.Fatalf("ownStores: repository.%s not found", o.iface)
			}
			for m := range obj.Type().Underlying().(*types.Interface).Methods() {
				own[path] = append(own[path], m.Name())
			}
		}
	}
	scanned := map[string]bool{}
	found := map[string]string{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		if slices.ContainsFunc(writerHomes, func(h string) bool { return p.PkgPath == h || strings.HasPrefix(p.PkgPath, h+"/") }) {
			continue
		}
		scanned[p.PkgPath] = true
		for _, f := range p.Syntax {
			var fn string
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					fn = n.Name.Name
					if n.Recv != nil && len(n.Recv.List) == 1 {
						fn = recvName(n.Recv.List[0].Type) + "." + fn
					}
				case *ast.SelectorExpr:
					sel := p.TypesInfo.Selections[n]
					if sel == nil || sel.Kind() != types.MethodVal || !slices.Contains(writes, n.Sel.Name) {
						return true
					}
					obj := sel.Obj()
					if obj.Pkg() != nil && obj.Pkg().Path() == repositoryPath && slices.Contains(own[p.PkgPath], n.Sel.Name) {
						return true // the package's own records
					}
					if (obj.Pkg() != nil && obj.Pkg().Path() == repositoryPath) || storeLike(sel.Recv()) {
						key := p.PkgPath + "." + fn + ": " + n.Sel.Name
						found[key] = p.Fset.Position(n.Pos()).String()
					}
				}
				return true
			})
		}
	}
	for path := range ownStores {
		if !scanned[path] {
			t.Errorf("ownStores names %s, which this test did not scan (gone, or inside writerHomes)", path)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(found)) {
		if _, ok := allowedWriters[key]; !ok {
			t.Errorf("%s (%s) writes to the store directly: write through the calendar's services, or allow it in allowedWriters with a reason", key, found[key])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(allowedWriters)) {
		if _, ok := found[key]; !ok {
			t.Errorf("allowedWriters names %s, which no longer calls the store: remove it", key)
		}
	}
}

// recvName is the type name of a method's receiver ("T" for *T, T[K]).
func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
