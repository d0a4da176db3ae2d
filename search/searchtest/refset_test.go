package searchtest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestReferenceIsExpectedEvents checks that a Reference answers every
// query of the suite's cases (eventCases over generated fixtures with
// series), each as drawn and with one of the start bounds in turn (on
// and between the documents' starts, at the extremes, crossed),
// collapsed or not, with facets
// and pages, as ExpectedEvents and ExpectedFacets do over the documents
// in their own order.
func TestReferenceIsExpectedEvents(t *testing.T) {
	f := WithSeries(Generate(fixtureSeed, 300, 20, 10))
	docs := f.Events
	t.Logf("%d documents, %d cases", len(docs), len(eventCases(f)))
	ref := NewReference(docs)
	if ref.Len() != len(docs) {
		t.Fatalf("Len %d, want %d", ref.Len(), len(docs))
	}
	r := rand.New(rand.NewPCG(1, 2))
	start := func() int64 { return docs[r.IntN(len(docs))].Start + int64(r.IntN(3)-1) }
	bounds := []struct {
		name string
		set  func(q *search.EventQuery)
	}{
		{"as drawn", func(q *search.EventQuery) {}},
		{"from a start on", func(q *search.EventQuery) { q.StartGTE = search.Some(start()) }},
		{"after a start", func(q *search.EventQuery) { q.StartGT = search.Some(start()) }},
		{"before a start", func(q *search.EventQuery) { q.StartLT = search.Some(start()) }},
		{"between starts", func(q *search.EventQuery) {
			q.StartGTE, q.StartGT, q.StartLT = search.Some(start()), search.Some(start()), search.Some(start())
		}},
		{"extremes", func(q *search.EventQuery) {
			q.StartGT, q.StartLT = search.Some(int64(math.MinInt64)), search.Some(int64(math.MaxInt64))
		}},
		{"after all", func(q *search.EventQuery) { q.StartGT = search.Some(int64(math.MaxInt64)) }},
		{"before all", func(q *search.EventQuery) { q.StartLT = search.Some(int64(math.MinInt64)) }},
	}
	checked := 0
	for i, c := range eventCases(f) {
		// Each case as drawn and with one of the other bounds in turn.
		for _, b := range []int{0, 1 + i%(len(bounds)-1)} {
			b := bounds[b]
			q := c.q
			b.set(&q)
			q.CollapseSeries = r.IntN(3) == 0
			if r.IntN(3) == 0 {
				q.Facets = search.EventFacets[:1+r.IntN(len(search.EventFacets))]
			}
			q.Offset, q.Limit = r.IntN(20), r.IntN(30)
			got, gotF := ref.EventsAndFacets(q)
			want, wantF := ExpectedEvents(docs, q), ExpectedFacets(docs, q)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotF, wantF) {
				t.Fatalf("%s, %s %+v:\n got %+v %v\nwant %+v %v", c.name, b.name, q, got, gotF, want, wantF)
			}
			if e := ref.Events(q); !reflect.DeepEqual(e, want) {
				t.Fatalf("%s, %s %+v: Events %+v, want %+v", c.name, b.name, q, e, want)
			}
			if want.Total > 0 {
				checked++
			}
		}
	}
	if checked < 150 {
		t.Errorf("only %d queries matched anything", checked)
	}
}
