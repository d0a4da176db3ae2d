package app

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
)

// route is one path of the API with the methods it answers and the
// parameters it declares.
type route struct {
	methods []string
	// path is relative to the API root, in Fiber syntax ("/events/:id").
	path string
	args []arg
	// write routes refuse anonymous callers with 401 before validation.
	write  bool
	handle func(r *request) error
	// summary is a one-line description for the index and the docs.
	summary string
}

var (
	readable  = []string{fiber.MethodGet}
	editable  = []string{fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch}
	creatable = []string{fiber.MethodPost}
	deletable = []string{fiber.MethodDelete}
)

// registerRoutes declares every route of the API on one screen. The item
// routes of events, venues and organizers come from itemRoutes (by ID and
// by slug), those of categories and tags from termRoutes.
func (s *Server) registerRoutes(f *fiber.App) {
	ev, ve, or := s.postTypes()
	cat, tag := s.termTypes()
	s.routes = concat(
		[]*route{
			{methods: readable, path: "", args: s.indexArgs(), handle: s.namespaceIndex, summary: "The namespace index: every route with its methods and parameters."},
			{methods: readable, path: "/doc", handle: s.serveDoc, summary: "This interface document (OpenAPI 3)."},

			{methods: readable, path: "/events", args: s.eventListArgs(), handle: s.listEvents, summary: "List and search events."},
			{methods: readable, path: "/events.ics", args: s.feedArgs(), handle: s.listEventFeed, summary: "List events as an iCalendar (RFC 5545) feed."},
			{methods: readable, path: "/events/:id.ics", args: s.postReadArgs(ev), handle: s.getEventFeed, summary: "Read an event as an iCalendar (RFC 5545) object."},
			{methods: creatable, path: "/events", args: s.postWriteArgs(ev, true), write: true, handle: s.createPost(ev), summary: "Create an event."},
		},
		s.itemRoutes(ev, "an event"),
		[]*route{
			{methods: readable, path: "/venues", args: s.placeListArgs(), handle: s.listPlaces(ve), summary: "List and search venues."},
			{methods: creatable, path: "/venues", args: s.postWriteArgs(ve, true), write: true, handle: s.createPost(ve), summary: "Create a venue (or reuse a duplicate)."},
		},
		s.itemRoutes(ve, "a venue"),
		[]*route{
			{methods: readable, path: "/organizers", args: s.placeListArgs(), handle: s.listPlaces(or), summary: "List and search organizers."},
			{methods: creatable, path: "/organizers", args: s.postWriteArgs(or, true), write: true, handle: s.createPost(or), summary: "Create an organizer (or reuse a duplicate)."},
		},
		s.itemRoutes(or, "an organizer"),
		s.termRoutes(cat, "an event category", "event categories"),
		[]*route{
			{methods: creatable, path: "/admin/reindex", handle: s.startReindex, summary: "Start a full rebuild of the search indexes (admin)."},
			{methods: readable, path: "/admin/reindex", handle: s.getReindex, summary: "The current or last rebuild (admin)."},
			{methods: deletable, path: "/admin/reindex", write: true, handle: s.cancelReindex, summary: "Cancel the running rebuild; the live indexes are kept (admin)."},
			{methods: readable, path: "/admin/sync", handle: s.syncStatus, summary: "Sync worker and index figures (admin)."},
			{methods: readable, path: "/admin/webhooks", handle: s.listWebhooks, summary: "List webhook endpoints (admin)."},
			{methods: creatable, path: "/admin/webhooks", args: s.webhookWriteArgs(true), write: true, handle: s.createWebhook, summary: "Register a webhook endpoint (admin); the answer shows its secret once."},
			{methods: readable, path: "/admin/webhooks/:id", handle: s.getWebhook, summary: "Read a webhook endpoint (admin)."},
			{methods: editable, path: "/admin/webhooks/:id", args: s.webhookWriteArgs(false), write: true, handle: s.updateWebhook, summary: "Update a webhook endpoint (admin)."},
			{methods: deletable, path: "/admin/webhooks/:id", write: true, handle: s.deleteWebhook, summary: "Delete a webhook endpoint and its delivery log (admin)."},
			{methods: creatable, path: "/admin/webhooks/:id/ping", write: true, handle: s.pingWebhook, summary: "Send a signed test message to a webhook endpoint now (admin)."},
			{methods: readable, path: "/admin/webhooks/:id/deliveries", args: []arg{{Name: "per_page", Type: tInteger, Default: "50", Check: positiveInt, Desc: "Deliveries to show, newest first (at most 200)."}}, handle: s.webhookDeliveries, summary: "A webhook endpoint's delivery log (admin)."},
			{methods: readable, path: "/admin/users", handle: s.listUsers, summary: "List the users (admin)."},
			{methods: editable, path: "/admin/users/:id", args: s.userArgs(), write: true, handle: s.updateUser, summary: "Give a user another role, or disable or enable it (admin)."},
			{methods: readable, path: "/admin/tokens", args: s.tokenListArgs(), handle: s.listTokens, summary: "List the API tokens, without their secrets (admin)."},
			{methods: creatable, path: "/admin/tokens", args: s.tokenCreateArgs(), write: true, handle: s.createToken, summary: "Create an API token for a user; the secret is shown only in this response (admin)."},
			{methods: deletable, path: "/admin/tokens/:token", write: true, handle: s.revokeToken, summary: "Revoke an API token by its ID, at once on every replica (admin)."},
		},
		s.termRoutes(tag, "an event tag", "event tags"),
	)
	root := s.cfg.APIRoot()
	for _, rt := range s.routes {
		rt.args = append([]arg{languageArg(s)}, rt.args...)
		h := s.handler(rt)
		if strings.Contains(rt.path, ":id") {
			h = digitsOnly(h)
		}
		for _, m := range rt.methods {
			if m == fiber.MethodGet {
				f.Get(root+rt.path, h) // Fiber also serves HEAD from it
				continue
			}
			f.Add(m, root+rt.path, h)
		}
	}
	f.Options(root+"/*", s.options)
	f.Options(root, s.options)
}

// itemRoutes declares the read, update and delete routes of one post type's
// items, once addressed by ID and once by slug: the same handlers, told how
// to find the item. noun is "an event", "a venue"...
func (s *Server) itemRoutes(pt *postType, noun string) []*route {
	var out []*route
	for _, by := range []struct {
		how        lookup
		path, name string
	}{{byID, "/:id", "ID"}, {bySlug, "/by-slug/:slug", "slug"}} {
		p, suffix := "/"+pt.collection+by.path, " by "+by.name+"."
		out = append(out,
			&route{methods: readable, path: p, args: s.postReadArgs(pt), handle: s.getPost(pt, by.how), summary: "Read " + noun + suffix},
			&route{methods: editable, path: p, args: s.postWriteArgs(pt, false), write: true, handle: s.updatePost(pt, by.how), summary: "Update " + noun + suffix},
			&route{methods: deletable, path: p, args: s.postDeleteArgs(pt), write: true, handle: s.deletePost(pt, by.how), summary: "Trash (or with force, delete) " + noun + suffix})
	}
	return out
}

// termRoutes declares the routes of one taxonomy: its list and create, and
// the read, update and delete of one term by ID. noun is "an event
// category"; plural "event categories".
func (s *Server) termRoutes(tt *termType, noun, plural string) []*route {
	list, item := "/"+tt.collection, "/"+tt.collection+"/:id"
	return []*route{
		{methods: readable, path: list, args: s.termListArgs(tt), handle: s.listTerms(tt), summary: "List " + plural + "."},
		{methods: creatable, path: list, args: s.termWriteArgs(tt, true), write: true, handle: s.createTerm(tt), summary: "Create " + noun + "."},
		{methods: readable, path: item, args: s.termReadArgs(), handle: s.getTerm(tt), summary: "Read " + noun + "."},
		{methods: editable, path: item, args: s.termWriteArgs(tt, false), write: true, handle: s.updateTerm(tt), summary: "Update " + noun + "."},
		{methods: deletable, path: item, args: s.termReadArgs(), write: true, handle: s.deleteTerm(tt), summary: "Delete " + noun + " permanently."},
	}
}

// concat joins route groups in order.
func concat(groups ...[]*route) []*route {
	var out []*route
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
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

// languageArg declares multilang_language, accepted on every route.
func languageArg(s *Server) arg {
	return arg{Name: "multilang_language", Type: tString, Enum: s.cfg.Languages,
		Desc: "Language of the returned content (and of written text fields)."}
}

// options answers OPTIONS with the methods of the matched path.
func (s *Server) options(c *fiber.Ctx) error {
	rel := strings.TrimPrefix(c.Path(), s.cfg.APIRoot())
	var methods []string
	for _, rt := range s.routes {
		if matchPattern(rt.path, rel) {
			methods = append(methods, rt.methods...)
		}
	}
	if len(methods) == 0 {
		return apierr.NoRoute()
	}
	if contains(methods, fiber.MethodGet) {
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
