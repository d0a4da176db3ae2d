package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apidocs"
)

// mountDocs serves the API reference page (app/apidocs) at /docs, outside
// the API's roots, showing the interface document of APIRoot (with
// TEC_COMPAT that document lists The Events Calendar's root as a second
// server). When REST_ROOT and API_NAMESPACE put an API root at /docs or
// below it, the API keeps those paths and the page is not served.
func (s *Server) mountDocs(f *fiber.App) {
	for _, root := range s.cfg.APIRoots() {
		if r := strings.ToLower(root); r == apidocs.Path || strings.HasPrefix(r, apidocs.Path+"/") {
			s.log.Warn("the API reference page is not served: the API root is at its path",
				"path", apidocs.Path, "api_root", root)
			return
		}
	}
	apidocs.New(s.cfg.APIRoot() + "/doc").Register(f)
}
