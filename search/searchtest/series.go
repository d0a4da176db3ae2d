package searchtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
)

// This file checks recurring events: a series is indexed as one document
// per occurrence (search.EventDocument.Occurrence), every filter applies to
// each occurrence, totals count occurrences (or, with CollapseSeries, the
// series listed once), and a write of an event's documents replaces all of
// that event's documents.

// OccurrenceKey is the key the suite gives an occurrence starting at the
// local wall-clock time startLocal (written as if UTC, as StartLocal is),
// in the form of the recurrence package's keys.
func OccurrenceKey(startLocal int64) string {
	return time.Unix(startLocal, 0).UTC().Format("20060102T150405")
}

// Occurrences returns the documents of series d: n occurrences, the first
// at d's own dates and each next one step seconds later, all with d's
// other fields.
func Occurrences(d search.EventDocument, n int, step int64) []search.EventDocument {
	out := make([]search.EventDocument, n)
	for i := range out {
		o := d
		shift := int64(i) * step
		o.Start, o.End = d.Start+shift, d.End+shift
		o.StartLocal, o.EndLocal = d.StartLocal+shift, d.EndLocal+shift
		o.Occurrence = OccurrenceKey(o.StartLocal)
		out[i] = o
	}
	return out
}

// WithSeries returns a copy of f whose events hold series: every seventh
// event becomes a series of 2 to 40 occurrences, weekly, daily or every
// four weeks, and some occurrences carry an override (another venue and
// point, a title word, a status, a start moved by an hour or onto another
// occurrence's start, an event status). The single events keep their documents.
func WithSeries(f *Fixtures) *Fixtures {
	out := *f
	out.Events = nil
	const day = 86400
	steps := []int64{7 * day, day, 28 * day}
	berlin := f.Cities[2]
	for i, d := range f.Events {
		if i%7 != 3 {
			out.Events = append(out.Events, d)
			continue
		}
		n := 2 + (i*13)%39
		step := steps[(i/7)%len(steps)]
		occs := Occurrences(d, n, step)
		for k := range occs {
			o := &occs[k]
			switch {
			case k == 1 && n > 4:
				// An override: another venue and point, and a word.
				o.VenueIDs, o.Geo, o.HasGeo = []int64{f.Venues[2].ID}, &berlin, true
				o.Text = cloneEvent(*o).Text
				t := o.Text["en"]
				t.Title += " zeppelin"
				o.Text["en"] = t
			case k == 2 && n > 6:
				o.Start, o.End = o.Start+3600, o.End+3600 // moved by an hour
				o.StartLocal, o.EndLocal = o.StartLocal+3600, o.EndLocal+3600
			case k == 3 && n > 8 && i%2 == 1:
				o.Status = "private" // one occurrence of another status
			case k == 4 && n > 8:
				// Moved onto the next occurrence's start: the key decides.
				o.Start, o.End = occs[k].Start+step, occs[k].End+step
			case k == 5 && n > 10:
				o.EventStatus = "canceled" // one occurrence cancelled, still listed
			}
		}
		out.Events = append(out.Events, occs...)
	}
	return &out
}

// seriesIDs returns the IDs of the events that have occurrences.
func seriesIDs(docs []search.EventDocument) []int64 {
	var ids []int64
	for _, d := range docs {
		if d.Occurrence != "" && !slices.Contains(ids, d.ID) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// RunSeries is the recurring-events part of the suite (Run runs it). It
// writes and reads events only, so an event index without places (such
// as search/memindex behind a small adapter) can run it alone.
func RunSeries(t *testing.T, newEngine func(t *testing.T) search.Engine) {
	base := Generate(fixtureSeed, fixtureEvents, fixtureVenues, fixtureOrganizers)
	f := WithSeries(base)
	e := openEngine(t, newEngine)
	if err := e.IndexEvents(t.Context(), f.Events); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	loaded := seriesModel{}
	for _, d := range f.Events {
		loaded[d.ID] = append(loaded[d.ID], d)
	}
	loaded.agree(t, e, []search.EventQuery{{Limit: 10}})

	cases := eventCases(f)
	t.Run("Queries", func(t *testing.T) { runEventCases(t, e, f.Events, cases) })
	t.Run("Collapsed", func(t *testing.T) {
		var collapsed []eventCase
		for _, c := range cases {
			c.q.CollapseSeries = true
			if c.expect == all {
				c.expect = any // the series count once
			}
			collapsed = append(collapsed, c)
		}
		runEventCases(t, e, f.Events, collapsed)
	})
	t.Run("Facets", func(t *testing.T) { testFacets(t, e, f) })
	t.Run("CollapsedFacets", func(t *testing.T) {
		q := search.EventQuery{Lang: "en", Facets: search.EventFacets, CollapseSeries: true, Limit: 5}
		for _, statuses := range [][]string{nil, {"publish"}} {
			q.Statuses = statuses
			got, err := e.SearchEvents(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if err := compare(ExpectedEvents(f.Events, q), searchResult{got, nil}); err != nil {
				t.Error(err)
			}
			if want := ExpectedFacets(f.Events, q); !sameFacets(got.Facets, want) {
				t.Errorf("statuses %v: facets %v, want %v", statuses, got.Facets, want)
			}
		}
	})
	t.Run("PagingAcrossOccurrences", func(t *testing.T) { testSeriesPaging(t, e, f) })
	t.Run("Replace", func(t *testing.T) { testSeriesReplace(t, openEngine(t, newEngine), base) })
}

// sameFacets compares facet counts, a missing facet map and an empty one
// being the same.
func sameFacets(got, want map[string]map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for f, w := range want {
		g := got[f]
		if len(g) != len(w) {
			return false
		}
		for v, n := range w {
			if g[v] != n {
				return false
			}
		}
	}
	return true
}

// testSeriesPaging walks whole results page by page, with and without
// CollapseSeries: no occurrence may be lost or repeated across pages, and
// every page must be the reference's.
func testSeriesPaging(t *testing.T, e search.Engine, f *Fixtures) {
	window := search.EventQuery{Lang: "en", Statuses: []string{"publish", "private"}, StartGTE: search.Some(f.Now - 60*86400)}
	text := window
	text.Query = "concert"
	near := window
	near.Near = search.Some(search.GeoCircle{Center: f.Cities[2], RadiusKm: 50})
	ids := window
	ids.IDs = seriesIDs(f.Events)[:4]
	for name, q := range map[string]search.EventQuery{"window": window, "text": text, "near": near, "ids": ids} {
		for _, collapse := range []bool{false, true} {
			q.CollapseSeries = collapse
			want := ExpectedEvents(f.Events, withEventPage(q, 0, wholeLimit))
			if least := map[bool]int{false: 10, true: 2}[collapse]; want.Total < least {
				t.Fatalf("%s: fixtures do not exercise the case: %d matches", name, want.Total)
			}
			// Pages of two sizes at ten places spread over the result, the
			// last one past its end.
			for _, size := range []int{7, 25} {
				for i := 0; i <= 10; i++ {
					off := i * (want.Total + size) / 10
					pq := withEventPage(q, off, size)
					if err := compare(ExpectedEvents(f.Events, pq), searchEvents(t.Context(), e, pq)); err != nil {
						t.Errorf("%s collapse=%v offset %d limit %d: %v", name, collapse, off, size, err)
					}
				}
			}
		}
	}
}

// seriesModel is what an engine should hold after writes of whole events:
// the documents of each event ID.
type seriesModel map[int64][]search.EventDocument

func (m seriesModel) docs() []search.EventDocument {
	var out []search.EventDocument
	for _, ds := range m {
		out = append(out, ds...)
	}
	return out
}

// agree checks that the engine counts the model's documents and that
// every query gives the model's expected result.
func (m seriesModel) agree(t *testing.T, e search.Engine, queries []search.EventQuery) {
	t.Helper()
	docs := m.docs()
	expect(t, func(ctx context.Context) error {
		if n, err := e.CountEvents(ctx); err != nil || n != len(docs) {
			return fmt.Errorf("CountEvents = %d, %v; want %d", n, err, len(docs))
		}
		for _, q := range queries {
			if err := compare(ExpectedEvents(docs, q), searchEvents(ctx, e, q)); err != nil {
				return fmt.Errorf("%w\nquery: %+v", err, q)
			}
		}
		return nil
	})
}

// testSeriesReplace writes events as series and singles in turn: a
// series replaced by fewer occurrences, by more, by other keys, a series
// that becomes a single event and back, an occurrence that changes status
// (and so, in Meilisearch, index), and deletes.
func testSeriesReplace(t *testing.T, e search.Engine, f *Fixtures) {
	ctx := t.Context()
	const day = 86400
	m := seriesModel{}
	var initial []search.EventDocument
	for i, d := range f.Events[:40] {
		docs := []search.EventDocument{d}
		if i%3 == 0 {
			docs = Occurrences(d, 5+i%11, 7*day)
		}
		m[d.ID] = docs
		initial = append(initial, docs...)
	}
	write := func(docs ...search.EventDocument) {
		t.Helper()
		for _, d := range docs {
			m[d.ID] = nil
		}
		for _, d := range docs {
			m[d.ID] = append(m[d.ID], d)
		}
		if err := e.IndexEvents(ctx, docs); err != nil {
			t.Fatalf("IndexEvents: %v", err)
		}
	}
	if err := e.IndexEvents(ctx, initial); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	all := search.EventQuery{Lang: "en", Limit: wholeLimit}
	queries := variants(all,
		func(q *search.EventQuery) { q.CollapseSeries = true },
		func(q *search.EventQuery) { q.Statuses = []string{"publish"} },
		func(q *search.EventQuery) { q.Statuses, q.CollapseSeries = []string{"publish"}, true },
		func(q *search.EventQuery) { q.Query = "zeppelin" },
		func(q *search.EventQuery) { q.StartGTE = search.Some(f.Now) },
		func(q *search.EventQuery) { q.Sort = search.ByPublishDate },
		func(q *search.EventQuery) { q.Offset, q.Limit = 10, 9 },
	)
	m.agree(t, e, queries)

	s0, s1, s2, single := f.Events[0], f.Events[3], f.Events[6], f.Events[1]
	zeppelin := func(d search.EventDocument) search.EventDocument {
		d = cloneEvent(d)
		d.Text["en"] = search.Text{Title: "Zeppelin weekly"}
		return d
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"series replaced by fewer occurrences", func() { write(Occurrences(s0, 2, 7*day)...) }},
		{"series replaced by more occurrences with new text", func() { write(Occurrences(zeppelin(s1), 30, 7*day)...) }},
		{"series moved to other keys", func() {
			moved := s2
			moved.Start, moved.StartLocal, moved.End, moved.EndLocal = s2.Start+day, s2.StartLocal+day, s2.End+day, s2.EndLocal+day
			write(Occurrences(moved, 4, day)...)
		}},
		{"series becomes a single event", func() { write(s0) }},
		{"single event becomes a series", func() { write(Occurrences(zeppelin(single), 6, 14*day)...) }},
		{"one occurrence changes status", func() {
			occs := Occurrences(zeppelin(single), 6, 14*day)
			occs[2].Status = "draft"
			occs[4].Status = "publish"
			write(occs...)
		}},
		{"series and single in one batch, others untouched", func() {
			write(append(Occurrences(s0, 3, day), f.Events[2], f.Events[4])...)
		}},
		{"delete a series and a single event", func() {
			ids := []int64{s1.ID, f.Events[2].ID, 999999}
			for _, id := range ids {
				delete(m, id)
			}
			if err := e.DeleteEvents(ctx, ids); err != nil {
				t.Fatalf("DeleteEvents: %v", err)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			m.agree(t, e, queries)
		})
	}
}
