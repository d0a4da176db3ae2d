// Package searchtest is the conformance suite of search.Engine, written once
// and run against every engine (Bleve always; Meilisearch when a test server
// is configured).
//
// It follows Gitea's modules/indexer/issues/internal/tests: the data is
// generated (Generate, a fixed seed), the expected result of every query is
// computed from that data by the reference semantics in this package
// (MatchEvent, MatchPlace, ExpectedEvents, ExpectedPlaces), and visibility
// after a write is awaited by polling with a deadline, never by sleeping, so
// asynchronous engines pass as soon as they have caught up.
package searchtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
)

// The suite's fixture sizes and seed.
const (
	fixtureSeed       = 20250101
	fixtureEvents     = 300
	fixtureVenues     = 40
	fixtureOrganizers = 25
	indexBatchSize    = 100
)

// pollEvery is the pause between two checks of a poll. A poll has no time
// budget of its own: it gives up only shortly before go test's -timeout
// (testdeadline), so a busy machine slows the suite down without failing it.
const pollEvery = 20 * time.Millisecond

// Run checks an engine against the reference semantics. newEngine must
// return a new, empty engine on every call (its own temporary directory or
// index prefix); Run calls Init on it and closes it when the test ends.
func Run(t *testing.T, newEngine func(t *testing.T) search.Engine) {
	f := Generate(fixtureSeed, fixtureEvents, fixtureVenues, fixtureOrganizers)
	e := openEngine(t, newEngine)
	indexAll(t, e, f.Events, f.Places())

	t.Run("EventQueries", func(t *testing.T) { runEventCases(t, e, f.Events, eventCases(f)) })
	t.Run("PlaceQueries", func(t *testing.T) { runPlaceCases(t, e, f.Places(), placeCases(f)) })
	t.Run("Relevance", func(t *testing.T) { testRelevance(t, e, f) })
	t.Run("RelevanceOrder", func(t *testing.T) { testRelevanceOrder(t, openEngine(t, newEngine)) })
	t.Run("Facets", func(t *testing.T) { testFacets(t, e, f) })
	t.Run("Counts", func(t *testing.T) { testCounts(t, e, f) })
	t.Run("PingAndInit", func(t *testing.T) {
		if err := e.Ping(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		// Init reconciles settings; a second call on a live engine must be
		// harmless and must keep the data.
		if err := e.Init(t.Context()); err != nil {
			t.Fatalf("second Init: %v", err)
		}
		testCounts(t, e, f)
	})
	t.Run("EmptyBatches", func(t *testing.T) { testEmptyBatches(t, openEngine(t, newEngine)) })
	t.Run("ReindexReplaces", func(t *testing.T) { testReindex(t, openEngine(t, newEngine), f) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, openEngine(t, newEngine), f) })
	t.Run("LargeTotals", func(t *testing.T) { testLargeTotals(t, openEngine(t, newEngine)) })
	t.Run("NearEdges", func(t *testing.T) { RunNearEdges(t, newEngine) })
	t.Run("SingleLanguage", func(t *testing.T) { testSingleLanguage(t, openEngine(t, newEngine)) })
	t.Run("Series", func(t *testing.T) { RunSeries(t, newEngine) })
	t.Run("PositionLimit", func(t *testing.T) { testPositionLimit(t, openEngine(t, newEngine)) })
}

// openEngine gets a fresh engine, initialises it and closes it at the end
// of t.
func openEngine(t *testing.T, newEngine func(t *testing.T) search.Engine) search.Engine {
	t.Helper()
	e := newEngine(t)
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return e
}

// indexAll indexes the documents in batches (places of both kinds mixed in
// one batch) and waits until the engine counts them all.
func indexAll(t *testing.T, e search.Engine, events []search.EventDocument, places []search.PlaceDocument) {
	t.Helper()
	ctx := t.Context()
	for chunk := range slices.Chunk(events, indexBatchSize) {
		if err := e.IndexEvents(ctx, chunk); err != nil {
			t.Fatalf("IndexEvents: %v", err)
		}
	}
	for chunk := range slices.Chunk(places, indexBatchSize) {
		if err := e.IndexPlaces(ctx, chunk); err != nil {
			t.Fatalf("IndexPlaces: %v", err)
		}
	}
	wantCounts(t, e, len(events), countKind(places, search.Venues), countKind(places, search.Organizers))
	// Counting and searching may catch up separately in an asynchronous
	// engine: wait for the searches too.
	eventually(t, func(ctx context.Context) error {
		if err := compare(search.Result{Total: len(events)}, searchEvents(ctx, e, search.EventQuery{})); err != nil {
			return fmt.Errorf("all events: %w", err)
		}
		for _, kind := range []search.PlaceKind{search.Venues, search.Organizers} {
			if err := compare(search.Result{Total: countKind(places, kind)}, searchPlaces(ctx, e, search.PlaceQuery{Kind: kind})); err != nil {
				return fmt.Errorf("all places of kind %s: %w", kind, err)
			}
		}
		return nil
	})
}

// wantCounts polls until the engine's counts are the given ones.
func wantCounts(t *testing.T, e search.Engine, events, venues, organizers int) {
	t.Helper()
	eventually(t, func(ctx context.Context) error {
		n, err := e.CountEvents(ctx)
		if err != nil || n != events {
			return fmt.Errorf("CountEvents = %d, %v; want %d", n, err, events)
		}
		for kind, want := range map[search.PlaceKind]int{search.Venues: venues, search.Organizers: organizers} {
			n, err := e.CountPlaces(ctx, kind)
			if err != nil || n != want {
				return fmt.Errorf("CountPlaces(%s) = %d, %v; want %d", kind, n, err, want)
			}
		}
		return nil
	})
}

func countKind(places []search.PlaceDocument, kind search.PlaceKind) int {
	n := 0
	for _, p := range places {
		if p.Kind == kind {
			n++
		}
	}
	return n
}

// eventually calls check until it returns nil, failing t with check's last
// error when the test's deadline (testdeadline.Of) passes. It is the only
// way the suite waits.
func eventually(t *testing.T, check func(ctx context.Context) error) {
	t.Helper()
	start := time.Now()
	deadline := testdeadline.Of(t)
	for {
		err := check(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not visible after %s: %v", time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting: %v", err)
		case <-time.After(pollEvery):
		}
	}
}

// expectation says what a case's computed result must look like before
// the engine is asked, so that a fixture change cannot quietly turn a case
// into one that checks nothing.
type expectation int

const (
	// some: at least one match and at least one non-match.
	some expectation = iota
	// none: no match at all.
	none
	// all: every document of the kind matches.
	all
	// any: no check (random combinations).
	any
)

func (x expectation) check(total, of int) error {
	ok := true
	switch x {
	case some:
		ok = total > 0 && total < of
	case none:
		ok = total == 0
	case all:
		ok = total == of
	}
	if !ok {
		return fmt.Errorf("fixtures do not exercise the case: %d of %d documents match", total, of)
	}
	return nil
}

type eventCase struct {
	name   string
	q      search.EventQuery
	expect expectation
	// paged cases run with their own Offset and Limit; the others run
	// twice: whole (checking the full order) and as a middle page.
	paged bool
}

type placeCase struct {
	name   string
	q      search.PlaceQuery
	expect expectation
	paged  bool
}

// wholeLimit is a limit above every result of the suite's static table.
const wholeLimit = 10000

func runEventCases(t *testing.T, e search.Engine, docs []search.EventDocument, cases []eventCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := ExpectedEvents(docs, withEventPage(c.q, 0, wholeLimit))
			if err := c.expect.check(full.Total, len(docs)); err != nil {
				t.Fatal(err)
			}
			pages := [][2]int{{c.q.Offset, c.q.Limit}}
			if !c.paged {
				pages = [][2]int{{0, wholeLimit}, {3, 5}}
			}
			for _, p := range pages {
				q := withEventPage(c.q, p[0], p[1])
				if err := compare(ExpectedEvents(docs, q), searchEvents(t.Context(), e, q)); err != nil {
					t.Errorf("offset %d limit %d: %v\nquery: %+v", p[0], p[1], err, q)
				}
			}
		})
	}
}

func runPlaceCases(t *testing.T, e search.Engine, docs []search.PlaceDocument, cases []placeCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := ExpectedPlaces(docs, withPlacePage(c.q, 0, wholeLimit))
			if err := c.expect.check(full.Total, countKind(docs, c.q.Kind)); err != nil {
				t.Fatal(err)
			}
			pages := [][2]int{{c.q.Offset, c.q.Limit}}
			if !c.paged {
				pages = [][2]int{{0, wholeLimit}, {2, 3}}
			}
			for _, p := range pages {
				q := withPlacePage(c.q, p[0], p[1])
				if err := compare(ExpectedPlaces(docs, q), searchPlaces(t.Context(), e, q)); err != nil {
					t.Errorf("offset %d limit %d: %v\nquery: %+v", p[0], p[1], err, q)
				}
			}
		})
	}
}

func withEventPage(q search.EventQuery, offset, limit int) search.EventQuery {
	q.Offset, q.Limit = offset, limit
	return q
}

func withPlacePage(q search.PlaceQuery, offset, limit int) search.PlaceQuery {
	q.Offset, q.Limit = offset, limit
	return q
}

// searchResult carries an engine's answer or its error to compare.
type searchResult struct {
	search.Result
	err error
}

func searchEvents(ctx context.Context, e search.Engine, q search.EventQuery) searchResult {
	r, err := e.SearchEvents(ctx, q)
	return searchResult{r, err}
}

func searchPlaces(ctx context.Context, e search.Engine, q search.PlaceQuery) searchResult {
	r, err := e.SearchPlaces(ctx, q)
	return searchResult{r, err}
}

// compare reports how got differs from want: the total exactly, and the
// IDs in order (an empty page may be nil or empty).
func compare(want search.Result, got searchResult) error {
	if got.err != nil {
		return fmt.Errorf("search failed: %w", got.err)
	}
	if got.Total != want.Total {
		return fmt.Errorf("total %d, want %d (IDs %v, want %v)", got.Total, want.Total, clip(got.IDs), clip(want.IDs))
	}
	if !slices.Equal(got.IDs, want.IDs) && !(len(got.IDs) == 0 && len(want.IDs) == 0) {
		i := 0
		for i < min(len(got.IDs), len(want.IDs)) && got.IDs[i] == want.IDs[i] {
			i++
		}
		return fmt.Errorf("IDs differ from position %d: got %d IDs %v, want %d IDs %v",
			i, len(got.IDs), clip(got.IDs[i:]), len(want.IDs), clip(want.IDs[i:]))
	}
	if len(got.Occurrences) > len(got.IDs) {
		return fmt.Errorf("%d occurrence keys for %d IDs", len(got.Occurrences), len(got.IDs))
	}
	for i := range want.IDs {
		if g, w := got.Occurrence(i), want.Occurrence(i); g != w {
			return fmt.Errorf("occurrence at position %d (ID %d) = %q, want %q", i, want.IDs[i], g, w)
		}
	}
	return nil
}

func clip(ids []int64) []int64 { return ids[:min(len(ids), 12)] }

// eventCases is the table of event queries over the fixtures. Values that
// must sit exactly on a boundary (a start, an end, a distance) are read
// from the fixtures, so the table stays right when the generator changes.
func eventCases(f *Fixtures) []eventCase {
	const lang = "en"
	q := func(mod func(q *search.EventQuery)) search.EventQuery {
		out := search.EventQuery{Lang: lang}
		mod(&out)
		return out
	}
	ev := f.Events
	const day = 86400
	start := mostCommon(ev, func(d search.EventDocument) int64 { return d.Start })
	end := ev[len(ev)/2].End
	parent := mostCommon(ev, func(d search.EventDocument) int64 { return d.ParentID }, 0)
	venue := mostCommon(ev, func(d search.EventDocument) int64 { return firstOr(d.VenueIDs) }, 0)
	organizer := mostCommon(ev, func(d search.EventDocument) int64 { return firstOr(d.OrganizerIDs) }, 0)
	amsterdam, paris, berlin := f.Cities[0], f.Cities[1], f.Cities[2]
	edge := nthDistance(ev, paris, 5)
	window := func(q *search.EventQuery) {
		q.Statuses = []string{"publish"}
		q.StartGTE = search.Some(f.Now)
		q.EndLTE = search.Some(f.Now + 2*365*day - 1)
		q.ExcludeHidden = true
	}
	publishTotal := ExpectedEvents(ev, q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })).Total

	cases := []eventCase{
		{name: "no filter", q: q(func(*search.EventQuery) {}), expect: all},
		{name: "status publish", q: q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })},
		{name: "statuses draft or pending", q: q(func(q *search.EventQuery) { q.Statuses = []string{"draft", "pending"} })},
		{name: "status unknown", q: q(func(q *search.EventQuery) { q.Statuses = []string{"trash"} }), expect: none},
		{name: "ids with a missing one", q: q(func(q *search.EventQuery) { q.IDs = []int64{ev[3].ID, ev[40].ID, ev[41].ID, ev[250].ID, 1} })},
		{name: "one category", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{3} })},
		{name: "two categories", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{2, 7} })},
		{name: "unknown category", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{99} }), expect: none},
		{name: "one tag", q: q(func(q *search.EventQuery) { q.TagIDs = []int64{12} })},
		{name: "two tags", q: q(func(q *search.EventQuery) { q.TagIDs = []int64{14, 19} })},
		{name: "category and tag", q: q(func(q *search.EventQuery) { q.CategoryIDs, q.TagIDs = []int64{1, 2}, []int64{15} })},
		{name: "one venue", q: q(func(q *search.EventQuery) { q.VenueIDs = []int64{venue} })},
		{name: "two venues", q: q(func(q *search.EventQuery) { q.VenueIDs = []int64{venue, f.Venues[4].ID} })},
		{name: "one organizer", q: q(func(q *search.EventQuery) { q.OrganizerIDs = []int64{organizer} })},
		{name: "organizers and venue", q: q(func(q *search.EventQuery) {
			q.OrganizerIDs, q.VenueIDs = []int64{f.Organizers[0].ID, f.Organizers[1].ID, f.Organizers[2].ID}, []int64{venue, f.Venues[1].ID, f.Venues[2].ID}
		})},
		{name: "featured", q: q(func(q *search.EventQuery) { q.Featured = search.Some(true) })},
		{name: "not featured", q: q(func(q *search.EventQuery) { q.Featured = search.Some(false) })},
		{name: "ticketed", q: q(func(q *search.EventQuery) { q.Ticketed = search.Some(true) })},
		{name: "not ticketed", q: q(func(q *search.EventQuery) { q.Ticketed = search.Some(false) })},
		{name: "has geo", q: q(func(q *search.EventQuery) { q.HasGeo = search.Some(true) })},
		{name: "has no geo", q: q(func(q *search.EventQuery) { q.HasGeo = search.Some(false) })},
		{name: "parent", q: q(func(q *search.EventQuery) { q.ParentID = search.Some(parent) })},
		{name: "parent zero", q: q(func(q *search.EventQuery) { q.ParentID = search.Some(int64(0)) })},
		{name: "exclude hidden", q: q(func(q *search.EventQuery) { q.ExcludeHidden = true })},
		{name: "exclude protected", q: q(func(q *search.EventQuery) { q.ExcludeProtected = true })},
		{name: "exclude hidden and protected", q: q(func(q *search.EventQuery) { q.ExcludeHidden, q.ExcludeProtected = true, true })},

		// Bounds sit exactly on a value that several events share.
		{name: "start on or after boundary", q: q(func(q *search.EventQuery) { q.StartGTE = search.Some(start) })},
		{name: "start after boundary", q: q(func(q *search.EventQuery) { q.StartGT = search.Some(start) })},
		{name: "start before boundary", q: q(func(q *search.EventQuery) { q.StartLT = search.Some(start) })},
		{name: "end on or before boundary", q: q(func(q *search.EventQuery) { q.EndLTE = search.Some(end) })},
		{name: "end before boundary", q: q(func(q *search.EventQuery) { q.EndLT = search.Some(end) })},
		{name: "end after boundary", q: q(func(q *search.EventQuery) { q.EndGT = search.Some(end) })},
		{name: "start window on one value", q: q(func(q *search.EventQuery) { q.StartGTE, q.StartLT = search.Some(start), search.Some(start+1) })},
		{name: "empty start window", q: q(func(q *search.EventQuery) { q.StartGT, q.StartLT = search.Some(start), search.Some(start+1) }), expect: none},
		{name: "starts between", q: q(func(q *search.EventQuery) {
			q.StartGT, q.StartLT = search.Some(f.Now-30*day), search.Some(f.Now+60*day)
		})},
		{name: "running in a month", q: q(func(q *search.EventQuery) { q.StartLT, q.EndGT = search.Some(f.Now+30*day), search.Some(f.Now+2*day) })},
		{name: "inside one year", q: q(func(q *search.EventQuery) { q.StartGTE, q.EndLTE = search.Some(f.Now), search.Some(f.Now+365*day) })},
		{name: "negative bounds", q: q(func(q *search.EventQuery) { q.StartGT, q.EndLT = search.Some(int64(-86400)), search.Some(int64(0)) }), expect: none},
		{name: "default list window", q: q(window)},
		{name: "typical list", q: q(func(q *search.EventQuery) {
			window(q)
			q.CategoryIDs, q.Featured = []int64{3}, search.Some(false)
		})},
		{name: "include by publish date", q: q(func(q *search.EventQuery) {
			q.IDs, q.Sort = []int64{ev[1].ID, ev[10].ID, ev[100].ID, ev[200].ID, ev[299].ID, ev[150].ID}, search.ByPublishDate
		})},
		{name: "all by publish date", q: q(func(q *search.EventQuery) { q.Sort = search.ByPublishDate }), expect: all},
		{name: "publish by publish date", q: q(func(q *search.EventQuery) { q.Statuses, q.Sort = []string{"publish"}, search.ByPublishDate })},

		// Geo: the reference is search.GeoCircle.Contains (Meilisearch's rule).
		{name: "near paris 10 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: 10}) })},
		{name: "near amsterdam 25 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: amsterdam, RadiusKm: 25}) })},
		{name: "near berlin 1000 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: berlin, RadiusKm: 1000}) })},
		{name: "near paris radius zero", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris}) })},
		{name: "near paris on the edge", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: edge}) })},
		{name: "near paris just inside the edge", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: math.Nextafter(edge, 0)})
		})},
		{name: "near and no geo", q: q(func(q *search.EventQuery) {
			q.Near, q.HasGeo = search.Some(search.GeoCircle{Center: paris, RadiusKm: 50}), search.Some(false)
		}), expect: none},
		{name: "near with filters", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: amsterdam, RadiusKm: 30})
			q.Statuses, q.ExcludeHidden = []string{"publish", "private"}, true
		})},
		{name: "near the middle of nowhere", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: -45, Lng: 170}, RadiusKm: 100})
		}), expect: none},

		// Text: whole words, case-insensitive, in the query's language.
		{name: "text word", q: q(func(q *search.EventQuery) { q.Query = "jazz" })},
		{name: "text capitals and punctuation", q: q(func(q *search.EventQuery) { q.Query = "JAZZ!" })},
		{name: "text two words", q: q(func(q *search.EventQuery) { q.Query = "jazz concert" })},
		{name: "text three words", q: q(func(q *search.EventQuery) { q.Query = "Music, night; festival" })},
		{name: "text hyphenated word", q: q(func(q *search.EventQuery) { q.Query = "open-air" })},
		{name: "text part of a hyphenated word", q: q(func(q *search.EventQuery) { q.Query = "open " }), expect: none},
		{name: "text prefix followed by a space is a word", q: q(func(q *search.EventQuery) { q.Query = "jaz " }), expect: none},
		// search.Words keeps '-' as a word character, so a lone "-" is a
		// word that must appear alone in the text; the case follows
		// whatever Words decides.
		{name: "text lone hyphen", q: q(func(q *search.EventQuery) { q.Query = "-" }), expect: any},
		{name: "text number", q: q(func(q *search.EventQuery) { q.Query = "2025 jazz" })},
		{name: "text accented", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "fr", "café" })},
		{name: "text accented capitals", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "fr", "CAFÉ THÉÂTRE" })},
		{name: "text other language", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "nl", "muziek één" })},
		{name: "text word of another language", q: q(func(q *search.EventQuery) { q.Query = "muziek" }), expect: none},
		{name: "text unknown language", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "de", "jazz" }), expect: none},
		{name: "text no match", q: q(func(q *search.EventQuery) { q.Query = "zzzqqq" }), expect: none},
		{name: "text only punctuation", q: q(func(q *search.EventQuery) { q.Query = " !? ... " }), expect: all},
		{name: "text with filters", q: q(func(q *search.EventQuery) {
			q.Query, q.Statuses, q.Featured = "jazz", []string{"publish"}, search.Some(true)
		})},
		{name: "text with window", q: q(func(q *search.EventQuery) { window(q); q.Query = "concert" })},

		// Paging over a known total.
		{name: "first page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Limit = []string{"publish"}, 8 })},
		{name: "second page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, 8, 8 })},
		{name: "last partial page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, publishTotal-3, 8 })},
		{name: "page just past the end", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, publishTotal, 8 })},
		{name: "page far past the end", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, 100000, 8 })},
		{name: "total only", paged: true, q: q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })},
		{name: "total only with offset", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset = []string{"publish"}, 5 })},
		{name: "limit one", paged: true, q: q(func(q *search.EventQuery) { q.Limit = 1 }), expect: all},
		{name: "page by publish date", paged: true, q: q(func(q *search.EventQuery) { q.Sort, q.Offset, q.Limit = search.ByPublishDate, 5, 10 }), expect: all},
		{name: "total only matching nothing", paged: true, q: q(func(q *search.EventQuery) { q.Query = "zzzqqq" }), expect: none},
	}
	cases = append(cases, textCases(f)...)
	return append(cases, randomEventCases(f, 30)...)
}

// randomEventCases combines 2 to 4 filters drawn from a pool, with a fixed
// seed: combinations nobody would think to write.
func randomEventCases(f *Fixtures, n int) []eventCase {
	r := rand.New(rand.NewPCG(fixtureSeed, 7))
	ev := f.Events
	pool := []func(q *search.EventQuery){
		func(q *search.EventQuery) { q.Statuses = []string{"publish", "future", "private"}[:1+r.IntN(3)] },
		func(q *search.EventQuery) { q.CategoryIDs = []int64{1 + r.Int64N(8)} },
		func(q *search.EventQuery) { q.TagIDs = []int64{11 + r.Int64N(10), 11 + r.Int64N(10)} },
		func(q *search.EventQuery) { q.VenueIDs = []int64{f.Venues[r.IntN(len(f.Venues))].ID} },
		func(q *search.EventQuery) { q.OrganizerIDs = []int64{f.Organizers[r.IntN(len(f.Organizers))].ID} },
		func(q *search.EventQuery) { q.Featured = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.Ticketed = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.HasGeo = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.StartGTE = search.Some(ev[r.IntN(len(ev))].Start) },
		func(q *search.EventQuery) { q.StartLT = search.Some(ev[r.IntN(len(ev))].Start) },
		func(q *search.EventQuery) { q.EndGT = search.Some(ev[r.IntN(len(ev))].End) },
		func(q *search.EventQuery) { q.EndLTE = search.Some(ev[r.IntN(len(ev))].End) },
		func(q *search.EventQuery) { q.ExcludeHidden, q.ExcludeProtected = true, r.IntN(2) == 0 },
		func(q *search.EventQuery) { q.Query = vocabulary["en"][r.IntN(len(vocabulary["en"]))] },
		func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: f.Cities[r.IntN(len(f.Cities))], RadiusKm: 5 + 40*r.Float64()})
		},
		func(q *search.EventQuery) { q.Sort = search.ByPublishDate },
	}
	var cases []eventCase
	for i := range n {
		q := search.EventQuery{Lang: "en"}
		for _, j := range r.Perm(len(pool))[:2+r.IntN(3)] {
			pool[j](&q)
		}
		cases = append(cases, eventCase{name: fmt.Sprintf("random %02d", i), q: q, expect: any})
	}
	return cases
}

// placeCases is the table of venue and organizer queries over the fixtures.
func placeCases(f *Fixtures) []placeCase {
	venue := func(mod func(q *search.PlaceQuery)) search.PlaceQuery {
		out := search.PlaceQuery{Kind: search.Venues, Lang: "en"}
		mod(&out)
		return out
	}
	organizer := func(mod func(q *search.PlaceQuery)) search.PlaceQuery {
		out := search.PlaceQuery{Kind: search.Organizers, Lang: "en"}
		mod(&out)
		return out
	}
	// A boundary exactly on one venue's latest published start.
	var lastPublished int64
	for _, v := range f.Venues {
		if s, ok := v.LastStart["publish"]; ok && s > f.Now {
			lastPublished = s
			break
		}
	}
	allStatuses := []string{"publish", "future", "draft", "pending", "private"}
	venuesTotal := countKind(f.Places(), search.Venues)
	return []placeCase{
		{name: "all venues", q: venue(func(*search.PlaceQuery) {}), expect: all},
		{name: "all organizers", q: organizer(func(*search.PlaceQuery) {}), expect: all},
		{name: "published venues", q: venue(func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} })},
		{name: "draft or private organizers", q: organizer(func(q *search.PlaceQuery) { q.Statuses = []string{"draft", "private"} })},
		{name: "venue ids with an organizer's", q: venue(func(q *search.PlaceQuery) {
			q.IDs = []int64{f.Venues[0].ID, f.Venues[7].ID, f.Venues[8].ID, f.Organizers[0].ID}
		})},
		{name: "venues with events", q: venue(func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) })},
		{name: "venues without events", q: venue(func(q *search.PlaceQuery) { q.HasEvents = search.Some(false) })},
		{name: "organizers with events", q: organizer(func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) })},
		{name: "upcoming published", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now), []string{"publish"}
		})},
		{name: "upcoming any status", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now), allStatuses
		})},
		{name: "upcoming on the boundary", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(lastPublished), []string{"publish"}
		})},
		{name: "upcoming just past the boundary", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(lastPublished+1), []string{"publish"}
		})},
		{name: "upcoming with no statuses", q: venue(func(q *search.PlaceQuery) { q.UpcomingAfter = search.Some(f.Now) }), expect: none},
		{name: "upcoming organizers", q: organizer(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now+300*86400), []string{"publish", "private"}
		})},

		// Text: all words in one field (title, description, excerpt in the
		// language, or one of the other fields).
		{name: "text in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "temple" })},
		{name: "text prefix in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "templ" })},
		{name: "text typo in the city", q: venue(func(q *search.PlaceQuery) { q.Query = "amsterdma " })},
		{name: "text typo and prefix in one field", q: venue(func(q *search.PlaceQuery) { q.Query = "tmeple ave" })},
		{name: "text folded province", q: venue(func(q *search.PlaceQuery) { q.Query = "ILE-DE-FRANCE" })},
		{name: "text two words in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "Temple avenue" })},
		{name: "text hyphenated street", q: venue(func(q *search.PlaceQuery) { q.Query = "saint-michel" })},
		{name: "text zip", q: venue(func(q *search.PlaceQuery) { q.Query = "75003" })},
		{name: "text city", q: venue(func(q *search.PlaceQuery) { q.Query = "AMSTERDAM" })},
		{name: "text words split over two fields", q: venue(func(q *search.PlaceQuery) { q.Query = "jazz amsterdam" }), expect: none},
		{name: "text in the name", q: venue(func(q *search.PlaceQuery) { q.Lang, q.Query = "fr", "CLUB" })},
		{name: "text in the description", q: venue(func(q *search.PlaceQuery) { q.Lang, q.Query = "nl", "muziek" })},
		{name: "text province", q: venue(func(q *search.PlaceQuery) { q.Query = "île-de-france" })},
		{name: "text with filters", q: venue(func(q *search.PlaceQuery) {
			q.Query, q.Statuses, q.HasEvents = "temple", []string{"publish"}, search.Some(true)
		})},
		{name: "organizer email", q: organizer(func(q *search.PlaceQuery) { q.Query = "info example" })},
		{name: "organizer website", q: organizer(func(q *search.PlaceQuery) { q.Query = "https events" }), expect: all},
		{name: "organizer text no match", q: organizer(func(q *search.PlaceQuery) { q.Query = "avenue" }), expect: none},

		{name: "venues first page", paged: true, q: venue(func(q *search.PlaceQuery) { q.Limit = 8 }), expect: all},
		{name: "venues last partial page", paged: true, q: venue(func(q *search.PlaceQuery) { q.Offset, q.Limit = venuesTotal-2, 8 }), expect: all},
		{name: "venues past the end", paged: true, q: venue(func(q *search.PlaceQuery) { q.Offset, q.Limit = venuesTotal, 8 }), expect: all},
		{name: "venues total only", paged: true, q: venue(func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} })},
		{name: "organizers middle page", paged: true, q: organizer(func(q *search.PlaceQuery) { q.Offset, q.Limit = 5, 5 }), expect: all},
	}
}

// mostCommon returns the most frequent key of docs (the smallest on ties),
// ignoring the skip values.
func mostCommon(docs []search.EventDocument, key func(search.EventDocument) int64, skip ...int64) int64 {
	counts := map[int64]int{}
	for _, d := range docs {
		if k := key(d); !slices.Contains(skip, k) {
			counts[k]++
		}
	}
	best, bestN := int64(0), 0
	for k, n := range counts {
		if n > bestN || n == bestN && k < best {
			best, bestN = k, n
		}
	}
	return best
}

func firstOr(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[0]
}

// nthDistance returns the n-th smallest distance from center to an event
// point, so that a radius can sit exactly on a document.
func nthDistance(docs []search.EventDocument, center search.GeoPoint, n int) float64 {
	var ds []float64
	for _, d := range docs {
		if d.HasGeo && d.Geo != nil {
			if km := search.DistanceKm(*d.Geo, center); km > 0 {
				ds = append(ds, km)
			}
		}
	}
	slices.Sort(ds)
	ds = slices.Compact(ds)
	return ds[min(n, len(ds)-1)]
}

func testCounts(t *testing.T, e search.Engine, f *Fixtures) {
	ctx := t.Context()
	if n, err := e.CountEvents(ctx); err != nil || n != len(f.Events) {
		t.Errorf("CountEvents = %d, %v; want %d", n, err, len(f.Events))
	}
	if n, err := e.CountPlaces(ctx, search.Venues); err != nil || n != len(f.Venues) {
		t.Errorf("CountPlaces(venue) = %d, %v; want %d", n, err, len(f.Venues))
	}
	if n, err := e.CountPlaces(ctx, search.Organizers); err != nil || n != len(f.Organizers) {
		t.Errorf("CountPlaces(organizer) = %d, %v; want %d", n, err, len(f.Organizers))
	}
}

func testEmptyBatches(t *testing.T, e search.Engine) {
	ctx := t.Context()
	for name, err := range map[string]error{
		"IndexEvents(nil)":       e.IndexEvents(ctx, nil),
		"IndexEvents(empty)":     e.IndexEvents(ctx, []search.EventDocument{}),
		"IndexPlaces(nil)":       e.IndexPlaces(ctx, nil),
		"DeleteEvents(nil)":      e.DeleteEvents(ctx, nil),
		"DeletePlaces(nil)":      e.DeletePlaces(ctx, search.Venues, nil),
		"DeleteEvents(missing)":  e.DeleteEvents(ctx, []int64{424242}),
		"DeletePlaces(missing)":  e.DeletePlaces(ctx, search.Organizers, []int64{424242}),
		"DeletePlaces(missing2)": e.DeletePlaces(ctx, search.Venues, []int64{424242}),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	wantCounts(t, e, 0, 0, 0)
	if err := compare(search.Result{}, searchEvents(ctx, e, search.EventQuery{Limit: 8})); err != nil {
		t.Errorf("search of an empty index: %v", err)
	}
	if err := compare(search.Result{}, searchPlaces(ctx, e, search.PlaceQuery{Kind: search.Venues, Query: "temple", Limit: 8})); err != nil {
		t.Errorf("place search of an empty index: %v", err)
	}
}

// model is what an engine should hold after a series of writes; queries
// are checked against it with the reference functions.
type model struct {
	events map[int64]search.EventDocument
	places map[int64]search.PlaceDocument
}

func newModel(events []search.EventDocument, places []search.PlaceDocument) *model {
	m := &model{events: map[int64]search.EventDocument{}, places: map[int64]search.PlaceDocument{}}
	for _, d := range events {
		m.events[d.ID] = d
	}
	for _, d := range places {
		m.places[d.ID] = d
	}
	return m
}

func (m *model) eventList() []search.EventDocument {
	out := make([]search.EventDocument, 0, len(m.events))
	for _, d := range m.events {
		out = append(out, d)
	}
	return out
}

func (m *model) placeList() []search.PlaceDocument {
	out := make([]search.PlaceDocument, 0, len(m.places))
	for _, d := range m.places {
		out = append(out, d)
	}
	return out
}

// agree polls until every query gives the model's expected result.
func (m *model) agree(t *testing.T, e search.Engine, events []search.EventQuery, places []search.PlaceQuery) {
	t.Helper()
	wantCounts(t, e, len(m.events), countKind(m.placeList(), search.Venues), countKind(m.placeList(), search.Organizers))
	eventually(t, func(ctx context.Context) error {
		for _, q := range events {
			if err := compare(ExpectedEvents(m.eventList(), q), searchEvents(ctx, e, q)); err != nil {
				return fmt.Errorf("%w\nquery: %+v", err, q)
			}
		}
		for _, q := range places {
			if err := compare(ExpectedPlaces(m.placeList(), q), searchPlaces(ctx, e, q)); err != nil {
				return fmt.Errorf("%w\nquery: %+v", err, q)
			}
		}
		return nil
	})
}

// mutationQueries are the queries that see every change testReindex makes.
func mutationQueries(f *Fixtures) ([]search.EventQuery, []search.PlaceQuery) {
	all := search.EventQuery{Lang: "en", Limit: wholeLimit}
	with := func(mod func(q *search.EventQuery)) search.EventQuery {
		q := all
		mod(&q)
		return q
	}
	events := []search.EventQuery{
		all,
		with(func(q *search.EventQuery) { q.Sort = search.ByPublishDate }),
		with(func(q *search.EventQuery) { q.Featured = search.Some(true) }),
		with(func(q *search.EventQuery) { q.Statuses = []string{"publish"} }),
		with(func(q *search.EventQuery) { q.Query = "zeppelin" }),
		with(func(q *search.EventQuery) { q.Query = "jazz" }),
		with(func(q *search.EventQuery) { q.CategoryIDs = []int64{8} }),
		with(func(q *search.EventQuery) { q.HasGeo = search.Some(false) }),
		with(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: f.Cities[2], RadiusKm: 5}) }),
		with(func(q *search.EventQuery) { q.StartGTE = search.Some(f.Now + 300*86400) }),
	}
	allPlaces := search.PlaceQuery{Kind: search.Venues, Lang: "en", Limit: wholeLimit}
	withPlace := func(mod func(q *search.PlaceQuery)) search.PlaceQuery {
		q := allPlaces
		mod(&q)
		return q
	}
	places := []search.PlaceQuery{
		allPlaces,
		withPlace(func(q *search.PlaceQuery) { q.Kind = search.Organizers }),
		withPlace(func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} }),
		withPlace(func(q *search.PlaceQuery) { q.Query = "rotterdam" }),
		withPlace(func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) }),
	}
	return events, places
}

func testReindex(t *testing.T, e search.Engine, f *Fixtures) {
	ctx := t.Context()
	events := slices.Clone(f.Events[:60])
	m := newModel(events, f.Places())
	indexAll(t, e, events, f.Places())
	eq, pq := mutationQueries(f)
	m.agree(t, e, eq, pq)

	// Change one field or several in a few documents, then index only
	// those: each change moves its document between results.
	berlin := f.Cities[2]
	changed := []search.EventDocument{}
	change := func(i int, mod func(d *search.EventDocument)) {
		d := cloneEvent(events[i])
		mod(&d)
		m.events[d.ID] = d
		changed = append(changed, d)
	}
	change(0, func(d *search.EventDocument) {
		d.Featured = !d.Featured
		d.Text["en"] = search.Text{Title: "Zeppelin night"}
	})
	change(1, func(d *search.EventDocument) { d.Status, d.CategoryIDs = "draft", []int64{8} })
	change(2, func(d *search.EventDocument) { d.Geo, d.HasGeo = &berlin, true })
	change(3, func(d *search.EventDocument) { d.Geo, d.HasGeo = nil, false })
	change(4, func(d *search.EventDocument) { d.Start, d.End = f.Now+400*86400, f.Now+401*86400 })
	change(5, func(d *search.EventDocument) { d.PublishDate = 0 })
	if err := e.IndexEvents(ctx, changed); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}

	v := f.Venues[3]
	v.Fields = map[string]string{"city": "Rotterdam"}
	v.Status, v.HasEvents = "draft", !v.HasEvents
	m.places[v.ID] = v
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{v}); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
	m.agree(t, e, eq, pq)

	// The moves themselves, stated plainly.
	r, err := e.SearchEvents(ctx, search.EventQuery{Lang: "en", Query: "zeppelin", Limit: 8})
	if err != nil || r.Total != 1 || len(r.IDs) != 1 || r.IDs[0] != events[0].ID {
		t.Errorf("after re-indexing, \"zeppelin\" = %+v, %v; want only %d", r, err, events[0].ID)
	}
}

func cloneEvent(d search.EventDocument) search.EventDocument {
	text := make(map[string]search.Text, len(d.Text))
	for k, v := range d.Text {
		text[k] = v
	}
	d.Text = text
	return d
}

func testDelete(t *testing.T, e search.Engine, f *Fixtures) {
	ctx := t.Context()
	events := f.Events[:60]
	m := newModel(events, f.Places())
	indexAll(t, e, events, f.Places())
	eq, pq := mutationQueries(f)
	m.agree(t, e, eq, pq)

	gone := []int64{events[0].ID, events[10].ID, events[59].ID, 999999}
	for _, id := range gone {
		delete(m.events, id)
	}
	if err := e.DeleteEvents(ctx, gone); err != nil {
		t.Fatalf("DeleteEvents: %v", err)
	}
	// Deleting an organizer's ID through the venue index must not touch
	// the organizer.
	goneVenues := []int64{f.Venues[0].ID, f.Venues[5].ID, f.Organizers[0].ID}
	delete(m.places, f.Venues[0].ID)
	delete(m.places, f.Venues[5].ID)
	if err := e.DeletePlaces(ctx, search.Venues, goneVenues); err != nil {
		t.Fatalf("DeletePlaces: %v", err)
	}
	m.agree(t, e, eq, pq)

	// Deleting again is not an error.
	if err := e.DeleteEvents(ctx, gone); err != nil {
		t.Errorf("DeleteEvents again: %v", err)
	}
}

// testLargeTotals indexes 1,500 small events: totals and deep pages must be
// exact past 1,000 (Meilisearch's default maxTotalHits).
func testLargeTotals(t *testing.T, e search.Engine) {
	const n = 1500
	events := make([]search.EventDocument, n)
	for i := range events {
		start := FixtureNow + int64(i/3)*3600 // three events share each start
		status := "publish"
		if i%4 == 0 {
			status = "draft"
		}
		events[i] = search.EventDocument{
			ID: int64(i + 1), Status: status, PublishDate: FixtureNow - int64(i%50)*86400,
			Start: start, End: start + 3600, Featured: i%2 == 0,
			CategoryIDs: []int64{int64(i%5 + 1)}, TagIDs: []int64{}, VenueIDs: []int64{}, OrganizerIDs: []int64{},
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("Session %d", i%7)}},
		}
	}
	m := newModel(events, nil)
	indexAll(t, e, events, nil)
	q := func(mod func(q *search.EventQuery)) search.EventQuery {
		out := search.EventQuery{Lang: "en", Limit: 8}
		mod(&out)
		return out
	}
	m.agree(t, e, []search.EventQuery{
		q(func(*search.EventQuery) {}),
		q(func(q *search.EventQuery) { q.Limit = 0 }),
		q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} }),
		q(func(q *search.EventQuery) { q.Statuses, q.Featured = []string{"publish"}, search.Some(true) }),
		q(func(q *search.EventQuery) { q.Offset, q.Limit = 1495, 10 }),
		q(func(q *search.EventQuery) { q.Offset, q.Limit = 998, 5 }),
		q(func(q *search.EventQuery) { q.Offset, q.Limit = 1200, 50 }),
		q(func(q *search.EventQuery) { q.StartGTE = search.Some(FixtureNow + 100*3600) }),
		q(func(q *search.EventQuery) { q.Query = "session" }),
		q(func(q *search.EventQuery) { q.Query, q.CategoryIDs = "session 3", []int64{2, 4} }),
		q(func(q *search.EventQuery) { q.Sort, q.Offset, q.Limit = search.ByPublishDate, 1100, 20 }),
		q(func(q *search.EventQuery) { q.Limit = n }),
	}, nil)
}
