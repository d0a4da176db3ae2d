// Package searchtest is the conformance suite of search.Engine, written once
// and run against every engine (the embedded one always; Meilisearch when a
// test server is configured).
//
// It follows Gitea's modules/indexer/issues/internal/tests: the data is
// generated (Generate, a fixed seed), the expected result of every query is
// computed from that data by the reference semantics in this package
// (MatchEvent, MatchPlace, ExpectedEvents, ExpectedPlaces). An engine has
// applied a write when the call returns (search.Engine), so every answer is
// checked once, as soon as the writes before it have returned: a wrong one
// fails at once instead of being polled for until go test's -timeout.
package searchtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

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
	t.Run("Hyphens", func(t *testing.T) { testHyphens(t, openEngine(t, newEngine)) })
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
	t.Run("Languages", func(t *testing.T) { RunLanguages(t, newEngine) })
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
// one batch) and checks that the engine counts them all.
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
	// The searches see every document too.
	expect(t, func(ctx context.Context) error {
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

// wantCounts checks that the engine's counts are the given ones.
func wantCounts(t *testing.T, e search.Engine, events, venues, organizers int) {
	t.Helper()
	expect(t, func(ctx context.Context) error {
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

// expect fails t with check's error. Every engine has applied a write
// when the call returns (search.Engine), so what the engine answers after
// the writes is final: a wrong answer is reported at once, not polled for
// until go test's -timeout (it never turns right by waiting). check gets a
// context that ends at the test's deadline (testdeadline), so an engine
// that does not answer fails the test before go test stops the binary.
func expect(t *testing.T, check func(ctx context.Context) error) {
	t.Helper()
	if err := check(testdeadline.Context(t)); err != nil {
		t.Fatal(err)
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
			// The reference's matches, once for every page.
			hits := ExpectedHits(docs, c.q)
			if err := c.expect.check(len(hits), len(docs)); err != nil {
				t.Fatal(err)
			}
			pages := [][2]int{{c.q.Offset, c.q.Limit}}
			if !c.paged {
				pages = [][2]int{{0, wholeLimit}, {3, 5}}
			}
			for _, p := range pages {
				q := withEventPage(c.q, p[0], p[1])
				if err := compare(pageOfHits(hits, p[0], p[1]), searchEvents(t.Context(), e, q)); err != nil {
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

// variants returns base followed by one copy of it changed by each mod:
// the queries of a table that differ from one base query in one way each.
func variants[Q interface{}](base Q, mods ...func(q *Q)) []Q {
	out := []Q{base}
	for _, mod := range mods {
		q := base
		mod(&q)
		out = append(out, q)
	}
	return out
}
