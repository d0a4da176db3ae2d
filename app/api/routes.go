package api

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/handlers"
	"github.com/calendar/eventcal/config"
)

// registerRoutes registers every route of the API (handlers.API.Routes)
// behind the middleware of handler, under the API root, and with
// TEC_COMPAT under The Events Calendar's root too (teccompat.go).
func (s *Server) registerRoutes(f *fiber.App) {
	s.routes = s.api.Routes()
	s.mount(f, s.cfg.APIRoot(), s.api, s.routes)
	if s.compat != nil {
		s.mount(f, config.TECRoot, s.compat, s.compat.Routes())
	}
}

// mount registers the routes of api under root.
func (s *Server) mount(f *fiber.App, root string, api *handlers.API, routes []*handlers.Route) {
	for _, rt := range routes {
		h := s.handlerOf(api, rt)
		if strings.Contains(rt.Path, ":id") {
			h = digitsOnly(h)
		}
		for _, m := range rt.Methods {
			if m == fiber.MethodGet {
				f.Get(root+rt.Path, h) // Fiber also serves HEAD from it
				continue
			}
			f.Add(m, root+rt.Path, h)
		}
	}
	options := s.options(root, routes)
	f.Options(root+"/*", options)
	f.Options(root, options)
}

// digitsOnly makes :id match digits only, as WordPress's (?P<id>\d+) does:
// any other id is 404 rest_no_route, as in WordPress.
func digitsOnly(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Params("id")
		if id == "" || strings.Trim(id, "0123456789") != "" || len(id) > 18 {
			return apierr.NoRoute()
		}
		return h(c)
	}
}

// options answers OPTIONS under root with the methods of the matched path
// among routes (the routes served there: the TEC root has no /sources).
func (s *Server) options(root string, routes []*handlers.Route) fiber.Handler {
	return func(c *fiber.Ctx) error { return optionsAt(c, routes, strings.TrimPrefix(c.Path(), root)) }
}

func optionsAt(c *fiber.Ctx, routes []*handlers.Route, rel string) error {
	var methods []string
	for _, rt := range routes {
		if matchPattern(rt.Path, rel) {
			methods = append(methods, rt.Methods...)
		}
	}
	if len(methods) == 0 {
		return apierr.NoRoute()
	}
	if slices.Contains(methods, fiber.MethodGet) {
		methods = append(methods, fiber.MethodHead)
	}
	c.Set(fiber.HeaderAllow, strings.Join(methods, ", "))
	return c.SendStatus(fiber.StatusNoContent)
}

// matchPattern reports whether a concrete relative path matches a route path.
func matchPattern(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if name, suffix, ok := strings.Cut(p, "."); ok && strings.HasPrefix(p, ":") {
			// ":id.ics": the segment ends in the suffix; the rest is the parameter.
			var cut bool
			if xs[i], cut = strings.CutSuffix(xs[i], "."+suffix); !cut {
				return false
			}
			p = name
		}
		switch {
		case p == ":id":
			if xs[i] == "" || strings.Trim(xs[i], "0123456789") != "" {
				return false
			}
		case strings.HasPrefix(p, ":"):
			if xs[i] == "" {
				return false
			}
		case p != xs[i]:
			return false
		}
	}
	return true
}
