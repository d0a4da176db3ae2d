package calendar

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// TestNoHTTPBelowHandlers: the service layer's dependency closure (go list
// -deps) holds no Fiber package and none of the HTTP layer's packages (the
// request decoding of app/input, the handlers, the API's composition): the
// calendar is called by the handlers, never the other way round, and the
// importer and other writers use it without an HTTP server.
func TestNoHTTPBelowHandlers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(testsupport.GoTool(t), "list", "-deps", "github.com/calendar/eventcal/app/calendar").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/calendar/eventcal/repository") || !slices.Contains(deps, "github.com/calendar/eventcal/app/calendar") {
		t.Fatalf("go list -deps app/calendar does not look like the calendar's graph:\n%s", out)
	}
	forbidden := []string{
		"github.com/calendar/eventcal/app/input",
		"github.com/calendar/eventcal/app/handlers",
		"github.com/calendar/eventcal/app/api",
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/gofiber/") || strings.HasPrefix(p, "github.com/valyala/fasthttp") {
			t.Errorf("app/calendar depends on the HTTP server package %s", p)
		}
		for _, f := range forbidden {
			// app/input/values (the HTTP-free rules for dates and URLs)
			// is allowed; app/input itself and anything under the
			// handlers or the API is not.
			if p == f || (f != "github.com/calendar/eventcal/app/input" && strings.HasPrefix(p, f+"/")) {
				t.Errorf("app/calendar depends on the HTTP layer's package %s", p)
			}
		}
	}
}
