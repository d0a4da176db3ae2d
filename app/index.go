package app

import (
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
)

// indexArgs declares the namespace index's own parameters.
func (s *Server) indexArgs() []arg {
	return []arg{
		{Name: "namespace", Type: tString, Default: s.cfg.APINamespace, Desc: "The namespace to describe."},
		{Name: "context", Type: tString, Default: "view", Desc: "Scope under which the request is made."},
	}
}

// pathVar turns Fiber's ":id" into "{id}".
var pathVar = regexp.MustCompile(`:([a-z_]+)`)

// namespaceIndex serves GET /{namespace}: every route with its methods and
// parameters, as the WordPress REST server describes a namespace
// (reference section 1).
func (s *Server) namespaceIndex(r *request) error {
	if ns := strings.Trim(r.bag.str("namespace"), "/"); ns != s.cfg.APINamespace {
		return apierr.New(404, "rest_invalid_namespace", "The specified namespace could not be found.")
	}
	root := s.cfg.APIRoot()
	routes := newObj()
	for _, rt := range s.routes {
		key := root + pathVar.ReplaceAllString(rt.path, "{$1}")
		entry, ok := routes.at(key).(*obj)
		if !ok {
			entry = newObj().set("namespace", s.cfg.APINamespace).set("methods", []string{}).set("endpoints", []any{})
			if !strings.Contains(rt.path, ":") {
				entry.set("_links", newObj().set("self", []any{newObj().set("href", s.cfg.SiteURL+key)}))
			}
			routes.set(key, entry)
		}
		methods, _ := entry.get("methods")
		entry.set("methods", append(methods.([]string), rt.methods...))
		args := newObj()
		for _, a := range rt.args {
			args.set(a.Name, describeArg(a))
		}
		eps, _ := entry.get("endpoints")
		entry.set("endpoints", append(eps.([]any), newObj().set("methods", rt.methods).set("args", args)))
	}
	body := newObj().set("namespace", s.cfg.APINamespace).set("routes", routes).
		set("_links", newObj().set("up", []any{newObj().set("href", s.cfg.SiteURL+s.cfg.RestRoot+"/")}))
	return sendJSON(r.c, fiber.StatusOK, body)
}

// describeArg shows an argument with JSON-schema keywords and required.
func describeArg(a arg) *obj {
	o := newObj()
	if a.Type != tAny {
		o.set("type", string(a.Type))
	}
	if a.Format != "" {
		o.set("format", a.Format)
	}
	if a.Desc != "" {
		o.set("description", a.Desc)
	}
	if a.Default != nil {
		o.set("default", a.Default)
	}
	if len(a.Enum) > 0 {
		o.set("enum", a.Enum)
	}
	if a.Type == tArray {
		items := newObj()
		if a.Items != tAny {
			items.set("type", string(a.Items))
		}
		o.set("items", items)
	}
	o.set("required", a.Required)
	return o
}
