package searchtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// This file checks the writes: counts, empty batches, reindexing and
// deleting against a model of what the engine should hold, and totals
// past a page.

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

// agree checks that every query gives the model's expected result.
func (m *model) agree(t *testing.T, e search.Engine, events []search.EventQuery, places []search.PlaceQuery) {
	t.Helper()
	wantCounts(t, e, len(m.events), countKind(m.placeList(), search.Venues), countKind(m.placeList(), search.Organizers))
	expect(t, func(ctx context.Context) error {
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
	events := variants(all,
		func(q *search.EventQuery) { q.Sort = search.ByPublishDate },
		func(q *search.EventQuery) { q.Featured = search.Some(true) },
		func(q *search.EventQuery) { q.Statuses = []string{"publish"} },
		func(q *search.EventQuery) { q.Query = "zeppelin" },
		func(q *search.EventQuery) { q.Query = "jazz" },
		func(q *search.EventQuery) { q.CategoryIDs = []int64{8} },
		func(q *search.EventQuery) { q.HasGeo = search.Some(false) },
		func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: f.Cities[2], RadiusKm: 5}) },
		func(q *search.EventQuery) { q.StartGTE = search.Some(f.Now + 300*86400) },
	)
	allPlaces := search.PlaceQuery{Kind: search.Venues, Lang: "en", Limit: wholeLimit}
	places := variants(allPlaces,
		func(q *search.PlaceQuery) { q.Kind = search.Organizers },
		func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} },
		func(q *search.PlaceQuery) { q.Query = "rotterdam" },
		func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) },
	)
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
