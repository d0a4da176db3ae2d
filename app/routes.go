package app

import (
	"strings"

	"github.com/gofiber/fiber/v2"
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

// registerRoutes declares every route of the API on one screen.
func (s *Server) registerRoutes(f *fiber.App) {
	ev, ve, or := s.postTypes()
	cat, tag := s.termTypes()
	s.routes = []*route{
		{methods: readable, path: "", args: s.indexArgs(), handle: s.namespaceIndex, summary: "The namespace index: every route with its methods and parameters."},
		{methods: readable, path: "/doc", handle: s.serveDoc, summary: "This interface document (OpenAPI 3)."},

		{methods: readable, path: "/events", args: s.eventListArgs(), handle: s.listEvents, summary: "List and search events."},
		{methods: readable, path: "/events.ics", args: s.feedArgs(), handle: s.listEventFeed, summary: "List events as an iCalendar (RFC 5545) feed."},
		{methods: readable, path: "/events/:id.ics", args: s.postReadArgs(ev), handle: s.getEventFeed, summary: "Read an event as an iCalendar (RFC 5545) object."},
		{methods: creatable, path: "/events", args: s.postWriteArgs(ev, true), write: true, handle: s.createPost(ev), summary: "Create an event."},
		{methods: readable, path: "/events/:id", args: s.postReadArgs(ev), handle: s.getPost(ev, byID), summary: "Read an event by ID."},
		{methods: editable, path: "/events/:id", args: s.postWriteArgs(ev, false), write: true, handle: s.updatePost(ev, byID), summary: "Update an event by ID."},
		{methods: deletable, path: "/events/:id", args: s.postDeleteArgs(ev), write: true, handle: s.deletePost(ev, byID), summary: "Trash (or with force, delete) an event by ID."},
		{methods: readable, path: "/events/:id/occurrences", args: s.occurrenceListArgs(), handle: s.listOccurrences, summary: "List the occurrences of a recurring event."},
		{methods: readable, path: "/events/:id/occurrences/:key", args: s.postReadArgs(ev), handle: s.getOccurrence, summary: "Read one occurrence of a recurring event, shaped like an event."},
		{methods: editable, path: "/events/:id/occurrences/:key", args: s.occurrenceWriteArgs(), write: true, handle: s.updateOccurrence, summary: "Change one occurrence of a recurring event only (an override)."},
		{methods: deletable, path: "/events/:id/occurrences/:key", write: true, handle: s.deleteOccurrence, summary: "Cancel one occurrence of a recurring event (an exclusion)."},
		{methods: creatable, path: "/events/:id/occurrences/:key/split", args: s.postWriteArgs(ev, false), write: true, handle: s.splitSeries, summary: "This and following: end the series before the occurrence and start a new series from it with the changes."},
		{methods: readable, path: "/events/by-slug/:slug", args: s.postReadArgs(ev), handle: s.getPost(ev, bySlug), summary: "Read an event by slug."},
		{methods: editable, path: "/events/by-slug/:slug", args: s.postWriteArgs(ev, false), write: true, handle: s.updatePost(ev, bySlug), summary: "Update an event by slug."},
		{methods: deletable, path: "/events/by-slug/:slug", args: s.postDeleteArgs(ev), write: true, handle: s.deletePost(ev, bySlug), summary: "Trash (or with force, delete) an event by slug."},

		{methods: readable, path: "/venues", args: s.placeListArgs(), handle: s.listPlaces(ve), summary: "List and search venues."},
		{methods: creatable, path: "/venues", args: s.postWriteArgs(ve, true), write: true, handle: s.createPost(ve), summary: "Create a venue (or reuse a duplicate)."},
		{methods: readable, path: "/venues/:id", args: s.postReadArgs(ve), handle: s.getPost(ve, byID), summary: "Read a venue by ID."},
		{methods: editable, path: "/venues/:id", args: s.postWriteArgs(ve, false), write: true, handle: s.updatePost(ve, byID), summary: "Update a venue by ID."},
		{methods: deletable, path: "/venues/:id", args: s.postDeleteArgs(ve), write: true, handle: s.deletePost(ve, byID), summary: "Trash (or with force, delete) a venue by ID."},
		{methods: readable, path: "/venues/by-slug/:slug", args: s.postReadArgs(ve), handle: s.getPost(ve, bySlug), summary: "Read a venue by slug."},
		{methods: editable, path: "/venues/by-slug/:slug", args: s.postWriteArgs(ve, false), write: true, handle: s.updatePost(ve, bySlug), summary: "Update a venue by slug."},
		{methods: deletable, path: "/venues/by-slug/:slug", args: s.postDeleteArgs(ve), write: true, handle: s.deletePost(ve, bySlug), summary: "Trash (or with force, delete) a venue by slug."},

		{methods: readable, path: "/organizers", args: s.placeListArgs(), handle: s.listPlaces(or), summary: "List and search organizers."},
		{methods: creatable, path: "/organizers", args: s.postWriteArgs(or, true), write: true, handle: s.createPost(or), summary: "Create an organizer (or reuse a duplicate)."},
		{methods: readable, path: "/organizers/:id", args: s.postReadArgs(or), handle: s.getPost(or, byID), summary: "Read an organizer by ID."},
		{methods: editable, path: "/organizers/:id", args: s.postWriteArgs(or, false), write: true, handle: s.updatePost(or, byID), summary: "Update an organizer by ID."},
		{methods: deletable, path: "/organizers/:id", args: s.postDeleteArgs(or), write: true, handle: s.deletePost(or, byID), summary: "Trash (or with force, delete) an organizer by ID."},
		{methods: readable, path: "/organizers/by-slug/:slug", args: s.postReadArgs(or), handle: s.getPost(or, bySlug), summary: "Read an organizer by slug."},
		{methods: editable, path: "/organizers/by-slug/:slug", args: s.postWriteArgs(or, false), write: true, handle: s.updatePost(or, bySlug), summary: "Update an organizer by slug."},
		{methods: deletable, path: "/organizers/by-slug/:slug", args: s.postDeleteArgs(or), write: true, handle: s.deletePost(or, bySlug), summary: "Trash (or with force, delete) an organizer by slug."},

		{methods: readable, path: "/categories", args: s.termListArgs(cat), handle: s.listTerms(cat), summary: "List event categories."},
		{methods: creatable, path: "/categories", args: s.termWriteArgs(cat, true), write: true, handle: s.createTerm(cat), summary: "Create an event category."},
		{methods: readable, path: "/categories/:id", args: s.termReadArgs(), handle: s.getTerm(cat), summary: "Read an event category."},
		{methods: editable, path: "/categories/:id", args: s.termWriteArgs(cat, false), write: true, handle: s.updateTerm(cat), summary: "Update an event category."},
		{methods: deletable, path: "/categories/:id", args: s.termReadArgs(), write: true, handle: s.deleteTerm(cat), summary: "Delete an event category permanently."},

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

		{methods: readable, path: "/tags", args: s.termListArgs(tag), handle: s.listTerms(tag), summary: "List event tags."},
		{methods: creatable, path: "/tags", args: s.termWriteArgs(tag, true), write: true, handle: s.createTerm(tag), summary: "Create an event tag."},
		{methods: readable, path: "/tags/:id", args: s.termReadArgs(), handle: s.getTerm(tag), summary: "Read an event tag."},
		{methods: editable, path: "/tags/:id", args: s.termWriteArgs(tag, false), write: true, handle: s.updateTerm(tag), summary: "Update an event tag."},
		{methods: deletable, path: "/tags/:id", args: s.termReadArgs(), write: true, handle: s.deleteTerm(tag), summary: "Delete an event tag permanently."},
	}
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

// digitsOnly makes :id match digits only, as WordPress's (?P<id>\d+) does:
// any other id is "no route" (reference 2.1).
func digitsOnly(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Params("id")
		if id == "" || strings.Trim(id, "0123456789") != "" || len(id) > 18 {
			return errNoRoute()
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
		return errNoRoute()
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
