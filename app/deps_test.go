package app

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// testOnlyModules are modules only tests need: FerretDB (the MongoDB
// tests' embedded server) and what it brings (gRPC, OpenTelemetry, the
// PostgreSQL, SAP HANA and MySQL drivers, a WebAssembly runtime), and the
// OpenAPI validator of the API tests, and staticcheck (a tool of go.mod,
// run by CI) with what it brings. A cold "go run ." downloads and compiles
// only the modules whose packages the service imports, so none of these
// may be among them.
var testOnlyModules = []string{
	"github.com/FerretDB/",
	"google.golang.org/grpc",
	"go.opentelemetry.io/",
	"github.com/jackc/",
	"github.com/SAP/go-hdb",
	"github.com/go-sql-driver/mysql",
	"github.com/tetratelabs/wazero",
	"github.com/wasilibs/",
	"github.com/getkin/kin-openapi",
	"honnef.co/go/tools",
	"golang.org/x/tools",
	"github.com/BurntSushi/toml",
}

// testOnlyPackages are this module's packages only tests (and their own
// commands) may import: the Meilisearch simulator and the tests' shared
// helpers.
var testOnlyPackages = []string{
	"github.com/calendar/eventcal/search/meili/meilisim",
	"github.com/calendar/eventcal/config/testsupport",
}

// TestServiceBuildLeavesOutTestModules: the service binary's package
// graph (go list -deps github.com/calendar/eventcal, the main package) uses
// no test-only module and none of this module's test-only packages.
func TestServiceBuildLeavesOutTestModules(t *testing.T) {
	t.Parallel()
	goTool := testsupport.GoTool(t)
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "github.com/calendar/eventcal").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	modules := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		modules[m] = true
	}
	if !modules["github.com/gofiber/fiber/v2"] || !modules["github.com/blevesearch/bleve/v2"] {
		t.Fatalf("go list -deps github.com/calendar/eventcal does not look like the service's graph:\n%s", out)
	}
	pkgs, err := exec.Command(goTool, "list", "-deps", "github.com/calendar/eventcal").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, pkgs)
	}
	imported := strings.Fields(string(pkgs))
	if !slices.Contains(imported, "github.com/calendar/eventcal/search/meili") {
		t.Fatalf("go list -deps github.com/calendar/eventcal does not list the Meilisearch engine:\n%s", pkgs)
	}
	for _, p := range imported {
		for _, prefix := range testOnlyPackages {
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				t.Errorf("the service imports the test-only package %s (go list -deps shows it)", p)
			}
		}
	}
	for m := range modules {
		for _, prefix := range testOnlyModules {
			if strings.HasPrefix(m, prefix) {
				t.Errorf("the service imports the test-only module %s (go mod why -m %s)", m, m)
			}
		}
	}
}
