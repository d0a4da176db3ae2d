package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Route is one path of the API with the methods it answers and the
// parameters it declares.
type Route struct {
	Methods []string
	// Path is relative to the API root, in Fiber syntax ("/events/:id").
	Path string
	args []Arg
	// Write routes refuse anonymous callers with 401 before validation.
	Write bool
	// Allow, when set, names the callers the route serves (the admin
	// routes: admins; the sources: editors and admins). Everyone else is
	// refused from the request's headers alone, 401 when anonymous and
	// 403 otherwise, before the body is read or a parameter is validated,
	// so that nothing a refused caller sends is parsed, checked (a source
	// URL's host lookup) or answered in detail. The handlers check again.
	Allow func(*repository.User) bool
	// Handle serves a prepared request (API.Prepare).
	Handle func(r *Request) error
	// summary is a one-line description for the index and the docs.
	summary string
}

var (
	readable  = []string{fiber.MethodGet}
	editable  = []string{fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch}
	creatable = []string{fiber.MethodPost}
	deletable = []string{fiber.MethodDelete}
)

// Routes declares every route of the API on one screen, each with the
// handler that serves it (one file per resource), and returns them. The
// item routes of events, venues and organizers come from itemRoutes (by ID
// and by slug), those of categories and tags from termRoutes. The root app
// registers them behind its middleware.
func (s *API) Routes() []*Route {
	if s.routes != nil {
		return s.routes
	}
	// The handlers and their files: ev, ve, or (events, venues, organizers):
	// posts.go for the items, occurrences.go for the occurrences of series; writeargs.go and decode.go for what a write
	// sends (the calendar service writes it); listargs.go and lists.go for the
	// lists; feeds.go for the .ics feeds; cat, tag: terms.go; dc:
	// index.go and openapi.go; ad: admin.go and backups.go; wh: webhooks.go; ac:
	// accounts.go; src: sources.go (on the API's own root only).
	ev, ve, or := s.postTypes()
	cat, tag := s.termTypes()
	dc := &docs{cfg: s.cfg, version: s.docVersion(), routes: func() []*Route { return s.routes }}
	ad := &admin{store: s.store, search: s.search, indexer: s.indexer, reindexer: s.reindexer, backups: s.backups, now: s.now}
	wh := &webhooks{cfg: s.cfg, store: s.store, sender: s.webhooks, now: s.now}
	ac := &accounts{store: s.store, now: s.now, adminChanged: s.adminChanged}
	s.routes = concat(
		[]*Route{
			{Methods: readable, Path: "", args: dc.indexArgs(), Handle: dc.namespaceIndex, summary: "The namespace index: every route with its methods and parameters."},
			{Methods: readable, Path: "/doc", Handle: dc.serveDoc, summary: "This interface document (OpenAPI 3)."},

			{Methods: readable, Path: "/events", args: ev.eventListArgs(), Handle: ev.listEvents, summary: "List and search events."},
			{Methods: readable, Path: "/events.ics", args: ev.feedArgs(), Handle: ev.listEventFeed, summary: "List events as an iCalendar (RFC 5545) feed."},
			{Methods: readable, Path: "/events/:id.ics", args: ev.readArgs(), Handle: ev.getEventFeed, summary: "Read an event as an iCalendar (RFC 5545) object."},
			{Methods: creatable, Path: "/events", args: ev.writeArgs(true), Write: true, Handle: ev.post, summary: "Create an event."},
		},
		s.itemRoutes(ev.items, ev.update, "an event"),
		(&occurrences{items: ev.items, ev: ev}).occurrenceRoutes(),
		[]*Route{
			{Methods: readable, Path: "/venues", args: ve.placeListArgs(), Handle: ve.listPlaces(), summary: "List and search venues."},
			{Methods: creatable, Path: "/venues", args: ve.writeArgs(true), Write: true, Handle: ve.post, summary: "Create a venue (or reuse a duplicate)."},
		},
		s.itemRoutes(ve.items, ve.update, "a venue"),
		[]*Route{
			{Methods: readable, Path: "/organizers", args: or.placeListArgs(), Handle: or.listPlaces(), summary: "List and search organizers."},
			{Methods: creatable, Path: "/organizers", args: or.writeArgs(true), Write: true, Handle: or.post, summary: "Create an organizer (or reuse a duplicate)."},
		},
		s.itemRoutes(or.items, or.update, "an organizer"),
		s.termRoutes(cat, "an event category", "event categories"),
		[]*Route{
			{Methods: creatable, Path: "/admin/reindex", Handle: ad.startReindex, summary: "Start a full rebuild of the search indexes (admin)."},
			{Methods: readable, Path: "/admin/reindex", Handle: ad.getReindex, summary: "The current or last rebuild (admin)."},
			{Methods: deletable, Path: "/admin/reindex", Write: true, Handle: ad.cancelReindex, summary: "Cancel the running rebuild; the live indexes are kept (admin)."},
			{Methods: readable, Path: "/admin/sync", Handle: ad.syncStatus, summary: "Sync worker and index figures (admin)."},
			{Methods: creatable, Path: "/admin/backups", Write: true, Handle: ad.createBackup, summary: "Take a checked backup of the embedded store into BACKUP_DIR (admin)."},
			{Methods: readable, Path: "/admin/backups", Handle: ad.listBackups, summary: "List the backups in BACKUP_DIR, newest first (admin)."},
			{Methods: readable, Path: "/admin/webhooks", Handle: wh.listWebhooks, summary: "List webhook endpoints (admin)."},
			{Methods: creatable, Path: "/admin/webhooks", args: wh.webhookWriteArgs(true), Write: true, Handle: wh.createWebhook, summary: "Register a webhook endpoint (admin); the answer shows its secret once."},
			{Methods: readable, Path: "/admin/webhooks/:id", Handle: wh.getWebhook, summary: "Read a webhook endpoint (admin)."},
			{Methods: editable, Path: "/admin/webhooks/:id", args: wh.webhookWriteArgs(false), Write: true, Handle: wh.updateWebhook, summary: "Update a webhook endpoint (admin)."},
			{Methods: deletable, Path: "/admin/webhooks/:id", Write: true, Handle: wh.deleteWebhook, summary: "Delete a webhook endpoint and its delivery log (admin)."},
			{Methods: creatable, Path: "/admin/webhooks/:id/ping", Write: true, Handle: wh.pingWebhook, summary: "Send a signed test message to a webhook endpoint now (admin)."},
			{Methods: readable, Path: "/admin/webhooks/:id/deliveries", args: []Arg{{Name: "per_page", Type: tInteger, Default: "50", Check: positiveInt, Desc: "Deliveries to show, newest first (at most 200)."}}, Handle: wh.webhookDeliveries, summary: "A webhook endpoint's delivery log (admin)."},
			{Methods: readable, Path: "/admin/users", Handle: ac.listUsers, summary: "List the users (admin)."},
			{Methods: editable, Path: "/admin/users/:id", args: ac.userArgs(), Write: true, Handle: ac.updateUser, summary: "Give a user another role, or disable or enable it (admin)."},
			{Methods: readable, Path: "/admin/tokens", args: ac.tokenListArgs(), Handle: ac.listTokens, summary: "List the API tokens, without their secrets (admin)."},
			{Methods: creatable, Path: "/admin/tokens", args: ac.tokenCreateArgs(), Write: true, Handle: ac.createToken, summary: "Create an API token for a user; the secret is shown only in this response (admin)."},
			{Methods: deletable, Path: "/admin/tokens/:token", Write: true, Handle: ac.revokeToken, summary: "Revoke an API token by its ID, at once on every replica (admin)."},
		},
		s.termRoutes(tag, "an event tag", "event tags"),
		s.sourceRoutes(),
	)
	for _, rt := range s.routes {
		rt.args = append([]Arg{languageArg(s)}, rt.args...)
		if strings.HasPrefix(rt.Path, "/admin/") {
			rt.Allow = access.IsAdmin
		}
	}
	return s.routes
}

// itemRoutes declares the read, update and delete routes of one post type's
// items, once addressed by ID and once by slug: the same handlers, told how
// to find the item; update is the resource's update handler. noun is "an
// event", "a venue"...
func (s *API) itemRoutes(pt *items, update func(lookup) func(*Request) error, noun string) []*Route {
	var out []*Route
	for _, by := range []struct {
		how        lookup
		path, name string
	}{{byID, "/:id", "ID"}, {bySlug, "/by-slug/:slug", "slug"}} {
		p, suffix := "/"+pt.collection+by.path, " by "+by.name+"."
		out = append(out,
			&Route{Methods: readable, Path: p, args: pt.readArgs(), Handle: pt.get(by.how), summary: "Read " + noun + suffix},
			&Route{Methods: editable, Path: p, args: pt.writeArgs(false), Write: true, Handle: update(by.how), summary: "Update " + noun + suffix},
			&Route{Methods: deletable, Path: p, args: pt.deleteArgs(), Write: true, Handle: pt.delete(by.how), summary: "Trash (or with force, delete) " + noun + suffix})
	}
	return out
}

// termRoutes declares the routes of one taxonomy: its list and create, and
// the read, update and delete of one term by ID. noun is "an event
// category"; plural "event categories".
func (s *API) termRoutes(tt *terms, noun, plural string) []*Route {
	list, item := "/"+tt.collection, "/"+tt.collection+"/:id"
	return []*Route{
		{Methods: readable, Path: list, args: tt.listArgs(), Handle: tt.list, summary: "List " + plural + "."},
		{Methods: creatable, Path: list, args: tt.writeArgs(true), Write: true, Handle: tt.create, summary: "Create " + noun + "."},
		{Methods: readable, Path: item, args: tt.readArgs(), Handle: tt.get, summary: "Read " + noun + "."},
		{Methods: editable, Path: item, args: tt.writeArgs(false), Write: true, Handle: tt.update, summary: "Update " + noun + "."},
		{Methods: deletable, Path: item, args: tt.readArgs(), Write: true, Handle: tt.delete, summary: "Delete " + noun + " permanently."},
	}
}

// sourceRoutes declares the routes of calendar sources (editors and
// administrators): on the API's own root only, not on The Events
// Calendar's, which has no such resource.
func (s *API) sourceRoutes() []*Route {
	if s.cfg.APIRoot() == config.TECRoot {
		return nil
	}
	src := &sourceHandlers{svc: s.sources, runner: s.sourceRunner, allowPrivate: s.sources.AllowPrivate(), loc: s.cfg.Location, now: s.now}
	routes := []*Route{
		{Methods: readable, Path: "/sources", Handle: src.listSources, summary: "List the calendar sources (editors)."},
		{Methods: creatable, Path: "/sources", args: src.sourceWriteArgs(true), Write: true, Handle: src.createSource, summary: "Register a calendar source: an iCalendar feed or a site running The Events Calendar (editors)."},
		{Methods: readable, Path: "/sources/:id", Handle: src.getSource, summary: "Read a calendar source with its last run (editors)."},
		{Methods: editable, Path: "/sources/:id", args: src.sourceWriteArgs(false), Write: true, Handle: src.updateSource, summary: "Update a calendar source (editors)."},
		{Methods: deletable, Path: "/sources/:id", Write: true, Handle: src.deleteSource, summary: "Delete a calendar source and its runs; the events it imported stay (editors)."},
		{Methods: creatable, Path: "/sources/:id/run", Write: true, Handle: src.runSource, summary: "Run a calendar source now, in the background: 202 with the run (editors)."},
		{Methods: readable, Path: "/sources/:id/runs", args: sourceRunListArgs(), Handle: src.sourceRuns, summary: "A calendar source's runs, newest first (editors)."},
	}
	for _, rt := range routes {
		rt.Allow = sources.CanManage
	}
	return routes
}

// concat joins route groups in order.
func concat(groups ...[]*Route) []*Route {
	var out []*Route
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// languageArg declares multilang_language, accepted on every route.
func languageArg(s *API) Arg {
	return Arg{Name: "multilang_language", Type: tString, Enum: s.cfg.Languages,
		Desc: "Language of the returned content (and of written text fields)."}
}
