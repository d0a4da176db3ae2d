package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// defaultRadiusKm is geoloc_radius's default (decisions.md).
const defaultRadiusKm = 25.0

// pageArgs declares page and per_page.
func pageArgs() []arg {
	return []arg{
		{Name: "page", Type: tInteger, Default: "1", Check: positiveInt, Desc: "Page of results (from 1)."},
		{Name: "per_page", Type: tInteger, Default: "8", Check: positiveInt, Desc: "Results per page; larger values are clamped to 50."},
	}
}

// eventListArgs declares the parameters of GET /events (interface 4.2.1).
func (s *Server) eventListArgs() []arg {
	date := func(name, desc string) arg {
		return arg{Name: name, Type: tString, Check: isTime, Format: "date-time", Desc: desc}
	}
	return append(append(pageArgs(),
		date("start_date", "Events that start on or after this date (default: today 00:00 in the site zone)."),
		date("end_date", "Events that end on or before this date (default: two years after today, 23:59:59)."),
		date("starts_before", "Events starting before this date."),
		date("starts_after", "Events starting after this date."),
		date("ends_before", "Events ending before this date."),
		date("ends_after", "Events ending after this date."),
		arg{Name: "strict_dates", Type: tString, Default: "false", Check: nonEmptyString, Desc: "true: dates apply at the exact times given; otherwise whole days are included."},
		arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must match the title, description or excerpt, accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		arg{Name: "categories", Type: tArray, Items: tString, Check: s.existingTermRefs(repository.TaxCategory), Desc: "Category IDs or slugs (any of them; children included).", MaxItems: limits.MaxListItems},
		arg{Name: "tags", Type: tArray, Items: tString, Check: s.existingTermRefs(repository.TaxTag), Desc: "Tag IDs or slugs (any of them).", MaxItems: limits.MaxListItems},
		arg{Name: "venue", Type: tArray, Items: tInteger, Check: s.existingPosts(repository.KindVenue), Desc: "Venue IDs (any of them).", MaxItems: limits.MaxListItems},
		arg{Name: "organizer", Type: tArray, Items: tInteger, Check: s.existingPosts(repository.KindOrganizer), Desc: "Organizer IDs (any of them).", MaxItems: limits.MaxListItems},
		arg{Name: "featured", Type: tBoolean, Desc: "Only featured (true) or only not featured (false) events."},
		arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
		arg{Name: "geoloc", Type: tBoolean, Desc: "Events whose venue has (true) or lacks (false) a geo point."},
		arg{Name: "geoloc_lat", Type: tNumber, Check: checkLatLng(90), Desc: "Latitude of the centre; needs geoloc_lng."},
		arg{Name: "geoloc_lng", Type: tNumber, Check: checkLatLng(180), Desc: "Longitude of the centre; needs geoloc_lat."},
		arg{Name: "geoloc_radius", Type: tNumber, Default: "25", Check: positiveNumber, Desc: "Radius around the centre in kilometres."},
		arg{Name: "include", Type: tArray, Items: tInteger, Check: positiveIntList, Desc: "Only these event IDs; date filters are ignored.", MaxItems: limits.MaxListItems},
		arg{Name: "post_parent", Type: tInteger, Check: s.existingEvent, Desc: "Children of this event."},
		arg{Name: "ticketed", Type: tBoolean, Desc: "Events with (true) or without (false) tickets."},
		arg{Name: "password", Type: tString, Desc: "Shows protected fields of events with this password."},
		arg{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected fields to callers who may edit the event."},
		collapseSeriesArg(),
	), textSearchArgs()...)
}

// placeListArgs declares the parameters of GET /venues and /organizers.
func (s *Server) placeListArgs() []arg {
	return append(pageArgs(),
		arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must all match one field (name, description, address or contact fields), accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		arg{Name: "event", Type: tInteger, Check: s.existingEvent, Desc: "Items linked to this event."},
		arg{Name: "has_events", Type: tAny, Desc: "Truthy: items with events (not draft or pending); falsy: items without."},
		arg{Name: "only_with_upcoming", Type: tAny, Default: "false", Desc: "Truthy: items with an event starting now or later."},
		arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
	)
}

// positiveNumber accepts a number greater than zero.
func positiveNumber(_ *request, v any) string {
	f, ok := asFloat(v)
	if !ok || f <= 0 {
		return "Must be a number greater than 0."
	}
	return ""
}

// positiveIntList accepts a CSV or list of positive whole numbers.
func positiveIntList(_ *request, v any) string {
	if ids, ok := asIntList(v); !ok || len(ids) == 0 {
		return "Must be one or more IDs (whole numbers of 1 or more), comma-separated or as a list."
	}
	return ""
}

// checkStatusList accepts registered statuses; callers who may not edit
// posts may only ask for exactly publish (reference 4.5).
func checkStatusList(r *request, v any) string {
	items := asList(v)
	statuses := strings.Join(repository.Statuses, ", ")
	if len(items) == 0 {
		return "Must be one or more of " + statuses + "."
	}
	for _, it := range items {
		s, _ := asString(it)
		if !repository.IsStatus(s) {
			return "Must be one or more of " + statuses + "; " + strconv.Quote(s) + " is none of them."
		}
		if !canCreatePosts(r.user) && s != repository.StatusPublish {
			return "Must be publish: only callers who may create events may list other statuses."
		}
	}
	return ""
}

// existingPosts checks a list of IDs of existing posts of a kind.
func (s *Server) existingPosts(kind repository.PostKind) func(r *request, v any) string {
	return func(r *request, v any) string {
		return existingIDs(r, v, string(kind), s.store.GetPosts, func(p *repository.Post) bool { return p.Kind == kind })
	}
}

// existingIDs checks that v is a list of positive IDs of what ("venue")
// that fetch finds and that fits accepts; it returns "" or the message for
// data.params. A store failure is kept in r.depErr (a 503).
func existingIDs[T any](r *request, v any, what string, fetch func(context.Context, []int64) (map[int64]T, error), fits func(T) bool) string {
	if msg := idListProblem(v, what); msg != "" {
		return msg
	}
	ids, _ := asIntList(v)
	found, err := fetch(r.ctx, ids)
	if err != nil {
		r.depErr = err
		return "The store is not available."
	}
	for _, id := range ids {
		x, ok := found[id]
		if !ok || !fits(x) {
			return fmt.Sprintf("There is no %s with ID %d.", what, id)
		}
	}
	return ""
}

// idListProblem says what is wrong with a list of IDs of what, or "":
// an item that is not a whole number of 1 or more is named (a slug or a
// name where an ID is expected).
func idListProblem(v any, what string) string {
	items := asList(v)
	if len(items) == 0 {
		return "Must be one or more " + what + " IDs, comma-separated or as a list."
	}
	for _, it := range items {
		if n, ok := asInt(it); !ok || n <= 0 {
			shown, _ := asString(it)
			if _, scalar := asString(it); !scalar {
				shown = "an object or a list"
			} else {
				shown = strconv.Quote(shown)
			}
			return fmt.Sprintf("Must be %s IDs (whole numbers of 1 or more), not slugs or names: %s is not an ID.", what, shown)
		}
	}
	return ""
}

// existingTermRefs checks that every item names an existing term by ID,
// slug or name.
func (s *Server) existingTermRefs(tax repository.Taxonomy) func(r *request, v any) string {
	return func(r *request, v any) string {
		ids, err := r.resolveTermRefs(tax, v)
		var unknown unknownTermError
		switch {
		case errors.As(err, &unknown):
			what := termNoun(tax)
			if unknown.ref == "" {
				return "Must name one or more " + map[string]string{"category": "categories", "tag": "tags"}[what] + " by ID, slug or name."
			}
			return fmt.Sprintf("There is no %s with the ID, slug or name %s.", what, strconv.Quote(unknown.ref))
		case err != nil:
			r.depErr = err
			return "The store is not available."
		}
		// Keep the IDs: eventQuery filters on them without resolving again.
		if r.termIDs == nil {
			r.termIDs = map[repository.Taxonomy][]int64{}
		}
		r.termIDs[tax] = ids
		return ""
	}
}

// termNoun names one term of a taxonomy in messages.
func termNoun(tax repository.Taxonomy) string {
	if tax == repository.TaxCategory {
		return "category"
	}
	return "tag"
}

// unknownTermError is returned for a term reference that names nothing
// (ref is "" when no reference was given at all).
type unknownTermError struct{ ref string }

func (e unknownTermError) Error() string { return "unknown term " + strconv.Quote(e.ref) }

// resolveTermRefs maps term references (IDs, slugs, names) to IDs.
func (r *request) resolveTermRefs(tax repository.Taxonomy, v any) ([]int64, error) {
	items := asList(v)
	if len(items) == 0 {
		return nil, unknownTermError{}
	}
	var ids []int64
	for _, it := range items {
		sv, _ := asString(it)
		t, err := r.findTerm(tax, sv)
		if err != nil {
			return nil, err
		}
		if t == nil {
			if n, ok := asInt(it); ok {
				if tt, err := r.s.store.GetTerm(r.ctx, n); err == nil && tt.Taxonomy == tax {
					t = tt
				}
			}
		}
		if t == nil {
			return nil, unknownTermError{ref: sv}
		}
		ids = append(ids, t.ID)
	}
	return ids, nil
}

// listPage reads page and per_page (clamped to 50).
func (r *request) listPage() (page, perPage int) {
	p, _ := asInt(r.bag.values["page"])
	pp, _ := asInt(r.bag.values["per_page"])
	return int(p), int(min(pp, maxPerPage))
}

// visibleStatuses returns the statuses a list shows: the ones asked for,
// else every non-trashed status for callers who may edit posts, else
// publish (reference 4.5).
func (r *request) visibleStatuses() []string {
	if v, ok := r.bag.get("status"); ok {
		var out []string
		for _, it := range asList(v) {
			s, _ := asString(it)
			out = append(out, s)
		}
		return out
	}
	if canCreatePosts(r.user) {
		return []string{repository.StatusPublish, repository.StatusFuture, repository.StatusDraft, repository.StatusPending, repository.StatusPrivate}
	}
	return []string{repository.StatusPublish}
}

// eventQuery turns the request into an engine query (reference 4.2-4.5,
// decisions.md "Reads").
func (r *request) eventQuery() (search.EventQuery, error) {
	b := r.bag
	q := search.EventQuery{Lang: r.lang, Statuses: r.visibleStatuses(), ExcludeHidden: true, Sort: search.ByStart}
	loc := r.s.cfg.Location
	now := r.s.now()
	strict := truthy(b.values["strict_dates"])
	bound := func(name string, startOfDay bool) (int64, bool, error) {
		v, ok := b.get(name)
		if !ok {
			return 0, false, nil
		}
		s, _ := asString(v)
		t, err := parseDateInRange(s, loc, now, r.lang)
		if err != nil {
			return 0, false, invalidValue(name, r.dateProblem(s, loc), v)
		}
		if !strict {
			if startOfDay {
				t = midnight(t)
			} else {
				t = endOfDay(t)
			}
		}
		return t.Unix(), true, nil
	}
	if v, ok := b.get("include"); ok {
		// include keeps the start-date order of every event list (the
		// original's live answers do, whatever reference 4.4 reads).
		q.IDs, _ = asIntList(v)
	} else {
		relative := b.has("starts_before") || b.has("starts_after") || b.has("ends_before") || b.has("ends_after")
		explicit := b.has("start_date") || b.has("end_date")
		if v, ok, err := bound("start_date", true); err != nil {
			return q, err
		} else if ok {
			q.StartGTE = search.Some(v)
		} else if !relative || explicit {
			q.StartGTE = search.Some(midnight(now.In(loc)).Unix())
		}
		if v, ok, err := bound("end_date", false); err != nil {
			return q, err
		} else if ok {
			q.EndLTE = search.Some(v)
		} else if !relative || explicit {
			q.EndLTE = search.Some(endOfDay(now.In(loc).AddDate(2, 0, 0)).Unix())
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
	if v, ok := b.get("search"); ok {
		q.Query, _ = asString(v)
		if r.user == nil {
			// Protected text must not be probed word by word (decisions.md).
			q.ExcludeProtected = true
		}
	}
	// The validators resolved categories and tags (existingTermRefs).
	q.CategoryIDs = r.termIDs[repository.TaxCategory]
	q.TagIDs = r.termIDs[repository.TaxTag]
	if v, ok := b.get("venue"); ok {
		q.VenueIDs, _ = asIntList(v)
	}
	if v, ok := b.get("organizer"); ok {
		q.OrganizerIDs, _ = asIntList(v)
	}
	for name, dst := range map[string]*search.Opt[bool]{"featured": &q.Featured, "ticketed": &q.Ticketed, "geoloc": &q.HasGeo} {
		if v, ok := b.get(name); ok {
			bv, _ := asBool(v)
			*dst = search.Some(bv)
		}
	}
	_, hasLat := b.get("geoloc_lat")
	_, hasLng := b.get("geoloc_lng")
	switch {
	case hasLat && hasLng:
		lat, _ := asFloat(b.values["geoloc_lat"])
		lng, _ := asFloat(b.values["geoloc_lng"])
		radius, _ := asFloat(b.values["geoloc_radius"])
		radius = min(radius, limits.MaxRadiusKm)
		q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: lng}, RadiusKm: radius})
	case hasLat:
		return q, invalidParam("geoloc_lng", "geoloc_lng is required with geoloc_lat.")
	case hasLng:
		return q, invalidParam("geoloc_lat", "geoloc_lat is required with geoloc_lng.")
	}
	if v, ok := b.get("post_parent"); ok {
		id, _ := asInt(v)
		q.ParentID = search.Some(id)
	}
	r.applyCollapseSeries(&q)
	return q, nil
}

// listEvents serves GET /events from the search index (as an iCalendar
// feed when the client prefers text/calendar).
func (s *Server) listEvents(r *request) error {
	if wantsCalendar(r.c) {
		return s.listEventFeed(r)
	}
	page, perPage := r.listPage()
	var items []any
	q, res, err := s.eventPage(r, page, perPage, func(_ *repository.Post, o *obj) { items = append(items, o) })
	if err != nil {
		return err
	}
	if items == nil {
		items = []any{}
	}
	facets, err := s.eventFacets(r, q, res)
	if err != nil {
		return err
	}
	if facets != nil {
		return r.sendList("events", items, res.Total, page, perPage, "facets", facetsObject(facets))
	}
	return r.sendList("events", items, res.Total, page, perPage)
}

// eventPage runs the request's event query (with its text-search
// arguments) for one page and hands each event, rendered for the caller
// (redacted where protected, highlighted when asked), to each in the
// engine's order, with its stored record (the series, for an occurrence).
// A page past the last one is 404. It returns the query
// (for the facets) and the engine's result.
func (s *Server) eventPage(r *request, page, perPage int, each func(*repository.Post, *obj)) (search.EventQuery, search.Result, error) {
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
	res, err := s.searchEvents(r.ctx, listQ)
	if err != nil {
		return q, res, err
	}
	if len(res.IDs) == 0 && page > 1 {
		return q, res, newError(404, "event-archive-page-not-found", "The requested event archive page does not exist")
	}
	var terms []search.Term
	if truthy(r.bag.values["highlight"]) {
		terms = search.ParseQuery(q.Query)
	}
	_, err = r.renderEventHits(res, func(h eventHit, l *linked) *obj {
		p := h.post
		o := s.renderHit(h, l, view{lang: r.lang})
		if !r.unlocks(p) {
			redactEvent(o)
		}
		if terms != nil {
			addHighlight(o, terms)
		}
		each(h.series, o)
		return o
	})
	return q, res, err
}

// searchEvents runs an event query, mapping engine failures to 503.
func (s *Server) searchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	if s.search == nil {
		return search.Result{}, errUnavailable("search")
	}
	if searchMatchesNothing(q.Query) {
		return search.Result{}, nil
	}
	res, err := s.search.SearchEvents(ctx, q)
	if err != nil {
		s.log.Warn("search failed", "err", err)
		return res, errUnavailable("search")
	}
	return res, nil
}

// renderPage loads a page of posts (in the engine's order) with what they
// link to and renders each.
func (r *request) renderPage(ids []int64, render func(*repository.Post, *linked) *obj) ([]any, error) {
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
func (r *request) postsInOrder(ids []int64) ([]*repository.Post, error) {
	m, err := r.s.linkedPosts(r.ctx, ids) // decoded once per write generation (linkcache.go)
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

// redactEvent blanks the protected fields of a password-protected event in
// a list (reference 4.8).
func redactEvent(o *obj) {
	for k, v := range map[string]any{"description": "", "excerpt": "", "image": false, "all_day": nil, "show_map": nil,
		"show_map_link": nil, "hide_from_listings": nil, "sticky": nil, "featured": nil, "ticketed": nil, "cost": "",
		"website": "", "categories": []any{}, "tags": []any{}, "venue": []any{}, "organizer": []any{}, "custom_fields": []any{}} {
		if _, ok := o.get(k); ok {
			o.set(k, v)
		}
	}
	o.set("cost_details", newObj().set("currency_symbol", "").set("currency_position", "").set("currency_code", "").set("values", []any{}))
}

// listPlaces serves GET /venues and /organizers from the search index.
func (s *Server) listPlaces(pt *postType) func(r *request) error {
	kind := search.Venues
	if pt.kind == repository.KindOrganizer {
		kind = search.Organizers
	}
	return func(r *request) error {
		b := r.bag
		q := search.PlaceQuery{Kind: kind, Lang: r.lang, Statuses: r.visibleStatuses()}
		if v, ok := b.get("search"); ok {
			q.Query, _ = asString(v)
		}
		if v, ok := b.get("event"); ok {
			id, _ := asInt(v)
			ev, err := s.store.GetPost(r.ctx, id)
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
		if v, ok := b.get("has_events"); ok {
			q.HasEvents = search.Some(truthy(v))
		}
		if truthy(b.values["only_with_upcoming"]) {
			q.UpcomingAfter = search.Some(s.now().Unix())
			q.UpcomingStatuses = q.Statuses
		}
		page, perPage := r.listPage()
		q.Offset, q.Limit = limits.Offset(int64(page), int64(perPage)), perPage
		if s.search == nil {
			return errUnavailable("search")
		}
		var res search.Result
		var err error
		if !searchMatchesNothing(q.Query) {
			res, err = s.search.SearchPlaces(r.ctx, q)
		}
		if err != nil {
			s.log.Warn("search failed", "err", err)
			return errUnavailable("search")
		}
		if len(res.IDs) == 0 && page > 1 {
			return newError(404, pt.res+"-archive-page-not-found", "The requested "+pt.res+" archive page does not exist")
		}
		items, err := r.renderPage(res.IDs, func(p *repository.Post, l *linked) *obj {
			// p is the linked-record cache's record: kept renderings apply.
			return s.linkedPlace(p, l, view{lang: r.lang}, kind == search.Venues)
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
func (r *request) sendList(key string, items []any, total, page, perPage int, extra ...any) error {
	pages := 0
	if total > 0 {
		pages = (total + perPage - 1) / perPage
	}
	base := r.s.apiBase(r.lang) + "/" + key + "/"
	o := newObj().set(key, items)
	o.set("rest_url", r.pageURL(base, page, true))
	if page < pages {
		o.set("next_rest_url", r.pageURL(base, page+1, false))
	}
	if page > 1 && page-1 <= pages {
		o.set("previous_rest_url", r.pageURL(base, page-1, false))
	}
	o.set("total", total).set("total_pages", pages)
	for i := 0; i+1 < len(extra); i += 2 {
		o.set(extra[i].(string), extra[i+1])
	}
	setTotals(r, total, pages)
	setPageLinks(r, o)
	return sendJSON(r.c, 200, o)
}

// linkOrder is the order of parameters in list links (reference 4.6), then
// everything else the client sent, alphabetically.
var linkOrder = []string{"page", "per_page", "start_date", "end_date", "search", "geoloc", "geoloc_lat", "geoloc_lng",
	"geoloc_radius", "status", "post_parent", "include", "starts_before", "starts_after", "ends_before", "ends_after",
	"ticketed", "venue", "organizer", "featured", "categories", "tags", "strict_dates", "event", "has_events",
	"only_with_upcoming", "multilang_language"}

// pageURL builds a list link carrying every parameter the client sent,
// URL-encoded; rest_url keeps page in its place, next/previous put it last
// and omit page 1.
func (r *request) pageURL(base string, page int, self bool) string {
	sent := map[string]string{}
	for k := range r.c.Queries() {
		if k == "page" || k == "_method" || k == "password" {
			continue
		}
		name := strings.TrimSuffix(k, "[]")
		if v, ok := r.bag.get(name); ok {
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
			s, _ := asString(x)
			parts = append(parts, s)
		}
		return strings.Join(parts, ",")
	}
	s, _ := asString(v)
	return s
}
