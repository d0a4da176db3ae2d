package app

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
)

// registerRoutes registers every route of the API (handlers.API.Routes)
// behind the middleware of handler, under the API root.
func (s *Server) registerRoutes(f *fiber.App) {
	s.routes = s.api.Routes()
	root := s.cfg.APIRoot()
	for _, rt := range s.routes {
		h := s.handler(rt)
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
	f.Options(root+"/*", s.options)
	f.Options(root, s.options)
}

// digitsOnly makes :id match digits only, as WordPress's (?P<id>\d+) does:
// any other id is "no route" (reference 2.1).
func digitsOnly(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Params("id")
		if id == "" || strings.Trim(id, "0123456789") != "" || len(id) > 18 {
			return apierr.NoRoute()
		}
		return h(c)
	}
}

// options answers OPTIONS with the methods of the matched path.
func (s *Server) options(c *fiber.Ctx) error {
	rel := strings.TrimPrefix(c.Path(), s.cfg.APIRoot())
	var methods []string
	for _, rt := range s.routes {
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
