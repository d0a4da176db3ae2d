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
// parameters, as the WordPress REST server describes a namespace.
func (h *docs) namespaceIndex(r *Request) error {
	if ns := strings.Trim(r.bag.Str("namespace"), "/"); ns != h.cfg.APINamespace {
		return apierr.New(404, "rest_invalid_namespace", "The specified namespace could not be found.")
	}
	root := h.cfg.APIRoot()
	index := &present.NamespaceIndex{Namespace: h.cfg.APINamespace, Up: h.cfg.SiteURL + h.cfg.RestRoot + "/"}
	byPath := map[string]*present.RouteDoc{}
	for _, rt := range h.routes() {
		key := root + pathVar.ReplaceAllString(rt.Path, "{$1}")
		entry := byPath[key]
		if entry == nil {
			entry = &present.RouteDoc{Path: key, Namespace: h.cfg.APINamespace, Methods: []string{}}
			if !strings.Contains(rt.Path, ":") {
				entry.Self = h.cfg.SiteURL + key
			}
			byPath[key] = entry
			index.Routes = append(index.Routes, entry)
		}
		entry.Methods = append(entry.Methods, rt.Methods...)
		args := make([]present.ArgDoc, 0, len(rt.args))
		at := map[string]int{} // a name declared twice keeps its first place and its last declaration
		for _, a := range rt.args {
			if i, ok := at[a.Name]; ok {
				args[i] = describeArg(a)
				continue
			}
			at[a.Name] = len(args)
			args = append(args, describeArg(a))
		}
		entry.Endpoints = append(entry.Endpoints, present.EndpointDoc{Methods: rt.Methods, Args: args})
	}
	return present.SendJSON(r.c, fiber.StatusOK, index)
}

// describeArg shows an argument with JSON-schema keywords and required.
func describeArg(a Arg) present.ArgDoc {
	return present.ArgDoc{Name: a.Name, Type: string(a.Type), Format: a.Format, Description: a.Desc, Default: a.Default,
		Enum: a.Enum, Array: a.Type == tArray, ItemsType: string(a.Items), Required: a.Required}
}

// docs serves the namespace index and the interface document, both built
// from the route table.
type docs struct {
	cfg *config.Config
	// version is the document's info.version: the build's version.
	version string
	routes  func() []*Route
}
