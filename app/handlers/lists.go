package handlers

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// listPage reads page and per_page (clamped to 50).
func (r *Request) listPage() (page, perPage int) {
	p, _ := input.AsInt(r.bag.Values["page"])
	pp, _ := input.AsInt(r.bag.Values["per_page"])
	return int(p), int(min(pp, maxPerPage))
}

// visibleStatuses returns the statuses a list shows: the ones asked for,
// else every non-trashed status for callers who may edit posts, else
// publish (as the original plugin does).
func (r *Request) visibleStatuses() []string {
	if v, ok := r.bag.Get("status"); ok {
		var out []string
		for _, it := range input.AsList(v) {
			s, _ := input.AsString(it)
			out = append(out, s)
		}
		return out
	}
	return access.DefaultStatuses(r.user)
}

// eventQuery turns the request into an engine query: the original plugin's
// filters and date semantics, with the differences of docs/decisions.md
// ("Reads").
func (r *Request) eventQuery() (search.EventQuery, error) {
	b := r.bag
	q := search.EventQuery{Lang: r.lang, Statuses: r.visibleStatuses(), ExcludeHidden: true, Sort: search.ByStart}
	loc := r.s.cfg.Location
	now := r.s.now()
	strict := input.Truthy(b.Values["strict_dates"])
	bound := func(name string, startOfDay bool) (int64, bool, error) {
		v, ok := b.Get(name)
		if !ok {
			return 0, false, nil
		}
		s, _ := input.AsString(v)
		t, err := input.ParseDateInRange(s, loc, now, r.lang)
		if err != nil {
			return 0, false, apierr.InvalidValue(name, input.DateProblem(s, loc, r.s.now(), r.lang), v)
		}
		if !strict {
			if startOfDay {
				t = input.Midnight(t)
			} else {
				t = input.EndOfDay(t)
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
			q.StartGTE = search.Some(input.Midnight(now.In(loc)).Unix())
		}
		if v, ok, err := bound("end_date", false); err != nil {
			return q, err
		} else if ok {
			q.EndLTE = search.Some(v)
		} else if !relative || explicit {
			q.EndLTE = search.Some(input.EndOfDay(now.In(loc).AddDate(2, 0, 0)).Unix())
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
		if r.user == nil {
			// Protected text must not be probed word by word (a deliberate
			// difference: docs/decisions.md, "Reads").
			q.ExcludeProtected = true
		}
	}
	// The validators resolved categories and tags (existingTermRefs).
	q.CategoryIDs = r.termIDs[repository.TaxCategory]
	q.TagIDs = r.termIDs[repository.TaxTag]
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
	r.applyCollapseSeries(&q)
	return q, nil
}

// listEvents serves GET /events from the search index (as an iCalendar
// feed when the client prefers text/calendar).
func (pt *events) listEvents(r *Request) error {
	if wantsCalendar(r.c) {
		return pt.listEventFeed(r)
	}
	page, perPage := r.listPage()
	var items []any
	q, res, err := pt.eventPage(r, page, perPage, func(_ *repository.Post, o *present.Obj) { items = append(items, o) })
	if err != nil {
		return err
	}
	if items == nil {
		items = []any{}
	}
	facets, err := pt.eventFacets(r, q, res)
	if err != nil {
		return err
	}
	if facets != nil {
		return r.sendList("events", items, res.Total, page, perPage, "facets", present.Facets(facets))
	}
	return r.sendList("events", items, res.Total, page, perPage)
}

// eventPage runs the request's event query (with its text-search
// arguments) for one page and hands each event, rendered for the caller
// (redacted where protected, highlighted when asked), to each in the
// engine's order, with its stored record (the series, for an occurrence).
// A page past the last one is 404. It returns the query (for the facets)
// and the engine's result.
func (pt *events) eventPage(r *Request, page, perPage int, each func(*repository.Post, *present.Obj)) (search.EventQuery, search.Result, error) {
	q, err := r.eventQuery()
	if err != nil {
		return q, search.Result{}, err
	}
	if err := r.applyTextSearchArgs(&q); err != nil {
		return q, search.Result{}, err
	}
	q.Offset, q.Limit = limits.Offset(int64(page), int64(perPage)), perPage
	listQ := q
	if !r.facetsFromList(q) {
		listQ.Facets = nil // counted by their own query (eventFacets)
	}
	res, err := pt.searchEvents(r.ctx, listQ)
	if err != nil {
		return q, res, err
	}
	if len(res.IDs) == 0 && page > 1 {
		return q, res, apierr.New(404, "event-archive-page-not-found", "The requested event archive page does not exist")
	}
	var terms []search.Term
	if input.Truthy(r.bag.Values["highlight"]) {
		terms = search.ParseQuery(q.Query)
	}
	_, err = r.renderEventHits(res, func(h eventHit, l *present.Linked) *present.Obj {
		o := pt.renderHit(h, l, present.View{Lang: r.lang})
		if !r.unlocks(h.post) {
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
func (r *Request) renderPage(ids []int64, render func(*repository.Post, *present.Linked) *present.Obj) ([]any, error) {
	posts, err := r.postsInOrder(ids)
	if err != nil {
		return nil, err
	}
	l, err := r.loadLinked(posts)
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
func (r *Request) postsInOrder(ids []int64) ([]*repository.Post, error) {
	m, err := r.s.render.Posts(r.ctx, ids) // decoded once per write generation (linkcache.go)
	if err != nil {
		return nil, err
	}
	out := make([]*repository.Post, 0, len(ids))
	for _, id := range ids {
		if p := m[id]; p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// listPlaces serves GET /venues and /organizers from the search index.
func (pt *items) listPlaces() func(r *Request) error {
	kind := search.Venues
	if pt.kind == repository.KindOrganizer {
		kind = search.Organizers
	}
	return func(r *Request) error {
		b := r.bag
		q := search.PlaceQuery{Kind: kind, Lang: r.lang, Statuses: r.visibleStatuses()}
		if v, ok := b.Get("search"); ok {
			q.Query, _ = input.AsString(v)
		}
		if v, ok := b.Get("event"); ok {
			id, _ := input.AsInt(v)
			ev, err := pt.store.GetPost(r.ctx, id)
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
		page, perPage := r.listPage()
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
		items, err := r.renderPage(res.IDs, func(p *repository.Post, l *present.Linked) *present.Obj {
			// p is the linked-record cache's record: kept renderings apply.
			return pt.render.LinkedPlace(p, l, present.View{Lang: r.lang}, kind == search.Venues)
		})
		if err != nil {
			return err
		}
		return r.sendList(pt.collection, items, res.Total, page, perPage)
	}
}

// sendList writes a list envelope {<key>, rest_url, next_rest_url?,
// previous_rest_url?, total, total_pages} with the paging headers.
// extra holds more (name, value) pairs for the envelope, set last.
func (r *Request) sendList(key string, items []any, total, page, perPage int, extra ...any) error {
	return r.sendListAt(key, key, items, total, page, perPage, extra...)
}

// sendListAt is sendList for a list whose path (below the API root) is
// not its key: /events/{id}/occurrences lists "events".
func (r *Request) sendListAt(path, key string, items []any, total, page, perPage int, extra ...any) error {
	pages := 0
	if total > 0 {
		pages = (total + perPage - 1) / perPage
	}
	base := r.s.render.APIBase(r.lang) + "/" + path + "/"
	o := present.NewObj().Set(key, items)
	o.Set("rest_url", r.pageURL(base, page, true))
	if page < pages {
		o.Set("next_rest_url", r.pageURL(base, page+1, false))
	}
	if page > 1 && page-1 <= pages {
		o.Set("previous_rest_url", r.pageURL(base, page-1, false))
	}
	o.Set("total", total).Set("total_pages", pages)
	for i := 0; i+1 < len(extra); i += 2 {
		o.Set(extra[i].(string), extra[i+1])
	}
	setTotals(r, total, pages)
	setPageLinks(r, o)
	return present.SendJSON(r.c, 200, o)
}

// linkOrder is the order of parameters in the original plugin's list
// links, then
// everything else the client sent, alphabetically.
var linkOrder = []string{"page", "per_page", "start_date", "end_date", "search", "geoloc", "geoloc_lat", "geoloc_lng",
	"geoloc_radius", "status", "post_parent", "include", "starts_before", "starts_after", "ends_before", "ends_after",
	"ticketed", "venue", "organizer", "featured", "categories", "tags", "strict_dates", "event", "has_events",
	"only_with_upcoming", "multilang_language"}

// pageURL builds a list link carrying every parameter the client sent,
// URL-encoded; rest_url keeps page in its place, next/previous put it last
// and omit page 1.
func (r *Request) pageURL(base string, page int, self bool) string {
	sent := map[string]string{}
	for k := range r.c.Queries() {
		if k == "page" || k == "_method" || k == "password" {
			continue
		}
		name := strings.TrimSuffix(k, "[]")
		if v, ok := r.bag.Get(name); ok {
			sent[name] = joinValue(v)
		}
	}
	var parts []string
	add := func(k, v string) { parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v)) }
	if self {
		add("page", strconv.Itoa(page))
	}
	done := map[string]bool{}
	for _, k := range linkOrder {
		if v, ok := sent[k]; ok {
			add(k, v)
			done[k] = true
		}
	}
	var rest []string
	for k := range sent {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		add(k, sent[k])
	}
	if !self && page > 1 {
		add("page", strconv.Itoa(page))
	}
	if len(parts) == 0 {
		return base
	}
	return base + "?" + strings.Join(parts, "&")
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
