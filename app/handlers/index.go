package handlers

import (
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
)

// indexArgs declares the namespace index's own parameters.
func (h *docs) indexArgs() []Arg {
	return []Arg{
		{Name: "namespace", Type: tString, Default: h.cfg.APINamespace, Desc: "The namespace to describe."},
		{Name: "context", Type: tString, Default: "view", Desc: "Scope under which the request is made."},
	}
}

// pathVar turns Fiber's ":id" into "{id}".
var pathVar = regexp.MustCompile(`:([a-z_]+)`)

// namespaceIndex serves GET /{namespace}: every route with its methods and
// parameters, as the WordPress REST server describes a namespace
// (reference section 1).
func (h *docs) namespaceIndex(r *Request) error {
	if ns := strings.Trim(r.bag.Str("namespace"), "/"); ns != h.cfg.APINamespace {
		return apierr.New(404, "rest_invalid_namespace", "The specified namespace could not be found.")
	}
	root := h.cfg.APIRoot()
	routes := present.NewObj()
	for _, rt := range h.routes() {
		key := root + pathVar.ReplaceAllString(rt.Path, "{$1}")
		entry, ok := routes.At(key).(*present.Obj)
		if !ok {
			entry = present.NewObj().Set("namespace", h.cfg.APINamespace).Set("methods", []string{}).Set("endpoints", []any{})
			if !strings.Contains(rt.Path, ":") {
				entry.Set("_links", present.NewObj().Set("self", []any{present.NewObj().Set("href", h.cfg.SiteURL+key)}))
			}
			routes.Set(key, entry)
		}
		methods, _ := entry.Get("methods")
		entry.Set("methods", append(methods.([]string), rt.Methods...))
		args := present.NewObj()
		for _, a := range rt.args {
			args.Set(a.Name, describeArg(a))
		}
		eps, _ := entry.Get("endpoints")
		entry.Set("endpoints", append(eps.([]any), present.NewObj().Set("methods", rt.Methods).Set("args", args)))
	}
	body := present.NewObj().Set("namespace", h.cfg.APINamespace).Set("routes", routes).
		Set("_links", present.NewObj().Set("up", []any{present.NewObj().Set("href", h.cfg.SiteURL+h.cfg.RestRoot+"/")}))
	return present.SendJSON(r.c, fiber.StatusOK, body)
}

// describeArg shows an argument with JSON-schema keywords and required.
func describeArg(a Arg) *present.Obj {
	o := present.NewObj()
	if a.Type != tAny {
		o.Set("type", string(a.Type))
	}
	if a.Format != "" {
		o.Set("format", a.Format)
	}
	if a.Desc != "" {
		o.Set("description", a.Desc)
	}
	if a.Default != nil {
		o.Set("default", a.Default)
	}
	if len(a.Enum) > 0 {
		o.Set("enum", a.Enum)
	}
	if a.Type == tArray {
		items := present.NewObj()
		if a.Items != tAny {
			items.Set("type", string(a.Items))
		}
		o.Set("items", items)
	}
	o.Set("required", a.Required)
	return o
}

// docs serves the namespace index and the interface document, both built
// from the route table.
type docs struct {
	cfg *config.Config
	// version is the document's info.version: the build's version.
	version string
	routes  func() []*Route
}
