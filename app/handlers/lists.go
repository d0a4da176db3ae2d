package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/gofiber/fiber/v2"
)

// lister reads and renders the pages of the list routes (GET /events,
// /venues, /organizers, the occurrence list and the feeds) for one
// request: the list arguments, the reader's visibility (access.Reader),
// the language and the renderer, with no reference to the whole API.
type lister struct {
	ctx    context.Context
	c      *fiber.Ctx
	bag    *input.Bag
	lang   string
	reader access.Reader
	cfg    *config.Config
	now    time.Time
	render *present.Renderer
	// termIDs are the categories and tags the list validators resolved.
	termIDs map[repository.LabelKind][]int64
}

// newLister returns the lister of a request.
func newLister(r *Request) lister {
	return lister{ctx: r.ctx, c: r.c, bag: r.bag, lang: r.lang, reader: r.reader, cfg: r.s.cfg, now: r.s.now(),
		render: r.s.render, termIDs: r.termIDs}
}

// listPage reads page and per_page (clamped to 50).
func listPage(b *input.Bag) (page, perPage int) {
	p, _ := input.AsInt(b.Values["page"])
	pp, _ := input.AsInt(b.Values["per_page"])
	return int(p), int(min(pp, maxPerPage))
}

// namedStatuses returns the statuses a request named (status=...), nil
// when it named none (access.Reader.ListStatuses then decides).
func namedStatuses(b *input.Bag) []string {
	v, ok := b.Get("status")
	if !ok {
		return nil
	}
	return input.AsStrings(v)
}

// eventQuery turns the request into an engine query: the original plugin's
// filters and date semantics, with the differences of docs/decisions.md
// ("Reads").
func (lr lister) eventQuery() (search.EventQuery, error) {
	b := lr.bag
	q := search.EventQuery{Lang: lr.lang, Statuses: lr.reader.ListStatuses(), ExcludeHidden: true, Sort: search.ByStart}
	loc := lr.cfg.Location
	now := lr.now
	strict := input.Truthy(b.Values["strict_dates"])
	bound := func(name string, startOfDay bool) (int64, bool, error) {
		d, ok := b.Decoded(name)
		if !ok {
			return 0, false, nil
		}
		// Read once in the site zone by the route's declared parameter
		// (readDate): its instant there, not a second parse.
		t, err := d.(datetext.Value).In(loc)
		if err != nil {
			return 0, false, err
		}
		if !strict {
			if startOfDay {
				t = values.Midnight(t)
			} else {
				t = values.EndOfDay(t)
			}
		}
		return t.Unix(), true, nil
	}
	if v, ok := b.Get("include"); ok {
		// include keeps the start-date order of every event list (the
		// original's live answers do, although its code suggests the
		// publish date).
		q.IDs, _ = input.AsIntList(v)
	} else {
		relative := b.Has("starts_before") || b.Has("starts_after") || b.Has("ends_before") || b.Has("ends_after")
		explicit := b.Has("start_date") || b.Has("end_date")
		if v, ok, err := bound("start_date", true); err != nil {
			return q, err
		} else if ok {
			q.StartGTE = search.Some(v)
		} else if !relative || explicit {
			q.StartGTE = search.Some(values.Midnight(now.In(loc)).Unix())
		}
		if v, ok, err := bound("end_date", false); err != nil {
			return q, err
		} else if ok {
			q.EndLTE = search.Some(v)
		} else if !relative || explicit {
			q.EndLTE = search.Some(values.EndOfDay(now.In(loc).AddDate(2, 0, 0)).Unix())
		}
		for _, x := range []struct {
			name string
			dst  *search.Opt[int64]
		}{{"starts_before", &q.StartLT}, {"starts_after", &q.StartGT}, {"ends_before", &q.EndLT}, {"ends_after", &q.EndGT}} {
			v, ok, err := bound(x.name, false)
			if err != nil {
				return q, err
			}
			if ok {
				*x.dst = search.Some(v)
			}
		}
	}
	if v, ok := b.Get("search"); ok {
		q.Query, _ = input.AsString(v)
		if lr.reader.User == nil {
			// Protected text must not be probed word by word (a deliberate
			// difference: docs/decisions.md, "Reads").
			q.ExcludeProtected = true
		}
	}
	// The validators resolved categories and tags (existingTermRefs).
	q.CategoryIDs = lr.termIDs[repository.LabelCategory]
	q.TagIDs = lr.termIDs[repository.LabelTag]
	if v, ok := b.Get("venue"); ok {
		q.VenueIDs, _ = input.AsIntList(v)
	}
	if v, ok := b.Get("organizer"); ok {
		q.OrganizerIDs, _ = input.AsIntList(v)
	}
	for name, dst := range map[string]*search.Opt[bool]{"featured": &q.Featured, "ticketed": &q.Ticketed, "geoloc": &q.HasGeo} {
		if v, ok := b.Get(name); ok {
			bv, _ := input.AsBool(v)
			*dst = search.Some(bv)
		}
	}
	_, hasLat := b.Get("geoloc_lat")
	_, hasLng := b.Get("geoloc_lng")
	switch {
	case hasLat && hasLng:
		lat, _ := input.AsFloat(b.Values["geoloc_lat"])
		lng, _ := input.AsFloat(b.Values["geoloc_lng"])
		radius, _ := input.AsFloat(b.Values["geoloc_radius"])
		radius = min(radius, limits.MaxRadiusKm)
		q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: lng}, RadiusKm: radius})
	case hasLat:
		return q, apierr.InvalidParam("geoloc_lng", "geoloc_lng is required with geoloc_lat.")
	case hasLng:
		return q, apierr.InvalidParam("geoloc_lat", "geoloc_lat is required with geoloc_lng.")
	}
	if v, ok := b.Get("post_parent"); ok {
		id, _ := input.AsInt(v)
		q.ParentID = search.Some(id)
	}
	if v, ok := b.Get("event_status"); ok {
		q.EventStatuses = append(q.EventStatuses, input.AsStrings(v)...)
	}
	applyCollapseSeries(b, &q)
	return q, nil
}

// listEvents serves GET /events from the search index (as an iCalendar
// feed when the client prefers text/calendar).
func (pt *events) listEvents(r *Request) error {
	if wantsCalendar(r.c) {
		return pt.listEventFeed(r)
	}
	page, perPage := listPage(r.bag)
	lr := newLister(r)
	var items []any
	q, res, err := pt.eventPage(lr, page, perPage, func(_ *repository.Record, o *present.Event) { items = append(items, o) })
	if err != nil {
		return err
	}
	if items == nil {
		items = []any{}
	}
	facets, err := pt.eventFacets(lr, q, res)
	if err != nil {
		return err
	}
	l := present.NewList("events", items, lr.paging("events", page, perPage, res.Total))
	if facets != nil {
		l.Facets = present.Facets(facets)
	}
	return present.SendList(r.c, l)
}

// eventPage runs the request's event query (with its text-search
// arguments) for one page and hands each event, rendered for the caller
// (redacted where protected, highlighted when asked), to each in the
// engine's order, with its stored record (the series, for an occurrence).
// A page past the last one is 404. It returns the query (for the facets)
// and the engine's result.
func (pt *events) eventPage(lr lister, page, perPage int, each func(*repository.Record, *present.Event)) (search.EventQuery, search.Result, error) {
	q, err := lr.eventQuery()
	if err != nil {
		return q, search.Result{}, err
	}
	if err := applyTextSearchArgs(lr.bag, &q); err != nil {
		return q, search.Result{}, err
	}
	q.Offset, q.Limit = limits.Offset(int64(page), int64(perPage)), perPage
	listQ := q
	if !facetsFromList(lr.reader, q) {
		listQ.Facets = nil // counted by their own query (eventFacets)
	}
	res, err := pt.searchEvents(lr.ctx, listQ)
	if err != nil {
		return q, res, err
	}
	if len(res.IDs) == 0 && page > 1 {
		return q, res, apierr.New(404, "event-archive-page-not-found", "The requested event archive page does not exist")
	}
	var terms []search.Term
	if input.Truthy(lr.bag.Values["highlight"]) {
		terms = search.ParseQuery(q.Query)
	}
	_, err = lr.renderEventHits(res, func(h eventHit, l *present.Linked) *present.Event {
		o := pt.renderHit(h, l, present.View{Lang: lr.lang})
		if !lr.reader.Unlocks(h.post) {
			present.RedactEvent(o)
		}
		if terms != nil {
			present.AddHighlight(o, terms)
		}
		each(h.series, o)
		return o
	})
	return q, res, err
}

// searchEvents runs an event query, mapping engine failures to 503.
func (pt *events) searchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	if pt.search == nil {
		return search.Result{}, apierr.Unavailable("search")
	}
	if input.SearchMatchesNothing(q.Query) {
		return search.Result{}, nil
	}
	res, err := pt.search.SearchEvents(ctx, q)
	if err != nil {
		pt.log.Warn("search failed", "err", err)
		return res, apierr.Unavailable("search")
	}
	return res, nil
}

// renderPage loads a page of posts (in the engine's order) with what they
// link to and renders each.
func (lr lister) renderPage(ids []int64, render func(*repository.Record, *present.Linked) any) ([]any, error) {
	posts, err := lr.postsInOrder(ids)
	if err != nil {
		return nil, err
	}
	l, err := lr.linked(posts)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(posts))
	for _, p := range posts {
		items = append(items, render(p, l))
	}
	return items, nil
}

// postsInOrder loads posts by ID in the given order, skipping any that
// vanished since the index saw them.
func (lr lister) postsInOrder(ids []int64) ([]*repository.Record, error) {
	m, err := lr.render.Records(lr.ctx, ids) // decoded once per write generation (linkcache.go)
	if err != nil {
		return nil, err
	}
	out := make([]*repository.Record, 0, len(ids))
	for _, id := range ids {
		if p := m[id]; p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// linked fetches what posts link to, as the reader may see it
// (Renderer.LinkedFor).
func (lr lister) linked(posts []*repository.Record) (*present.Linked, error) {
	return lr.render.LinkedFor(lr.ctx, lr.reader.User, posts)
}

// listPlaces serves GET /venues and /organizers from the search index.
func (pt *items) listPlaces() func(r *Request) error {
	kind := search.Venues
	if pt.kind == repository.KindOrganizer {
		kind = search.Organizers
	}
	return func(r *Request) error {
		b := r.bag
		lr := newLister(r)
		q := search.PlaceQuery{Kind: kind, Lang: r.lang, Statuses: r.reader.ListStatuses()}
		if v, ok := b.Get("search"); ok {
			q.Query, _ = input.AsString(v)
		}
		if v, ok := b.Get("event"); ok {
			id, _ := input.AsInt(v)
			ev, err := pt.store.GetRecord(r.ctx, id)
			if err != nil {
				return err
			}
			q.IDs = []int64{}
			if ev.Event != nil {
				if kind == search.Venues {
					q.IDs = append(q.IDs, ev.Event.Venues...)
				} else {
					q.IDs = append(q.IDs, ev.Event.Organizers...)
				}
			}
			if len(q.IDs) == 0 {
				q.IDs = []int64{-1} // the event links nothing: no item matches
			}
		}
		if v, ok := b.Get("has_events"); ok {
			q.HasEvents = search.Some(input.Truthy(v))
		}
		if input.Truthy(b.Values["only_with_upcoming"]) {
			q.UpcomingAfter = search.Some(pt.now().Unix())
			q.UpcomingStatuses = q.Statuses
		}
		page, perPage := listPage(b)
		q.Offset, q.Limit = limits.Offset(int64(page), int64(perPage)), perPage
		if pt.search == nil {
			return apierr.Unavailable("search")
		}
		var res search.Result
		var err error
		if !input.SearchMatchesNothing(q.Query) {
			res, err = pt.search.SearchPlaces(r.ctx, q)
		}
		if err != nil {
			pt.log.Warn("search failed", "err", err)
			return apierr.Unavailable("search")
		}
		if len(res.IDs) == 0 && page > 1 {
			return apierr.New(404, pt.res+"-archive-page-not-found", "The requested "+pt.res+" archive page does not exist")
		}
		items, err := lr.renderPage(res.IDs, func(p *repository.Record, l *present.Linked) any {
			// p is the linked-record cache's record: kept renderings apply.
			return pt.render.LinkedPlace(p, l, present.View{Lang: r.lang}, kind == search.Venues)
		})
		if err != nil {
			return err
		}
		return present.SendList(r.c, present.NewList(pt.collection, items, lr.paging(pt.collection, page, perPage, res.Total)))
	}
}

// paging describes a page of the list at path (below the API root) for
// its envelope and links: the client's parameters are carried over.
func (lr lister) paging(path string, page, perPage, total int) present.Paging {
	sent := map[string]string{}
	for k := range lr.c.Queries() {
		if k == "page" || k == "_method" || k == "password" {
			continue
		}
		name := strings.TrimSuffix(k, "[]")
		if v, ok := lr.bag.Get(name); ok {
			sent[name] = joinValue(v)
		}
	}
	return present.Paging{Page: page, PerPage: perPage, Total: total, Base: lr.render.APIBase(lr.lang) + "/" + path + "/", Sent: sent}
}

// joinValue writes a parameter value back as text (lists joined by commas).
func joinValue(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, 0, len(l))
		for _, x := range l {
			s, _ := input.AsString(x)
			parts = append(parts, s)
		}
		return strings.Join(parts, ",")
	}
	s, _ := input.AsString(v)
	return s
}
