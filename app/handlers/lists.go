package handlers

import (
	"context"
	"errors"
	"fmt"
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

// defaultRadiusKm is geoloc_radius's default (decisions.md).
const defaultRadiusKm = 25.0

// pageArgs declares page and per_page.
func pageArgs() []Arg {
	return []Arg{
		{Name: "page", Type: tInteger, Default: "1", Check: positiveInt, Desc: "Page of results (from 1)."},
		{Name: "per_page", Type: tInteger, Default: "8", Check: positiveInt, Desc: "Results per page; larger values are clamped to 50."},
	}
}

// eventListArgs declares the parameters of GET /events (interface 4.2.1).
func (pt *posts) eventListArgs() []Arg {
	date := func(name, desc string) Arg {
		return Arg{Name: name, Type: tString, Check: isTime, Format: "date-time", Desc: desc}
	}
	return append(append(pageArgs(),
		date("start_date", "Events that start on or after this date (default: today 00:00 in the site zone)."),
		date("end_date", "Events that end on or before this date (default: two years after today, 23:59:59)."),
		date("starts_before", "Events starting before this date."),
		date("starts_after", "Events starting after this date."),
		date("ends_before", "Events ending before this date."),
		date("ends_after", "Events ending after this date."),
		Arg{Name: "strict_dates", Type: tString, Default: "false", Check: nonEmptyString, Desc: "true: dates apply at the exact times given; otherwise whole days are included."},
		Arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must match the title, description or excerpt, accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		Arg{Name: "categories", Type: tArray, Items: tString, Check: pt.existingTermRefs(repository.TaxCategory), Desc: "Category IDs or slugs (any of them; children included).", MaxItems: limits.MaxListItems},
		Arg{Name: "tags", Type: tArray, Items: tString, Check: pt.existingTermRefs(repository.TaxTag), Desc: "Tag IDs or slugs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "venue", Type: tArray, Items: tInteger, Check: pt.existingPosts(repository.KindVenue), Desc: "Venue IDs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "organizer", Type: tArray, Items: tInteger, Check: pt.existingPosts(repository.KindOrganizer), Desc: "Organizer IDs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "featured", Type: tBoolean, Desc: "Only featured (true) or only not featured (false) events."},
		Arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
		Arg{Name: "geoloc", Type: tBoolean, Desc: "Events whose venue has (true) or lacks (false) a geo point."},
		Arg{Name: "geoloc_lat", Type: tNumber, Check: checkLatLng(90), Desc: "Latitude of the centre; needs geoloc_lng."},
		Arg{Name: "geoloc_lng", Type: tNumber, Check: checkLatLng(180), Desc: "Longitude of the centre; needs geoloc_lat."},
		Arg{Name: "geoloc_radius", Type: tNumber, Default: "25", Check: positiveNumber, Desc: "Radius around the centre in kilometres."},
		Arg{Name: "include", Type: tArray, Items: tInteger, Check: positiveIntList, Desc: "Only these event IDs; date filters are ignored.", MaxItems: limits.MaxListItems},
		Arg{Name: "post_parent", Type: tInteger, Check: existingEvent, Desc: "Children of this event."},
		Arg{Name: "ticketed", Type: tBoolean, Desc: "Events with (true) or without (false) tickets."},
		Arg{Name: "password", Type: tString, Desc: "Shows protected fields of events with this password."},
		Arg{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected fields to callers who may edit the event."},
	), textSearchArgs()...)
}

// placeListArgs declares the parameters of GET /venues and /organizers.
func (pt *posts) placeListArgs() []Arg {
	return append(pageArgs(),
		Arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must all match one field (name, description, address or contact fields), accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		Arg{Name: "event", Type: tInteger, Check: existingEvent, Desc: "Items linked to this event."},
		Arg{Name: "has_events", Type: tAny, Desc: "Truthy: items with events (not draft or pending); falsy: items without."},
		Arg{Name: "only_with_upcoming", Type: tAny, Default: "false", Desc: "Truthy: items with an event starting now or later."},
		Arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
	)
}

// positiveNumber accepts a number greater than zero.
func positiveNumber(_ *Request, v any) string {
	f, ok := input.AsFloat(v)
	if !ok || f <= 0 {
		return "Must be a number greater than 0."
	}
	return ""
}

// positiveIntList accepts a CSV or list of positive whole numbers.
func positiveIntList(_ *Request, v any) string {
	if ids, ok := input.AsIntList(v); !ok || len(ids) == 0 {
		return "Must be one or more IDs (whole numbers of 1 or more), comma-separated or as a list."
	}
	return ""
}

// checkStatusList accepts registered statuses; callers who may not edit
// posts may only ask for exactly publish (reference 4.5).
func checkStatusList(r *Request, v any) string {
	items := input.AsList(v)
	statuses := strings.Join(repository.Statuses, ", ")
	if len(items) == 0 {
		return "Must be one or more of " + statuses + "."
	}
	for _, it := range items {
		s, _ := input.AsString(it)
		if !repository.IsStatus(s) {
			return "Must be one or more of " + statuses + "; " + strconv.Quote(s) + " is none of them."
		}
		if !access.CanCreatePosts(r.user) && s != repository.StatusPublish {
			return "Must be publish: only callers who may create events may list other statuses."
		}
	}
	return ""
}

// existingPosts checks a list of IDs of existing posts of a kind.
func (pt *posts) existingPosts(kind repository.PostKind) func(r *Request, v any) string {
	return func(r *Request, v any) string {
		return existingIDs(r, v, string(kind), pt.store.GetPosts, func(p *repository.Post) bool { return p.Kind == kind })
	}
}

// existingIDs checks that v is a list of positive IDs of what ("venue")
// that fetch finds and that fits accepts; it returns "" or the message for
// data.params. A store failure is kept in r.depErr (a 503).
func existingIDs[T any](r *Request, v any, what string, fetch func(context.Context, []int64) (map[int64]T, error), fits func(T) bool) string {
	if msg := idListProblem(v, what); msg != "" {
		return msg
	}
	ids, _ := input.AsIntList(v)
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
	items := input.AsList(v)
	if len(items) == 0 {
		return "Must be one or more " + what + " IDs, comma-separated or as a list."
	}
	for _, it := range items {
		if n, ok := input.AsInt(it); !ok || n <= 0 {
			shown, _ := input.AsString(it)
			if _, scalar := input.AsString(it); !scalar {
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
func (pt *posts) existingTermRefs(tax repository.Taxonomy) func(r *Request, v any) string {
	return func(r *Request, v any) string {
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
func (r *Request) resolveTermRefs(tax repository.Taxonomy, v any) ([]int64, error) {
	items := input.AsList(v)
	if len(items) == 0 {
		return nil, unknownTermError{}
	}
	var ids []int64
	for _, it := range items {
		sv, _ := input.AsString(it)
		t, err := r.findTerm(tax, sv)
		if err != nil {
			return nil, err
		}
		if t == nil {
			if n, ok := input.AsInt(it); ok {
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
func (r *Request) listPage() (page, perPage int) {
	p, _ := input.AsInt(r.bag.Values["page"])
	pp, _ := input.AsInt(r.bag.Values["per_page"])
	return int(p), int(min(pp, maxPerPage))
}

// visibleStatuses returns the statuses a list shows: the ones asked for,
// else every non-trashed status for callers who may edit posts, else
// publish (reference 4.5).
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

// eventQuery turns the request into an engine query (reference 4.2-4.5,
// decisions.md "Reads").
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
		// original's live answers do, whatever reference 4.4 reads).
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
			// Protected text must not be probed word by word (decisions.md).
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
	return q, nil
}

// listEvents serves GET /events from the search index (as an iCalendar
// feed when the client prefers text/calendar).
func (pt *posts) listEvents(r *Request) error {
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
// engine's order. A page past the last one is 404. It returns the query
// (for the facets) and the engine's result.
func (pt *posts) eventPage(r *Request, page, perPage int, each func(*repository.Post, *present.Obj)) (search.EventQuery, search.Result, error) {
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
	_, err = r.renderPage(res.IDs, func(p *repository.Post, l *present.Linked) *present.Obj {
		o := pt.render.ListedEvent(p, l, present.View{Lang: r.lang})
		if !r.unlocks(p) {
			present.RedactEvent(o)
		}
		if terms != nil {
			present.AddHighlight(o, terms)
		}
		each(p, o)
		return o
	})
	return q, res, err
}

// searchEvents runs an event query, mapping engine failures to 503.
func (pt *posts) searchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
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
func (pt *posts) listPlaces() func(r *Request) error {
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
	pages := 0
	if total > 0 {
		pages = (total + perPage - 1) / perPage
	}
	base := r.s.render.APIBase(r.lang) + "/" + key + "/"
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

// linkOrder is the order of parameters in list links (reference 4.6), then
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
